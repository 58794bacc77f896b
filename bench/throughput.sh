#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Training throughput against the peer, side by side: the Annotated preset (6+6 layers, d 256, ff 1024,
# 8 heads, batches of 64 length-sorted sentences) on cmn.txt English->Chinese, trained by
# transformer-studio-cli and by ../shared/bench/peer_annotated.py (PyTorch eager, same LibTorch), in fp32
# and bf16, then ours as 2 processes x 1 thread (data parallel). Prints target tokens/s, the ratios and
# the model-FLOPs utilisation (MFU): the FLOP rate of the model's matrix products that ours reports at the
# end of training (ts/model/size.h forward_flops, three times for forward and backward, padding left out)
# over this machine's measured rate of one large matrix product in that precision.
#
#   bench/throughput.sh [STEPS] [THREADS]        (defaults 60 and 2)
# Environment: CLI (our binary), CORPUS (default ../shared/data/cmn.txt), SKIP_BF16=1, SKIP_NPROC=1,
# SHAPE="LAYERS D FF HEADS" (both programs at another shape than the Annotated preset's, e.g. the
# default recipe's "2 192 768 4" and "3 256 1024 4"; layers on each side, batches still 64 sentences),
# OURS_ARGS (more options for ours alone, e.g. "--set train.shard_batch=false"), ROUNDS=N (N rounds of
# peer fp32, ours fp32, peer bf16, ours bf16 back to back, each printed, then the medians and the
# median of the rounds' ratios: the VM's speed drifts by 10-20% within minutes), HALF=fp16 (ours trains its
# half-precision rounds in fp16, on a CPU with AVX-512 FP16, instead of bf16; the peer's bf16 rounds are then
# skipped: the peer has no fp16 on a CPU, and the comparison is with its fp32; MFU against the fp32 limit),
# DEVICE=cuda (both programs train on the GPU, the limit is the GPU's 4096^3 product; the peer's bf16
# is CPU autocast only, so on a GPU it runs fp32 alone).
# Ours reports the average over all its steps (start-up included); the peer times STEPS steps after 5
# warm-up steps, so the comparison is conservative for ours.
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${1:-60}
threads=${2:-2}
shared=$(cd .. && pwd)/shared
cli=${CLI:-build/app/cli/transformer-studio-cli}
corpus=${CORPUS:-$shared/data/cmn.txt}
device=${DEVICE:-cpu}
out=${OUT_DIR:-bench/results/throughput}
mkdir -p "$out"
py=${PYTHON:-/usr/bin/python3}
# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_same_blas_as_ours  # the peer multiplies with the kernels ours has
shape_ours=() shape_peer=()
if [ -n "${SHAPE:-}" ]; then
  read -r layers d ff heads <<< "$SHAPE"
  shape_ours=(--set "model.encoder_layers=$layers" --set "model.decoder_layers=$layers" --set "model.d_model=$d"
    --set "model.d_ff=$ff" --set "model.heads=$heads")
  shape_peer=(--layers "$layers" --d "$d" --ff "$ff" --heads "$heads")
fi

