#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The malformed-input catalogue (docs/reliability.md): corpora, configurations, texts, checkpoints and
# run databases that are wrong in every way we could think of, each given to the real binary. Every
# case must end with a clear message naming the file (or the key), exit 1 or 2 (never a signal, a
# hang or a LibTorch backtrace), and leave the data that was there before untouched.
# Usage: malformed_test.sh PATH_TO_CLI [CATALOGUE.md]   (the second argument writes the table)
set -uo pipefail
cli=${1:?usage: malformed_test.sh PATH_TO_CLI [CATALOGUE.md]}
table=${2:-}
cli=$(realpath "$cli")
[ -n "$table" ] && table=$(realpath "$table")
source "$(dirname "$0")/test_lib.sh"
cd "$work" || exit 1
chmod 755 "$work"
[ -n "$table" ] && printf '| # | case | outcome | message (first line) |\n|---|---|---|---|\n' > "$table"
cases=0

# refuse NAME REGEX CMD...: must fail cleanly with a message matching REGEX (grep -E).
# accept NAME REGEX CMD...: must succeed and say REGEX (a warning or a count of skipped lines).
run_case() {
  local expect=$1 name=$2 pattern=$3; shift 3
  cases=$((cases + 1))
  timeout 120 "$@" > "$work/case.out" 2> "$work/case.err" < /dev/null
  local rc=$?
  local ok=1 why=""
  if [ "$expect" = refuse ]; then
    if [ $rc -ne 1 ] && [ $rc -ne 2 ]; then ok=0; why="exit $rc"; fi
  elif [ $rc -ne 0 ]; then ok=0; why="exit $rc"; fi
  if ! grep -Eq -- "$pattern" "$work/case.err" "$work/case.out"; then ok=0; why="$why; no message matching /$pattern/"; fi
  if grep -Eq 'frame #[0-9]|terminate called|Segmentation|Aborted|AddressSanitizer' "$work/case.err"; then
    ok=0; why="$why; crash or backtrace"
  fi
  if [ $ok -eq 1 ]; then passes=$((passes + 1)); else
    failures=$((failures + 1))
    echo "FAIL: $name ($why)"; sed 's/^/    /' "$work/case.err" | head -5
  fi
  if [ -n "$table" ]; then
    local first
    first=$(grep -Eh -m1 -- "$pattern" "$work/case.err" "$work/case.out" | head -1 | sed "s|$work/||g; s/|/\\\\|/g" | cut -c1-170)
    printf '| %d | %s | %s | %s |\n' "$cases" "$name" \
      "$([ "$expect" = refuse ] && echo "refused, exit $rc" || echo "accepted")" "\`$first\`" >> "$table"
  fi
}
refuse() { run_case refuse "$@"; }
accept() { run_case accept "$@"; }
# Runs a command as an unprivileged user when we are root (root ignores file permissions).
as_nobody=()
[ "$(id -u)" -eq 0 ] && as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)

good() { for i in $(seq 1 60); do printf 'I see the cat %d.\tIch sehe die Katze %d.\n' "$i" "$i"; done; }
good > deu-good.txt
T=(--direction en-de --preset tiny --max-steps 1 --threads 1 --no-history --out "$work/scratch")

# Data that must survive everything below: a run with checkpoints and a history.
"$cli" train --corpus deu-good.txt --direction en-de --preset tiny --max-steps 2 --threads 1 --db precious.db \
  --out "$work/precious" > /dev/null 2>&1
