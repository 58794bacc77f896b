#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Fault injection (docs/reliability.md): SIGKILL at exact places, through the TS_FAULT plan
# (tests/support/fault_plan.h, installed by the test build transformer-studio-cli-faults at the
# points of core/include/ts/store/fault.h), then integrity and resume; a full disk while a checkpoint
# is written; NaN losses, stopped or skipped; and the installed program, which has no fault hook,
# unmoved by the same plan.
#
#   fault_test.sh PATH_TO_CLI_FAULTS [KILLS_PER_POINT] [PATH_TO_INSTALLED_CLI]
#   (CTest runs 3 kills per point; the stress test 20)
#
# Also: the history locked at the finish line (store.finish), released, never released, and the
# process killed while it waits.
#
# For each point (validation, checkpoint.write, store.commit) the process is killed at the N-th
# time it reaches the point, N random; runs whose training ended before reaching it are not
# counted. After each kill: the history database passes its integrity check; the last checkpoint, if
# any, loads; `train --resume` continues from it in the same run and finishes; and every metric the
# history held for the steps up to the resumed checkpoint is still there afterwards.
set -uo pipefail
cli=${1:?usage: fault_test.sh PATH_TO_CLI_FAULTS [KILLS_PER_POINT] [PATH_TO_INSTALLED_CLI]}
per_point=${2:-3}
source "$(dirname "$0")/test_lib.sh"
db=$work/history/runs.db

for n in $(seq 1 60); do
  printf 'I see %d dogs.\tIch sehe %d Hunde.\nWe have %d cats.\tWir haben %d Katzen.\n' $n $n $n $n
done > "$work/deu.txt"
train() {  # train OUT STEPS [extra args...]
  local out=$1 steps=$2; shift 2
  "$cli" train --corpus "$work/deu.txt" --direction de-en --preset tiny --max-steps "$steps" --threads 1 \
    --set data.dev=4 --set train.validate_every=5 --set train.keep_last=2 --db "$db" --out "$out" "$@"
}
metrics_upto() {  # metrics_upto RUN_ID STEP: the run's metric rows with step <= STEP, sorted
  "$cli" runs export "$1" --csv --db "$db" 2> /dev/null | awk -F, -v s="$2" 'NR > 1 && $2 <= s' | sort
}

# Roughly how often each point is reached in a 40-step run: 8 validations of 2 points, 3 checkpoints
# each of ~80 blocks, and 1 to 3 history transactions (a new database's schema, and the metrics: the
# recorder commits once a second, and the run is shorter). Many store.commit runs end
# before their N-th commit, hence up to 10 runs per kill.
declare -A max_hits=([validation]=16 [checkpoint.write]=2000 [store.commit]=2)
summary=""
for point in validation checkpoint.write store.commit; do
  killed=0; tries=0
  while [ "$killed" -lt "$per_point" ] && [ "$tries" -lt $((per_point * 10)) ]; do
    tries=$((tries + 1))
    at=$(( RANDOM % ${max_hits[$point]} + 1 ))
    out=$work/$point-$tries
    TS_FAULT="$point:$at" train "$out" 40 > "$out.log" 2>&1
    rc=$?
    [ "$rc" -eq 137 ] || continue  # finished before the point was reached that often
    killed=$((killed + 1))
    name="$point #$at"
    "$cli" runs check --db "$db" > "$out.check" 2>&1
    check "$name: history integrity" grep -q "integrity ok" "$out.check"
    id=$(grep -o "run history: run [0-9]*" "$out.log" | grep -o "[0-9]*$")
    [ -n "$id" ] || continue  # killed before the run was recorded
    [ -f "$out/last.ckpt" ] || continue  # killed before the first checkpoint
    check "$name: the last checkpoint loads" bash -c "echo 'Ich sehe 3 Hunde.' | '$cli' translate --checkpoint '$out/last.ckpt' > /dev/null 2>&1"
    metrics_upto "$id" 999999999 > "$out.before"
    "$cli" train --resume "$out" --extra-steps 3 --threads 1 --db "$db" > "$out.resume" 2>&1
    check "$name: resume exits 0" test $? -eq 0
    start=$(grep -o "resuming at step [0-9]*" "$out.resume" | grep -o "[0-9]*$")
    check "$name: resume continues run $id" grep -q "run history: run $id " "$out.resume"
    check "$name: resume reaches step $(( ${start:-0} + 3 ))" grep -q "after $(( ${start:-0} + 3 )) steps" "$out.resume"
    # Metrics up to the checkpoint's step were committed before the kill and must all survive.
    metrics_upto "$id" "${start:-0}" > "$out.after"
    awk -F, -v s="${start:-0}" '$2 <= s' "$out.before" | sort > "$out.kept"
    check "$name: committed metrics kept ($(wc -l < "$out.kept") rows)" test -z "$(comm -23 "$out.kept" "$out.after")"
  done
  summary+="$point: $killed kills in $tries runs; "
  check "$point: at least $per_point kills happened" test "$killed" -ge "$per_point"