ours() {  # ours NAME ARGS... -> tokens/s
  local name=$1; shift
  "$cli" train --corpus "$corpus" --direction en-zh --preset annotated --max-steps "$steps" --device "$device" \
    --set train.validate_every=0 --set data.dev=500 --set data.test=1000 --no-history --out "$out/$name" \
    ${shape_ours[@]+"${shape_ours[@]}"} ${OURS_ARGS:-} "$@" \
    >"$out/$name.log" 2>&1
  rm -rf "${out:?}/$name"  # checkpoints: hundreds of MB each, not needed here
  grep -o '[0-9]* tok/s on average' "$out/$name.log" | tail -1 | cut -d' ' -f1
}
gflops() {  # gflops NAME -> GFLOP/s of the model's matrix products, from ours' log
  grep -o "[0-9.]* GFLOP/s in the model's matrix products" "$out/$1.log" | tail -1 | cut -d' ' -f1
}
peer() {  # peer NAME ARGS... -> tokens/s
  local name=$1; shift
  "$py" "$shared/bench/peer_annotated.py" "$corpus" --char_tgt --threads "$threads" --steps "$steps" --device "$device" \
    ${shape_peer[@]+"${shape_peer[@]}"} "$@" \
    >"$out/$name.log" 2>&1
  "$py" -c 'import json,sys; print(round(json.loads([l for l in open(sys.argv[1]) if l.startswith("{")][0])["tgt_tokens_per_s"]))' "$out/$name.log"
}
limit() {  # limit DTYPE -> GFLOP/s of an n^3 matrix product (n 2048 on $threads CPU threads, 4096 on a GPU)
  "$py" - "$1" "$threads" "$device" <<'PY'
import sys, time, torch
torch.set_num_threads(int(sys.argv[2])); dev = sys.argv[3]; n = 4096 if dev == "cuda" else 2048
sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
dt = getattr(torch, sys.argv[1]); a = torch.randn(n, n, device=dev).to(dt); b = torch.randn(n, n, device=dev).to(dt)
a @ b; sync(); t = time.perf_counter(); k = 20 if dev == "cuda" else 5
for _ in range(k): a @ b
sync(); print(round(2 * n ** 3 * k / (time.perf_counter() - t) / 1e9))
PY
}

[ "$device" = cuda ] && echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores;" \
     "native bf16: $(grep -qw -e amx_bf16 -e avx512_bf16 /proc/cpuinfo && echo yes || echo 'no (bf16 is emulated)');" \
     "OpenBLAS kernels: ${OPENBLAS_CORETYPE:-as OpenBLAS chose them}"
