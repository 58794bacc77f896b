#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Data-parallel training end to end: `train --nproc 2` on loopback with the real binary.
# Usage: distributed_test.sh PATH_TO_CLI. Exits 77 (skipped) when the build has no c10d Gloo.
set -uo pipefail
cli=${1:?usage: distributed_test.sh PATH_TO_CLI}
source "$(dirname "$0")/test_lib.sh"
# Both ranks' lines in a --parallel-check file: same step, same SHA-256 of the weights.
same_weights() {  # same_weights FILE STEP
  test "$(wc -l < "$1")" -eq 2 && grep -q "^rank 0 of 2 step $2 " "$1" && grep -q "^rank 1 of 2 step $2 " "$1" &&
    test "$(awk '{print $NF}' "$1" | sort -u | wc -l)" -eq 1
}

for n in Hund Katze Haus Buch Auto Baum Ball Tisch; do
  printf 'I see the %s.\tIch sehe %s.\n' "$(echo $n | tr 'A-Z' 'a-z')" "$n" >> "$work/deu.txt"
  printf 'You have the %s.\tDu hast %s.\n' "$(echo $n | tr 'A-Z' 'a-z')" "$n" >> "$work/deu.txt"
done
train=("$cli" train --corpus "$work/deu.txt" --direction de-en --preset tiny --set train.batch_sentences=5)

# Two processes, one thread each; validation every 10 steps (rank 0 only).
"${train[@]}" --nproc 2 --threads 1 --max-steps 20 --set data.dev=2 --set train.validate_every=10 \
  --out "$work/runs/dp" --parallel-check "$work/check.txt" > "$work/train.log" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q "data-parallel training is not available" "$work/train.log"; then
  echo "SKIP: this build has no c10d Gloo support (libgloo-dev)"
  exit 77
fi
check "train --nproc 2 exits 0" test $rc -eq 0
check "data-parallel announced" contains "$work/train.log" "data-parallel: 2 processes (Gloo), 1 thread each"
check "reaches step 20" contains "$work/train.log" "after 20 steps"
check "one summary (rank 1 prints nothing)" test "$(grep -c "after 20 steps" "$work/train.log")" -eq 1
check "no rank errors" lacks "$work/train.log" "rank 1"
check "ranks hold identical weights" same_weights "$work/check.txt" 20
check "best and last checkpoints" test -s "$work/runs/dp/best.ckpt" -a -s "$work/runs/dp/last.ckpt"
check "one run directory" test "$(ls "$work/runs" | wc -l)" -eq 1
check "one config.json" test "$(find "$work" -name config.json | wc -l)" -eq 1
"$cli" runs list > "$work/runs.txt" 2>&1
check "one history row" test "$(grep -c "deu.txt" "$work/runs.txt")" -eq 1

# Resume with two processes: both ranks load the checkpoint and continue in step.
"$cli" train --resume "$work/runs/dp" --nproc 2 --max-steps 30 --parallel-check "$work/check2.txt" > "$work/resume.log" 2>&1
check "resume --nproc 2 exits 0" test $? -eq 0
check "resume starts at step 20" contains "$work/resume.log" "resuming at step 20"
check "resumed ranks identical at step 30" same_weights "$work/check2.txt" 30
"$cli" runs list > "$work/runs.txt" 2>&1
check "resume appends to the same history row" test "$(grep -c "deu.txt" "$work/runs.txt")" -eq 1

# The auto recipe: the ranks time their data-parallel steps together and all size it by rank 0's figure
# for the whole group, so both train the same model.
"$cli" train --corpus "$work/deu.txt" --direction de-en --budget 1 --nproc 2 --threads 1 --max-steps 3 --no-history \
  --out "$work/runs/auto" --parallel-check "$work/check3.txt" > "$work/auto.log" 2>&1
check "auto recipe with --nproc 2 exits 0" test $? -eq 0
check "the recipe's speed is measured across both ranks" contains "$work/auto.log" \
  "measured across the 2 data-parallel ranks together"
check "the recipe names the ranks" contains "$work/auto.log" "2 data-parallel ranks of 1 core each"
check "auto-recipe ranks identical at step 3" same_weights "$work/check3.txt" 3

# A rank that dies fails the run clearly instead of hanging.
start_logged "$work/kill.log" "${train[@]}" --nproc 2 --max-steps 1000000 --no-history --out "$work/killed"
# Once both ranks train: a step is reported only after every rank has taken part in it.
wait_for_line " step [0-9]+ \|"
child=$(pgrep -P $pid | head -1)
# Both ranks catch SIGPIPE: a write to the dead rank's socket must fail and be reported, not end
# the writer silently (bit 13 of the mask of caught signals, SigCgt in /proc/PID/status).
sigpipe_caught() { local mask; mask=$(awk '/^SigCgt:/ {print $2}' "/proc/$1/status") && (((16#$mask >> 12) & 1)); }
check "rank 0 catches SIGPIPE" sigpipe_caught "$pid"
check "rank 1 catches SIGPIPE" sigpipe_caught "${child:-0}"
if [ -n "$child" ]; then kill -9 "$child"; else kill -9 "$pid"; fi  # no child: fail below rather than hang
wait $pid
rc=$?
finish_log
# Exit status 1: rank 0 reported the failure itself; 128 + N would be rank 0 killed by signal N
# (141: SIGPIPE from writing to the dead rank's socket, which named no one).
check "a killed rank fails the run, and rank 0 reports it (status $rc)" test $rc -eq 1
check "the dead rank is named" contains "$work/kill.log" "rank 1 (pid $child) was killed by signal 9"

# A closed output still ends a data-parallel run as SIGPIPE always did (`| head`), ranks and all:
# the handler above lets through a SIGPIPE from our own standard output or error.
"${train[@]}" --nproc 2 --max-steps 1000000 --no-history --out "$work/headed" 2>&1 | head -1 > /dev/null
check "a closed output ends rank 0 by SIGPIPE (status ${PIPESTATUS[0]})" test "${PIPESTATUS[0]}" -eq 141

# Bad combinations name the options.
"${train[@]}" --nproc 2 --rank 1 > "$work/bad1.log" 2>&1
check "--nproc with --rank refused" test $? -eq 2
check "--nproc with --rank explained" contains "$work/bad1.log" "do not combine it with --rank"
"${train[@]}" --world-size 2 --rank 2 > "$work/bad2.log" 2>&1
check "--rank beyond --world-size refused" contains "$work/bad2.log" "--rank 2 must be below --world-size 2"
"${train[@]}" --nproc 2 --master-port 70000 > "$work/bad3.log" 2>&1
check "--master-port out of range refused" contains "$work/bad3.log" "master-port"

echo "$passes passed, $failures failed"
if [ "$failures" -ne 0 ]; then  # what the ranks said, to tell a race from a bug
  for log in "$work"/*.log; do
    echo "== $(basename "$log")"
    tail -n 25 "$log"
  done
fi
test "$failures" -eq 0