done

# Locked at the finish line (the store.finish point): another connection takes the history's write
# lock just as the run ends. "busy": it lets go once the recorder has said that it waits, and everything
# arrives; "fail": it holds on past --history-wait, the rows and the end of the run go to a recovery file
# beside the checkpoints, and the next program to open the history imports it; and a process killed
# while it waits loses nothing either.
rows_of() {  # rows_of RUN_ID METRIC
  "$cli" runs export "$1" --csv --db "$db" 2> /dev/null | awk -F, -v m="$2" 'NR > 1 && $3 == m' | wc -l
}
run_id_in() { grep -o "run history: run [0-9]*" "$1" | grep -o "[0-9]*$"; }
out=$work/locked-busy
TS_FAULT="store.finish:1:busy" train "$out" 40 > "$out.log" 2>&1
check "locked at finish, released: training exits 0" test $? -eq 0
check "locked at finish, released: says it waits" grep -q "run history: waiting up to 120 s for the run database" "$out.log"
check "locked at finish, released: then stores" grep -q "run history: stored after waiting" "$out.log"
id=$(run_id_in "$out.log")
check "locked at finish, released: finished" bash -c "'$cli' runs show '$id' --db '$db' | grep -q 'status    finished'"
check "locked at finish, released: all 40 train_loss rows" test "$(rows_of "$id" train_loss)" -eq 40
check "locked at finish, released: no recovery file left" test ! -e "$out/run-history-recovery.json"

out=$work/locked-fail
TS_FAULT="store.finish:1:fail" train "$out" 40 --history-wait 1 > "$out.log" 2>&1
check "locked at finish, never released: training exits 0" test $? -eq 0
check "locked at finish, never released: says where the rows are" \
  grep -q "run history: gave up waiting after 1 s; the last [0-9]* rows and how the run ended are kept in $out/run-history-recovery.json" "$out.log"
check "locked at finish, never released: the recovery file exists" test -s "$out/run-history-recovery.json"
id=$(run_id_in "$out.log")
"$cli" runs list --db "$db" > "$out.list" 2>&1  # the next open imports it
check "locked at finish, never released: imported by the next open" test ! -e "$out/run-history-recovery.json"
"$cli" runs show "$id" --db "$db" > "$out.show" 2>&1
check "locked at finish, never released: finished, and says it was recovered" \
  grep -q "status    finished (reached max_steps 40 (the end of its history was recovered from" "$out.show"
check "locked at finish, never released: all 40 train_loss rows" test "$(rows_of "$id" train_loss)" -eq 40
check "locked at finish, never released: its checkpoints are listed" grep -q "last.ckpt" "$out.show"

out=$work/locked-killed
start_logged "$out.log" env TS_FAULT="store.finish:1:fail" "$cli" train --corpus "$work/deu.txt" --direction de-en \
  --preset tiny --max-steps 40 --threads 1 --set data.dev=4 --set train.validate_every=5 --db "$db" --out "$out" \
  --history-wait 600
