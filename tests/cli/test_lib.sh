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