check "the precious run exists" test -s precious/last.ckpt
for i in $(seq 1 300); do echo "the quick brown fox jumps over the lazy dog $i"; done > text.txt
"$cli" lm-train --text text.txt --preset bigram --max-steps 2 --threads 1 --no-history --out "$work/lm" > /dev/null 2>&1
check "the LM run exists" test -s lm/last.ckpt
before=$(sha256sum precious/* precious.db lm/* | sha256sum)

# ---------------------------------------------------------------- corpora
: > deu-empty.txt
refuse "corpus: empty file" 'deu-empty.txt.*empty' "$cli" train --corpus deu-empty.txt "${T[@]}"
printf 'English\tGerman\n' > deu-header.txt
accept "corpus: only a header line" 'only 1 training pair' "$cli" train --corpus deu-header.txt "${T[@]}"
for i in $(seq 1 50); do echo "no tab here $i"; done > deu-notab.txt
refuse "corpus: no tabs" 'deu-notab.txt.*no tab separator' "$cli" train --corpus deu-notab.txt "${T[@]}"
for i in $(seq 1 50); do printf 'only English %d\t\n' "$i"; done > deu-onecol.txt
refuse "corpus: one column" 'deu-onecol.txt.*empty German side' "$cli" train --corpus deu-onecol.txt "${T[@]}"
for i in $(seq 1 50); do printf 'a %d\tb\tc\td\te\tf\tg\th\ti\tj\n' "$i"; done > deu-tencol.txt
accept "corpus: 10 columns (columns after the third ignored, as attribution)" 'deu-tencol.txt: 50 pairs' \
  "$cli" train --corpus deu-tencol.txt "${T[@]}"
{ good; printf 'bad\0line\tx\n'; } > deu-nul.txt
refuse "corpus: NUL bytes" 'deu-nul.txt.*binary file \(NUL byte' "$cli" train --corpus deu-nul.txt "${T[@]}"
{ good; printf 'caf\xe9\tx\n'; } > deu-latin1-line.txt
accept "corpus: one line of invalid UTF-8 (skipped, reported)" 'line 61: invalid UTF-8' \
  "$cli" train --corpus deu-latin1-line.txt "${T[@]}"
for i in $(seq 1 50); do printf 'caf\xe9 %d\tx\n' "$i"; done > deu-latin1.txt
refuse "corpus: all invalid UTF-8 (Latin-1)" 'deu-latin1.txt.*invalid UTF-8' "$cli" train --corpus deu-latin1.txt "${T[@]}"
good | iconv -f utf-8 -t utf-16 > deu-utf16.txt
refuse "corpus: UTF-16 file" 'deu-utf16.txt.*UTF-16' "$cli" train --corpus deu-utf16.txt "${T[@]}"
{ good; head -c 1048576 /dev/zero | tr '\0' 'a'; printf '\tx\n'; } > deu-longline.txt
accept "corpus: a 1 MB line (skipped, reported)" 'line 61: line longer than' "$cli" train --corpus deu-longline.txt "${T[@]}"
yes a | head -n 10000000 > deu-tenm.txt
refuse "corpus: 10 M lines of one character" 'deu-tenm.txt.*10000000 lines skipped' "$cli" train --corpus deu-tenm.txt "${T[@]}"
mkdir deu-dir.txt
refuse "corpus: a directory" 'deu-dir.txt.*a directory' "$cli" train --corpus deu-dir.txt "${T[@]}"
mkfifo deu-fifo.txt
refuse "corpus: a FIFO (must not block)" 'deu-fifo.txt.*FIFO' "$cli" train --corpus deu-fifo.txt "${T[@]}"
good > deu-noperm.txt; chmod 000 deu-noperm.txt
mkdir -m 777 nobody
refuse "corpus: no read permission" 'deu-noperm.txt.*Permission denied' \
  "${as_nobody[@]}" "$cli" train --corpus deu-noperm.txt "${T[@]:0:8}" --no-history --out "$work/nobody/run"
python3 -c "import zipfile; z = zipfile.ZipFile('deu-eng.zip', 'w'); z.writestr('deu.txt', open('deu-good.txt').read()); z.close()"
refuse "corpus: a zip archive" 'deu-eng.zip.*zip archive' "$cli" train --corpus deu-eng.zip "${T[@]}"
good | gzip > deu.txt.gz
refuse "corpus: a gzip file" 'deu.txt.gz.*gzip' "$cli" train --corpus deu.txt.gz "${T[@]}"
refuse "corpus: missing file" 'deu-missing.txt.*No such file' "$cli" train --corpus deu-missing.txt "${T[@]}"

# ---------------------------------------------------------------- configurations
C=(--corpus deu-good.txt --direction en-de --max-steps 1 --threads 1 --no-history --out "$work/scratch")
echo '{"model": {"d_model": 32, "heads": 2, "dmodel": 3}}' > unknown.json
refuse "config: unknown key" 'unknown.json.*model.dmodel.*unknown key' "$cli" train "${C[@]}" --config unknown.json
echo '{"model": {"d_model": "big"}}' > wrongtype.json
refuse "config: wrong type" 'wrongtype.json.*model.d_model.*expected an integer' "$cli" train "${C[@]}" --config wrongtype.json
echo '{"model": {"d_model": 32,, }' > syntax.json
refuse "config: not JSON" 'syntax.json.*JSON' "$cli" train "${C[@]}" --config syntax.json
refuse "config: missing file" 'nope.json.*cannot open' "$cli" train "${C[@]}" --config nope.json
refuse "config: negative size" 'model.d_model must be positive' "$cli" train "${C[@]}" --preset tiny --set model.d_model=-4
refuse "config: heads not dividing d_model" 'model.heads \(4\) must divide model.d_model \(30\)' \
  "$cli" train "${C[@]}" --preset tiny --set model.d_model=30 --set model.heads=4
refuse "config: absurd sizes (refused before allocating)" 'needs about .* available' \
  "$cli" train "${C[@]}" --preset tiny --set model.d_model=65536 --set model.d_ff=1000000 \
  --set model.encoder_layers=100 --set model.decoder_layers=100
refuse "config: unknown --set key" 'model.nope.*unknown key' "$cli" train "${C[@]}" --preset tiny --set model.nope=1
refuse "LM config: absurd width (refused before allocating)" 'needs about .* available' \
  "$cli" lm-train --text text.txt --set n_embd=1000000 --set n_head=1 --no-history --out "$work/scratch"
refuse "LM config: heads not dividing n_embd" 'n_head' \
  "$cli" lm-train --text text.txt --set n_embd=30 --set n_head=4 --no-history --out "$work/scratch"

# ---------------------------------------------------------------- language-model texts
L=(--preset shakespeare-char --max-steps 1 --threads 1 --no-history --out "$work/scratch")
: > empty-text.txt
refuse "LM text: empty" 'empty-text.txt.*empty' "$cli" lm-train --text empty-text.txt "${L[@]}"
head -c 4096 /dev/urandom > random.bin
refuse "LM text: binary" 'random.bin' "$cli" lm-train --text random.bin "${L[@]}"
printf 'abc def\nghi caf\xe9\n' > latin1-text.txt
refuse "LM text: invalid UTF-8 (line named)" 'latin1-text.txt.*line 2' "$cli" lm-train --text latin1-text.txt "${L[@]}"
printf 'tiny\n' > tiny-text.txt
refuse "LM text: smaller than a block" 'tiny-text.txt.*too small' "$cli" lm-train --text tiny-text.txt "${L[@]}"
mkfifo text-fifo
refuse "LM text: a FIFO (must not block)" 'text-fifo.*FIFO' "$cli" lm-train --text text-fifo "${L[@]}"

# ---------------------------------------------------------------- checkpoints
size=$(stat -c %s precious/last.ckpt)
head -c $((size / 2)) precious/last.ckpt > truncated.ckpt
refuse "checkpoint: truncated" 'truncated.ckpt.*truncated' "$cli" translate --checkpoint truncated.ckpt
cp precious/last.ckpt flipped.ckpt
printf '\xff' | dd of=flipped.ckpt bs=1 seek=$((size * 3 / 4)) conv=notrunc status=none
refuse "checkpoint: a flipped byte" 'flipped.ckpt.*SHA-256' "$cli" translate --checkpoint flipped.ckpt
refuse "checkpoint: a language model given to translate" 'language-model checkpoint' "$cli" translate --checkpoint lm/last.ckpt
refuse "checkpoint: a translation model given to lm-generate" 'translation checkpoint' \
  "$cli" lm-generate --checkpoint precious/last.ckpt --prompt a --length 3
refuse "checkpoint: a plain zip" 'deu-eng.zip.*not a Transformer Studio checkpoint' "$cli" translate --checkpoint deu-eng.zip
printf '\x80\x02}q\x00.' > pickle.pt
refuse "checkpoint: a Python pickle" 'pickle.pt.*not a Transformer Studio checkpoint' "$cli" translate --checkpoint pickle.pt
refuse "translate --input: a directory" 'precious: cannot be translated: it is a directory' \
  "$cli" translate --checkpoint precious/last.ckpt --input precious
refuse "translate --input: a missing file" 'no-such-input.txt: cannot be read' \
  "$cli" translate --checkpoint precious/last.ckpt --input no-such-input.txt
python3 -c "import zipfile; z = zipfile.ZipFile('model.pt', 'w'); z.writestr('archive/data.pkl', b'\x80\x02}q\x00.'); z.writestr('archive/version', '3'); z.close()"
refuse "checkpoint: a PyTorch (torch.save) zip" 'model.pt.*not a Transformer Studio checkpoint' "$cli" translate --checkpoint model.pt
: > empty.ckpt
refuse "checkpoint: empty file" 'empty.ckpt.*not a Transformer Studio checkpoint' "$cli" translate --checkpoint empty.ckpt
mkfifo fifo.ckpt
refuse "checkpoint: a FIFO (must not block)" 'fifo.ckpt.*FIFO' "$cli" translate --checkpoint fifo.ckpt
refuse "checkpoint: resume from a text file" 'deu-good.txt.*not a Transformer Studio checkpoint' \
  "$cli" train --resume deu-good.txt --no-history

# ---------------------------------------------------------------- run databases
echo "hello" > notdb.db
refuse "database: not a database" 'notdb.db.*not a Transformer Studio run database' "$cli" runs list --db notdb.db
python3 -c "import sqlite3; c = sqlite3.connect('newer.db'); c.execute('create table x(a)'); c.execute('pragma user_version=99'); c.commit()"
refuse "database: newer schema" 'newer.db.*newer Transformer Studio \(schema 99' "$cli" runs list --db newer.db
cp precious.db readonly.db; chmod 444 readonly.db
refuse "database: read-only file, renaming a run" 'readonly.db.*read-only' \
  "${as_nobody[@]}" "$cli" runs rename 1 other --db readonly.db
accept "database: read-only file, training (goes on unrecorded, says so)" 'readonly.db.*read-only.*training goes on' \
  "${as_nobody[@]}" "$cli" train --corpus deu-good.txt "${T[@]:0:8}" --db readonly.db --out "$work/nobody/ro"
mkdir db-dir.db
refuse "database: a directory" 'db-dir.db.*a directory' "$cli" runs list --db db-dir.db
mkfifo fifo.db
refuse "database: a FIFO (must not block)" 'fifo.db.*FIFO' "$cli" runs list --db fifo.db
cp precious.db locked.db
# Another process holds the lock until the test closes its stdin, however long the checks take; it
# says "ready" once it holds the lock (pipes: the test waits for that line, not for an amount of time).
mkfifo locker.in locker.out
python3 -c "
import sqlite3, sys
c = sqlite3.connect('locked.db', isolation_level=None)
c.execute('begin exclusive')
print('ready', flush=True)
sys.stdin.read()" < locker.in > locker.out &
locker=$!
exec {locker_in}> locker.in
read -r _ < locker.out
accept "database: locked by another process (training goes on unrecorded, says so)" 'locked.db.*locked by another process.*training goes on' \
  "$cli" train --corpus deu-good.txt "${T[@]:0:8}" --db locked.db --out "$work/scratch-locked"
refuse "database: locked by another process, renaming a run" 'locked.db.*locked' "$cli" runs rename 1 other --db locked.db
exec {locker_in}>&-  # end of its input: it lets go
wait $locker 2> /dev/null

# ---------------------------------------------------------------- nothing was harmed
after=$(sha256sum precious/* precious.db lm/* | sha256sum)
check "existing runs, checkpoints and history untouched" test "$before" = "$after"
"$cli" runs list --db precious.db > list.txt 2>&1
check "the history still opens" test $? -eq 0

echo "malformed-input catalogue: $cases cases; $passes checks passed, $failures failed"
[ "$failures" -eq 0 ]
