#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Runs a libFuzzer target (tests/fuzz) for a while and prints what it did.
#
#   scripts/fuzz.sh TARGET SECONDS     TARGET: corpus | tokenizers | config | checkpoint (or fuzz_<name>)
#   scripts/fuzz.sh all SECONDS        every target in turn, SECONDS each
#
# Configures and builds the "fuzz" CMake preset (clang, ASan+UBSan, build-fuzz/) when needed, then
# runs the target on a copy of its seed corpus (tests/fuzz/corpus/<name>/ is never written to):
# the working corpus, crash files and logs live in build-fuzz/fuzz-work/<name>/. The working
# corpus is kept between runs (FUZZ_FRESH=1 starts again from the seeds). Prints executions,
# exec/s, coverage (libFuzzer's final cov:/ft:), corpus size and any crash files; exits non-zero
# when the target crashed (or broke an invariant, which it turns into a crash).
#
# Environment: JOBS (build parallelism, default 2), FUZZ_NICE (default 10), FUZZ_FRESH=1,
# FUZZ_ARGS (extra libFuzzer flags, e.g. "-max_len=8192" or "-jobs=2").
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD_DIR=$ROOT/build-fuzz
TARGETS=(corpus tokenizers config checkpoint)

usage() {
  echo "usage: scripts/fuzz.sh TARGET|all SECONDS   (targets: ${TARGETS[*]})" >&2
  exit 2
}
[[ $# -eq 2 ]] || usage
[[ $2 =~ ^[0-9]+$ && $2 -gt 0 ]] || usage
SECONDS_EACH=$2

build() {  # build TARGET...
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT}
  if [[ ! -f $BUILD_DIR/build.ninja ]]; then
    cmake --preset fuzz >/dev/null || { echo "fuzz.sh: cmake --preset fuzz failed" >&2; exit 2; }
  fi
  local targets=()
  for t in "$@"; do targets+=("fuzz_$t"); done
  nice -n "${FUZZ_NICE:-10}" cmake --build "$BUILD_DIR" -j "${JOBS:-2}" --target "${targets[@]}" >"$BUILD_DIR/fuzz-build.log" 2>&1 ||
    { tail -n 40 "$BUILD_DIR/fuzz-build.log" >&2; echo "fuzz.sh: build failed (log: $BUILD_DIR/fuzz-build.log)" >&2; exit 2; }
}

run_one() {  # run_one NAME -> 0 clean, 1 crash
  local name=$1
  local binary=$BUILD_DIR/tests/fuzz/fuzz_$name
  local seeds=$ROOT/tests/fuzz/corpus/$name
  local work=$BUILD_DIR/fuzz-work/$name
  [[ ${FUZZ_FRESH:-0} == 1 ]] && rm -rf "$work/corpus"
  mkdir -p "$work/corpus" "$work/crashes"
  [[ -d $seeds ]] && cp -n "$seeds"/* "$work/corpus/" 2>/dev/null
  local stamp log before
  stamp=$(date -u +%Y%m%dT%H%M%SZ)
  log=$work/run-$stamp.log
  before=$(ls "$work/crashes" | wc -l)
  echo "== fuzz_$name: ${SECONDS_EACH}s on $(nproc) cores, corpus $work/corpus ($(ls "$work/corpus" | wc -l) files)"
  # -timeout: an input slower than 10 s counts as a hang; -rss_limit_mb: one input may not use 4 GB.
  # shellcheck disable=SC2086
  (cd "$work" && nice -n "${FUZZ_NICE:-10}" "$binary" -max_total_time="$SECONDS_EACH" -print_final_stats=1 \
      -timeout=10 -rss_limit_mb=4096 -artifact_prefix="$work/crashes/" ${FUZZ_ARGS:-} "$work/corpus" >"$log" 2>&1)
  local status=$?
  local execs eps cov ft files bytes
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
  eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n1)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -n1 | cut -d' ' -f2)
  ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -n1 | cut -d' ' -f2)
  files=$(ls "$work/corpus" | wc -l)
  bytes=$(du -sb "$work/corpus" | cut -f1)
  echo "   executions: ${execs:-?}   exec/s: ${eps:-?}   cov: ${cov:-?}   ft: ${ft:-?}   corpus: $files files, $bytes bytes"
  echo "   log: $log"
  local after
  after=$(ls "$work/crashes" | wc -l)
  if [[ $status -ne 0 || $after -gt $before ]]; then
    echo "   CRASH (libFuzzer exit $status); crash files:"
    ls -t "$work/crashes" | head -n $((after - before > 0 ? after - before : 5)) | sed "s|^|     $work/crashes/|"
    grep -m1 -E 'ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|runtime error:|invariant broken|terminate called' "$log" | sed 's/^/   /'
    echo "   reproduce: $binary <crash file>"
    return 1
  fi
  echo "   no crash"
  return 0
}

case $1 in
  all) selected=("${TARGETS[@]}") ;;
  *)
    name=${1#fuzz_}
    [[ " ${TARGETS[*]} " == *" $name "* ]] || usage
    selected=("$name")
    ;;
esac
build "${selected[@]}"
failed=0
for name in "${selected[@]}"; do
  run_one "$name" || failed=1
done
exit $failed
