# SPDX-License-Identifier: GPL-3.0-or-later
# Shared by the CLI end-to-end scripts: a scratch directory removed on exit, the run history kept
# inside it (never in the user's home), and pass/fail counting. Source it after setting `cli`.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_DATA_HOME=$work/xdg
failures=0
passes=0
check() {  # check NAME CONDITION...
  local name=$1; shift
  if "$@"; then passes=$((passes + 1)); else echo "FAIL: $name"; failures=$((failures + 1)); fi
}
contains() { grep -q -- "$2" "$1"; }
lacks() { ! grep -q -- "$2" "$1"; }
lacks_match() { ! grep -Eq -- "$2" "$1"; }  # no line matches the extended regular expression

# A small German-English corpus in the Anki format (32 pairs), with punctuation to split and re-attach.
punctuated_deu_corpus() {
  local pair en de
  for pair in dog:Hund cat:Katze house:Haus book:Buch car:Auto tree:Baum ball:Ball table:Tisch; do
    en=${pair%%:*} de=${pair##*:}
    printf 'I see the %s.\tIch sehe %s.\n' "$en" "$de"
    printf 'You have the %s.\tDu hast %s.\n' "$en" "$de"
    printf "Don't take the %s, Tom!\tNimm nicht %s, Tom!\n" "$en" "$de"
    printf 'Where is the %s?\tWo ist %s?\n' "$en" "$de"
  done
}

# Waiting for what a background command prints, without looking at the clock:
#   start_logged LOG CMD...   runs CMD in the background (its pid in $pid, CMD itself, not a shell
#                             around it), its output going through a pipe that the test reads
#   wait_for_line REGEX       reads that output, copying it to LOG, until a line matches (then the
#                             rest is copied to LOG in the background); fails when CMD ends first
#   finish_log                waits until the rest of the output is in LOG (after CMD has ended)
start_logged() {
  started_log=$1; shift
  local fifo="$work/output.$RANDOM.fifo"
  mkfifo "$fifo"
  "$@" > "$fifo" 2>&1 &
  pid=$!
  exec {started_fd}< "$fifo"
  rm -f "$fifo"
  : > "$started_log"
  copier=""
}
wait_for_line() {
  local line
  while IFS= read -r line <&"$started_fd"; do
    printf '%s\n' "$line" >> "$started_log"
    if [[ "$line" =~ $1 ]]; then
      cat <&"$started_fd" >> "$started_log" &
      copier=$!
      return 0
    fi
  done
  return 1
}
finish_log() {
  if [ -n "$copier" ]; then wait "$copier"; else cat <&"$started_fd" >> "$started_log"; fi
  exec {started_fd}<&-
}
