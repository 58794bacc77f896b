# SPDX-License-Identifier: GPL-3.0-or-later
# Shared by the benchmarks (time_to_quality.sh, recipe_grid.sh, translate_speed.sh, translate_kernels.sh…):
# the machine's description, the independent scorer, CPU steal, the split a run used and its dev pairs,
# and one timed `train` command. Source it
# after setting `cli` (the CLI binary) and `shared` (../shared).

# "AMD EPYC, 2 threads, avx2 avx512_bf16 avx512f": the CPU and the flags every figure names, and the
# OpenBLAS kernels where ours chose them (bench_same_blas_as_ours).
bench_cpu() {
  echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $1 threads, $(grep -o -w 'amx_bf16\|avx512_bf16\|avx512f\|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ' | sed 's/ $//')${OPENBLAS_CORETYPE:+, OpenBLAS kernels $OPENBLAS_CORETYPE}"
}

# Ours starts itself again with OPENBLAS_CORETYPE where OpenBLAS does not know the CPU and fell back to
# its generic kernels (ts/host/blas.h; 4-5x slower fp32 products on an Intel Xeon model 207). This
# exports the same for everything else the bench runs (the peer, Python's product timings), so both
# sides multiply with the same kernels. A setting already in the environment is kept.
bench_same_blas_as_ours() {
  [ -n "${OPENBLAS_CORETYPE:-}" ] && return 0
  local core
  core=$("$cli" --version 2> /dev/null | sed -n 's/^BLAS: .*(core \([A-Za-z0-9]*\) set by Transformer Studio.*/\1/p')
  if [ -n "$core" ]; then export OPENBLAS_CORETYPE=$core; fi
  return 0
}

# hyp ref direction -> "BLEU = x ... chrF = y" as ../shared/bench/bleu.py prints it (--zh into Chinese).
bench_score() {
  local zh=()
  case "$3" in *-zh) zh=(--zh) ;; esac
  /usr/bin/python3 "$shared/bench/bleu.py" "$1" "$2" "${zh[@]}"
}
bench_bleu_of() { sed -n 's/.*BLEU[ =:]*\([0-9.]*\).*/\1/p' <<< "$1" | head -1; }
bench_chrf_of() { sed -n 's/.*chrF[^0-9]*\([0-9.]*\).*/\1/p' <<< "$1" | head -1; }

# vmstat log -> mean and maximum CPU steal (%, column st), the first sample (since boot) left out.
bench_steal() {
  awk '$1 ~ /^[0-9]+$/ { n++; if (n > 1) { s += $17; m = ($17 > m ? $17 : m); k++ } }
       END { if (k) printf "%.1f (max %d)", s / k, m; else printf "n/a" }' "$1"
}

# run-directory src ref: the dev pairs as the run dealt them (its split.json), sources into src and
# references into ref, one a line.
bench_dev_pairs() {
  /usr/bin/python3 - "$1/split.json" "$2" "$3" << 'EOF'
import json, sys
pairs = json.load(open(sys.argv[1]))["dev"]
with open(sys.argv[2], "w") as s, open(sys.argv[3], "w") as r:
    for src, tgt in pairs:
        s.write(src.replace("\n", " ") + "\n")
        r.write(tgt.replace("\n", " ") + "\n")
EOF
}

# run-directory -> "grouped a79c90b3cd31 seed 1234" from its split.json ("old split" without one).
bench_split_of() {
  /usr/bin/python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["method"], j["corpus_sha256"][:12], "seed", j["seed"])' \
    "$1/split.json" 2> /dev/null || echo "old split"
}

# out corpus direction budget threads [train options...]: trains into out/run with the log in
# out/train.log and vmstat every 10 s in out/vmstat.log; sets `bench_wall` to the whole command's
# seconds. Returns train's status.
bench_train() {
  local out=$1 corpus=$2 direction=$3 budget=$4 threads=$5 start vm status=0
  shift 5
  rm -rf "$out"
  mkdir -p "$out"
  vmstat 10 > "$out/vmstat.log" &
  vm=$!
  start=$(date +%s.%N)
  "$cli" train --corpus "$shared/data/$corpus.txt" --direction "$direction" --budget "$budget" --threads "$threads" \
    --no-history "$@" --out "$out/run" > "$out/train.log" 2>&1 || status=$?
  bench_wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
  kill "$vm" 2> /dev/null || true
  return "$status"
}
