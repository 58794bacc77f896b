#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Builds a sanitizer preset (CMakePresets.json) and runs its tests.
#
#   scripts/sanitize.sh asan   AddressSanitizer + UndefinedBehaviorSanitizer (LeakSanitizer on):
#                              the whole build (GUI and tests included) in build-asan/, then the
#                              whole CTest suite
#   scripts/sanitize.sh tsan   ThreadSanitizer in build-tsan/: the worker-thread and run-store
#                              tests only (RunStore.*, RunRecorder.*, the ui_* tests)
#
# Not part of the default test run (scripts/build-and-test.sh): a sanitizer build is a second full
# build, several times slower to run. Environment: JOBS (build and ctest parallelism, default 2),
# CTEST_ARGS (extra ctest arguments, e.g. "-R Corpus").
# Exit status: ctest's (non-zero when any test, or any sanitizer report, failed).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
KIND=${1:-}
case $KIND in
  asan | tsan) ;;
  *) echo "usage: scripts/sanitize.sh asan|tsan" >&2; exit 2 ;;
esac
BUILD_DIR=$ROOT/build-$KIND
JOBS=${JOBS:-2}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT}

start=$(date +%s)
if [[ ! -f $BUILD_DIR/build.ninja ]]; then
  cmake --preset "$KIND"
fi
# The build runs test binaries (gtest_discover_tests lists their tests): no leak report there.
ASAN_OPTIONS=detect_leaks=0 cmake --build "$BUILD_DIR" -j "$JOBS"
built=$(date +%s)
echo "sanitize.sh: $KIND build took $((built - start)) s"

# Suppressions for libraries we do not build (they are not instrumented, so what they do is
# either invisible or misreported). Written here so the build directory holds everything a run uses.
cat >"$BUILD_DIR/lsan.supp" <<'SUPP'
# One-time allocations kept for the process lifetime by system libraries.
leak:libfontconfig.so
leak:libQt6Gui.so
leak:libQt6Core.so
leak:libicuuc.so
leak:libtorch_cpu.so
leak:libgomp.so
leak:libopenblas
SUPP
cat >"$BUILD_DIR/tsan.supp" <<'SUPP'
# LibTorch's OpenMP thread pool (libgomp) is not instrumented: its barriers are invisible to TSan.
called_from_lib:libgomp.so
race:libtorch_cpu.so
race:libopenblas
# Qt's own internals (uninstrumented Debian build). QtTest's watchdog thread waits on a condition
# variable that qRun() deletes after joining it inside Qt: TSan sees the wait but not the join.
race:libQt6Core.so
race:libQt6Gui.so
race:libQt6Test.so
# GLib (Qt's event dispatcher) recycles memory between threads under its own futex locks, which
# TSan does not see (uninstrumented).
race:libglib-2.0.so
SUPP

export QT_QPA_PLATFORM=offscreen
# Tests that need SentencePiece beside LibTorch skip on this (see tests/test_utils.h, docs/reliability.md).
export TS_SANITIZER=$KIND
status=0
if [[ $KIND == asan ]]; then
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$BUILD_DIR/lsan.supp:print_suppressions=0}
  # shellcheck disable=SC2086
  ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" --timeout 3600 ${CTEST_ARGS:-} || status=$?
else
  export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$BUILD_DIR/tsan.supp}
  # shellcheck disable=SC2086
  ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" --timeout 3600 \
    -R '^(RunStore\.|RunRecorder\.|ui_)' ${CTEST_ARGS:-} || status=$?
fi
echo "sanitize.sh: $KIND tests took $(($(date +%s) - built)) s, ctest exit $status"
exit $status