echo "date: $(date -u +%F), steps: $steps, threads: $threads, shape: ${SHAPE:-the Annotated preset (6 256 1024 8)}"
lim32=$(limit float32); lim16=$(limit bfloat16)
echo "matrix product on $device: fp32 $lim32 GFLOP/s, bf16 $lim16 GFLOP/s"
rounds=${ROUNDS:-1}
mfu() { awk -v g="$1" -v l="$2" 'BEGIN { printf "%.1f%% (%.0f GFLOP/s)", 100 * g / l, g }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
all_p32=() all_o32=() all_p16=() all_o16=() r32=() r16=() r16p=() all_m32=() all_m16=()
bf16_cpu=0
[ "${SKIP_BF16:-0}" != 1 ] && [ "$device" != cuda ] && bf16_cpu=1
half=${HALF:-bf16}
fp16_cpu=0
[ "$half" = fp16 ] && [ "$device" != cuda ] && fp16_cpu=1 && bf16_cpu=0
for round in $(seq 1 "$rounds"); do
  [ "$rounds" -gt 1 ] && echo "round $round of $rounds"
  p32=$(peer peer-fp32); o32=$(ours ours-fp32 --threads "$threads" --precision fp32)
  all_m32+=("$(gflops ours-fp32)")
  printf '%-34s %8s tok/s\n' "peer fp32" "$p32"
  printf '%-34s %8s tok/s  %s of peer fp32, MFU %s of fp32 limit\n' "ours fp32" "$o32" "$(ratio "$o32" "$p32")" "$(mfu "$(gflops ours-fp32)" "$lim32")"
  all_p32+=("$p32"); all_o32+=("$o32"); r32+=("$(awk -v a="$o32" -v b="$p32" 'BEGIN { print a / b }')")
  if [ "${SKIP_BF16:-0}" != 1 ] && [ "$device" = cuda ]; then
    o16=$(ours ours-bf16 --threads "$threads" --precision bf16)
    printf '%-34s %8s tok/s  %s of peer fp32, MFU %s of bf16 limit\n' "ours bf16" "$o16" "$(ratio "$o16" "$p32")" "$(mfu "$(gflops ours-bf16)" "$lim16")"
  elif [ "$bf16_cpu" = 1 ]; then
    p16=$(peer peer-bf16 --bf16)
    # The bf16 product's rate just before ours: on a VM whose AMX unit a neighbour shares it moves 2-3x
    # from minute to minute (docs/benchmarks.md), so each round says what it had.
    now16=$(limit bfloat16)
    o16=$(ours ours-bf16 --threads "$threads" --precision bf16)
    printf '%-34s %8s tok/s\n' "peer bf16" "$p16"
    printf '%-34s %8s tok/s  %s of peer fp32, %s of peer bf16, MFU %s of bf16 limit; bf16 product just before: %s GFLOP/s\n' \
      "ours bf16" "$o16" "$(ratio "$o16" "$p32")" "$(ratio "$o16" "$p16")" "$(mfu "$(gflops ours-bf16)" "$lim16")" "$now16"
    all_p16+=("$p16"); all_o16+=("$o16"); all_m16+=("$(gflops ours-bf16)")
    r16+=("$(awk -v a="$o16" -v b="$p32" 'BEGIN { print a / b }')")
    r16p+=("$(awk -v a="$o16" -v b="$p16" 'BEGIN { print a / b }')")
  elif [ "$fp16_cpu" = 1 ]; then
    o16=$(ours ours-fp16 --threads "$threads" --precision fp16)
    printf '%-34s %8s tok/s  %s of peer fp32, MFU %s of fp32 limit\n' "ours fp16" "$o16" "$(ratio "$o16" "$p32")" \
      "$(mfu "$(gflops ours-fp16)" "$lim32")"
    all_o16+=("$o16"); all_m16+=("$(gflops ours-fp16)")
    r16+=("$(awk -v a="$o16" -v b="$p32" 'BEGIN { print a / b }')")
  fi
done
if [ "$rounds" -gt 1 ]; then
  echo "medians of $rounds rounds:"
  printf '%-34s %8s tok/s\n' "peer fp32" "$(median "${all_p32[@]}")"
  printf '%-34s %8s tok/s  median ratio %.2fx of peer fp32 (rounds: %s)\n' "ours fp32" "$(median "${all_o32[@]}")" \
    "$(median "${r32[@]}")" "$(printf '%.2f ' "${r32[@]}")"
  printf '%-34s MFU %s of the fp32 limit (median)\n' "ours fp32" "$(mfu "$(median "${all_m32[@]}")" "$lim32")"
  if [ "$bf16_cpu" = 1 ]; then
    printf '%-34s %8s tok/s\n' "peer bf16" "$(median "${all_p16[@]}")"
    printf '%-34s %8s tok/s  median ratio %.2fx of peer fp32 (rounds: %s), %.2fx of peer bf16\n' "ours bf16" \
      "$(median "${all_o16[@]}")" "$(median "${r16[@]}")" "$(printf '%.2f ' "${r16[@]}")" "$(median "${r16p[@]}")"
    printf '%-34s MFU %s of the bf16 limit (median)\n' "ours bf16" "$(mfu "$(median "${all_m16[@]}")" "$lim16")"
  elif [ "$fp16_cpu" = 1 ]; then
    printf '%-34s %8s tok/s  median ratio %.2fx of peer fp32 (rounds: %s)\n' "ours fp16" "$(median "${all_o16[@]}")" \
      "$(median "${r16[@]}")" "$(printf '%.2f ' "${r16[@]}")"
    printf '%-34s MFU %s of the fp32 limit (median)\n' "ours fp16" "$(mfu "$(median "${all_m16[@]}")" "$lim32")"
  fi
fi
if [ "${SKIP_NPROC:-0}" != 1 ] && [ "$threads" -ge 2 ] && [ "$device" = cpu ]; then
  od=$(ours ours-nproc2 --nproc 2 --threads 1 --precision fp32)
  printf '%-34s %8s tok/s  %s of peer fp32\n' "ours fp32, 2 processes x 1 thread" "$od" "$(ratio "$od" "$p32")"
fi