wait_for_line "run history: waiting"  # $pid is the CLI itself (env execs it), so kill -9 ends the process that waits
check "killed while waiting: it was waiting" grep -q "run history: waiting" "$out.log"
kill -9 "$pid" 2> /dev/null
wait "$pid" 2> /dev/null
finish_log
id=$(run_id_in "$out.log")
"$cli" runs list --db "$db" > /dev/null 2>&1
check "killed while waiting: finished, recovered" bash -c "'$cli' runs show '$id' --db '$db' | grep -q 'status    finished (reached max_steps 40 (the end of its history was recovered'"
check "killed while waiting: all 40 train_loss rows" test "$(rows_of "$id" train_loss)" -eq 40
check "killed while waiting: integrity" bash -c "'$cli' runs check --db '$db' | grep -q 'integrity ok'"

# A full disk while a checkpoint is written: the write fails (ENOSPC), the run stops with the file's
# name, and the previous checkpoint is intact.
out=$work/enospc
train "$out" 10 --no-history > "$out.first" 2>&1
before=$(sha256sum < "$out/last.ckpt")
TS_FAULT="checkpoint.write:20:fail" "$cli" train --resume "$out" --extra-steps 10 --threads 1 --no-history > "$out.log" 2>&1
check "ENOSPC: the run fails" test $? -ne 0
check "ENOSPC: the message names the file and the cause" grep -q "ckpt: cannot write: No space left on device" "$out.log"
check "ENOSPC: the previous checkpoint is unchanged" test "$(sha256sum < "$out/last.ckpt")" = "$before"
check "ENOSPC: no temporary file left" test -z "$(ls "$out" | grep '\.tmp\.')"
# The same with a real full file system, where we may mount one (root with CAP_SYS_ADMIN).
mkdir -p "$work/tmpfs"
if mount -t tmpfs -o size=600k tmpfs "$work/tmpfs" 2> /dev/null; then
  cp "$out/last.ckpt" "$out/config.json" "$work/tmpfs/" 2> /dev/null
  before=$(sha256sum < "$work/tmpfs/last.ckpt")
  "$cli" train --resume "$work/tmpfs" --corpus "$work/deu.txt" --extra-steps 10 --threads 1 --no-history \
    > "$work/tmpfs.log" 2>&1
  check "tmpfs full: the run fails" test $? -ne 0
  check "tmpfs full: the message says no space" grep -q "No space left on device" "$work/tmpfs.log"
  check "tmpfs full: the previous checkpoint is unchanged" test "$(sha256sum < "$work/tmpfs/last.ckpt")" = "$before"
  umount "$work/tmpfs"
else
  echo "SKIP real tmpfs: mount not permitted here (the ENOSPC injection above covers the same path)"
fi

# NaN losses: stop (default) keeps the last good checkpoint; skip goes on and says so.
out=$work/nan-stop
TS_FAULT="loss:12:fail" train "$out" 40 --no-history > "$out.log" 2>&1
check "NaN stop: the run fails" test $? -ne 0
check "NaN stop: says why, at which step" grep -q "non-finite loss (nan) at step 12: stopped; the last good checkpoint is kept" "$out.log"
check "NaN stop: the checkpoint of step 10 is the last and loads" bash -c "echo 'Ich sehe 3 Hunde.' | '$cli' translate --checkpoint '$out/last.ckpt' > /dev/null 2>&1"
check "NaN stop: no checkpoint after step 10" test ! -e "$out/step-15.ckpt"
out=$work/nan-skip
TS_FAULT="loss:12:fail" train "$out" 40 --no-history --set train.on_nonfinite=skip > "$out.log" 2>&1
check "NaN skip: the run finishes" test $? -eq 0
check "NaN skip: the skipped update is reported" grep -q "non-finite loss (nan) at step 12: update skipped (1 in a row)" "$out.log"
check "NaN skip: all 40 steps done" grep -q "after 40 steps" "$out.log"

# The installed program has no fault hook: the plan that stopped the run above does nothing there.
if [ -n "${3:-}" ]; then
  out=$work/no-hook
  TS_FAULT="loss:12:fail" cli=$3 train "$out" 40 --no-history > "$out.log" 2>&1
  check "installed program: TS_FAULT does nothing, the run finishes" test $? -eq 0
  check "installed program: all 40 steps, no NaN" bash -c "grep -q 'after 40 steps' '$out.log' && ! grep -q non-finite '$out.log'"
fi

echo "$summary"
echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
