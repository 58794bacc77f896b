#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Crash simulation: trains with the run history on, kills the process with SIGKILL at a random
# moment, then checks that the database passes PRAGMA integrity_check, that the run is marked
# interrupted, and that resuming from its last checkpoint continues the step count in the same run.
# Usage: crash_test.sh PATH_TO_CLI [ITERATIONS]   (CTest runs 3; the stress test runs 20)
set -uo pipefail
cli=${1:?usage: crash_test.sh PATH_TO_CLI [ITERATIONS]}
iterations=${2:-3}
work=$(mktemp -d)
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
db=$work/history/runs.db
failures=0
passes=0
check() {
  local name=$1; shift
  if "$@"; then passes=$((passes + 1)); else echo "FAIL ($iteration): $name"; failures=$((failures + 1)); fi
}

for n in $(seq 1 60); do
  printf 'I see %d dogs.\tIch sehe %d Hunde.\nWe have %d cats.\tWir haben %d Katzen.\n' $n $n $n $n
done > "$work/deu.txt"

for iteration in $(seq 1 "$iterations"); do
  out=$work/run$iteration
  "$cli" train --corpus "$work/deu.txt" --direction de-en --preset tiny --max-steps 1000000 --threads 1 \
    --set data.dev=4 --set train.validate_every=20 --db "$db" --out "$out" > "$work/train$iteration.log" 2>&1 &
  pid=$!
  sleep "$(awk -v r=$RANDOM 'BEGIN { printf "%.2f", 1.0 + 3.0 * r / 32767 }')"
  kill -KILL $pid
  wait $pid 2> /dev/null
  "$cli" runs check --db "$db" > "$work/check$iteration.txt" 2>&1
  check "integrity after SIGKILL" grep -q "integrity ok" "$work/check$iteration.txt"
  id=$(grep -o "run history: run [0-9]*" "$work/train$iteration.log" | grep -o "[0-9]*$")
  if [ -z "$id" ]; then
    continue  # killed before the run was recorded: nothing to resume
  fi
  "$cli" runs show "$id" --db "$db" > "$work/show$iteration.txt" 2>&1
  check "run $id marked interrupted" grep -q "status    interrupted" "$work/show$iteration.txt"
  if [ ! -f "$out/last.ckpt" ]; then
    continue  # killed before the first checkpoint
  fi
  "$cli" train --resume "$out" --extra-steps 10 --threads 1 --db "$db" > "$work/resume$iteration.log" 2>&1
  rc=$?
  start=$(grep -o "resuming at step [0-9]*" "$work/resume$iteration.log" | grep -o "[0-9]*$")
  target=$(( ${start:-0} + 10 ))
  check "resume exits 0" test $rc -eq 0
  check "resume uses the same run" grep -q "run history: run $id " "$work/resume$iteration.log"
  check "resume reaches step $target" grep -q "after $target steps" "$work/resume$iteration.log"
  "$cli" runs show "$id" --db "$db" > "$work/after$iteration.txt" 2>&1
  check "run $id finished after resume" grep -q "status    finished" "$work/after$iteration.txt"
  check "run $id has $target steps" grep -q "steps $target " "$work/after$iteration.txt"
done
"$cli" runs check --db "$db" > /dev/null 2>&1
check "final integrity" test $? -eq 0
echo "$passes passed, $failures failed"
test "$failures" -eq 0
