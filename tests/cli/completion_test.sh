#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Bash completion and documented defaults, both generated from the CLI's own option definitions.
# Usage: completion_test.sh PATH_TO_CLI
set -uo pipefail
cli=${1:?usage: completion_test.sh PATH_TO_CLI}
source "$(dirname "$0")/test_lib.sh"

"$cli" completion bash > "$work/completion.bash"
check "completion bash exits 0" test $? -eq 0
bash -n "$work/completion.bash"
check "the script is valid bash" test $? -eq 0

# Runs the completion function for a command line typed so far; prints the candidates.
complete_line() {
  bash -c '
    source "$1"; shift
    COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 ))
    _transformer_studio_cli
    printf "%s\n" "${COMPREPLY[@]}"' _ "$work/completion.bash" transformer-studio-cli "$@"
}
candidates=$(complete_line tr)
check "subcommands complete: tr -> train translate" test "$(echo $candidates)" = "train translate"
candidates=$(complete_line train --co)
check "train's options complete" test "$(echo $candidates)" = "--corpus --config"
candidates=$(complete_line runs s)
check "nested subcommands complete: runs s -> show" test "$(echo $candidates)" = "show"
candidates=$(complete_line runs show --)
check "options of a nested subcommand" grep -q -- "--db" <<< "$candidates"
check "no options of another subcommand" lacks <(echo "$candidates") "--corpus"
touch "$work/corpus-file.txt"
candidates=$(complete_line train --corpus "$work/corpus-f")
check "a path option completes file names" test "$candidates" = "$work/corpus-file.txt"
candidates=$(complete_line train --max-steps "")
check "a value option completes nothing" test -z "$candidates"
candidates=$(complete_line "")
for sub in train translate eval score demo presets runs lm-train lm-generate export upgrade-checkpoint compare completion man; do
  check "top level offers $sub" grep -qx -- "$sub" <<< "$candidates"
done

# Every option of every subcommand is in the man page and in --help, with its default.
"$cli" man > "$work/man.1"
check "man exits 0" test $? -eq 0
for sub in train translate eval lm-train export compare; do
  "$cli" $sub --help > "$work/help-$sub.txt" 2>&1
  for opt in $(grep -oE '^  (-[a-z], )?--[a-z0-9-]+' "$work/help-$sub.txt" | grep -oE -- '--[a-z0-9-]+' | grep -v -- '--help'); do
    check "man page documents $sub $opt" grep -q -- "$(echo "$opt" | sed 's/-/\\\\-/g')" "$work/man.1"
  done
done
# CLI11 2.6 puts an option's description on the line below its name: read the help as one line.
tr -s ' \n' '  ' < "$work/help-translate.txt" > "$work/help-translate-joined.txt"
check "translate --help says the beam defaults to the model's own" grep -Eq -- "--beam INT[^()]*Beam width \(1 = greedy; default: the model's own decode settings\)" "$work/help-translate-joined.txt"
# CLI11 2.1 (Debian 12) writes a default as "TEXT=auto", 2.4 (Debian 13) as "TEXT [auto]".
check "translate --help shows no sentinel default" lacks_match "$work/help-translate.txt" '=-1|\[-1\]'
check "train --help shows the default preset" grep -Eq -- '--preset TEXT( \[auto\]|=auto)' "$work/help-train.txt"
check "sentinel defaults are not shown as -1" lacks_match "$work/help-train.txt" '=-1|\[-1\]'

check "the man page shows defaults" grep -q -- '\[default: auto\]' "$work/man.1"

echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
