#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Time-to-quality benchmark: trains Transformer Studio and the peer (the Annotated-Transformer recipe in
# PyTorch eager Python, ../shared/bench/peer_annotated.py) for the same wall-clock minutes on the same
# corpus and threads, then scores both on 1000 held-out pairs with the independent scorer bleu.py.
#
#   bench/compare_peer.sh cmn|deu [MINUTES] [THREADS] [TRAIN OPTIONS...]
# Results go to bench/results/<corpus>-<minutes>min/ (hypotheses, references, logs, summary.txt).
# Options after THREADS go to our `train` only (e.g. `--set train.warmup=400`); with them, set TAG to
# keep that run apart (results in bench/results/<corpus>-<minutes>min-<TAG>/) and SKIP_PEER=1 to train
# ours alone. SKIP_OURS=1 trains the peer alone.
set -euo pipefail
cd "$(dirname "$0")/.."
which_corpus=${1:?usage: compare_peer.sh cmn|deu [minutes] [threads]}
minutes=${2:-20}
threads=${3:-2}
shift $(( $# < 3 ? $# : 3 ))
extra=("$@")
shared=$(cd .. && pwd)/shared
cli=${CLI:-build/app/cli/transformer-studio-cli}
# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_same_blas_as_ours  # the peer multiplies with the kernels ours has
out=bench/results/${which_corpus}-${minutes}min${TAG:+-$TAG}
mkdir -p "$out"
case "$which_corpus" in
  cmn) corpus=$shared/data/cmn.txt; direction=en-zh; peer_flags=(--char_tgt); zh=(--zh) ;;
  deu) corpus=$shared/data/deu.txt; direction=de-en; peer_flags=(--reverse); zh=() ;;
  *) echo "unknown corpus $which_corpus" >&2; exit 2 ;;
esac

run_ours() {
  "$cli" train --corpus "$corpus" --direction "$direction" --preset annotated --threads "$threads" \
    --max-minutes "$minutes" --set data.test=1000 --set data.dev=500 ${extra[@]+"${extra[@]}"} --out "$out/ours" 2>&1 | tee "$out/ours.log"
  "$cli" eval --checkpoint "$out/ours/best.ckpt" --threads "$threads" --hyp-out "$out/ours.hyp" \
    --ref-out "$out/ours.ref" | tee "$out/ours-eval.txt"
}

run_peer() {
  /usr/bin/python3 "$shared/bench/peer_annotated.py" "$corpus" "${peer_flags[@]}" --threads "$threads" \
    --minutes "$minutes" --test 1000 --out "$out/peer" 2>&1 | tee "$out/peer.log"
}

[ "${SKIP_OURS:-0}" = 1 ] || run_ours
[ "${SKIP_PEER:-0}" = 1 ] || run_peer
{
  echo "corpus $which_corpus ($direction), $minutes minutes, $threads threads, $(date -u +%F)${extra[*]:+, ours with ${extra[*]}}"
  [ ! -f "$out/ours.hyp" ] || echo "ours: $(/usr/bin/python3 "$shared/bench/bleu.py" "$out/ours.hyp" "$out/ours.ref" "${zh[@]}")"
  [ ! -f "$out/peer.hyp" ] || echo "peer: $(/usr/bin/python3 "$shared/bench/bleu.py" "$out/peer.hyp" "$out/peer.ref" "${zh[@]}")"
} | tee "$out/summary.txt"
