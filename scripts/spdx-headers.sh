#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The licence line in every source file: adds it where it is missing, or (--check) lists the files
# that lack it and exits 1. Idempotent: a second run changes nothing.
#
#   scripts/spdx-headers.sh [--check] [SOURCE_DIR]      (SOURCE_DIR: this script's checkout by default)
#
# Which files are source, by name:
#   C++      *.cpp *.cc *.cxx *.h *.hpp *.inc   gets  // SPDX-License-Identifier: GPL-3.0-or-later
#   CMake    CMakeLists.txt *.cmake             gets  # SPDX-License-Identifier: GPL-3.0-or-later
#   shell    *.sh                               (same # line)
#   Python   *.py                               (same # line)
# The line goes first, or after a "#!" line, or after a Python encoding line that follows the "#!"
# (Python reads the encoding only from the first two lines). A file already carrying any
# "SPDX-License-Identifier:" in its first 5 lines is left alone (code under another licence keeps its own).
# Not source: documentation, JSON/JSONC, XML, desktop entries, images, Qt resource files, the fuzzing
# corpus tests/fuzz/corpus/ (inputs, whatever their names), and extensionless scripts (.ci/run).
#
# The files: in a git checkout, the tracked ones plus the untracked ones git does not ignore (so a new
# file is caught before it is committed); outside git (a source tarball), every file except .git/,
# build*/, .cache/, runs/ and bench/results/. tests/cli/package_test.sh (CTest package_deb) runs --check.
set -euo pipefail

usage() { sed -n '6p' "$0" | sed 's/^#  *//' >&2; exit 2; }
mode=apply
case ${1:-} in
  --check) mode=check; shift ;;
  -h|--help) usage ;;
  -*) usage ;;
esac
[ $# -le 1 ] || usage
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
[ -d "$root" ] || { echo "spdx-headers.sh: $root: not a directory" >&2; exit 2; }
cd "$root"

licence=GPL-3.0-or-later

list_files() {  # NUL-separated paths relative to the root
  if [ -e .git ] && git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    git ls-files -z --cached --others --exclude-standard
  else
    find . \( -name .git -o -name 'build*' -o -name .cache -o -path ./runs -o -path ./bench/results \) -prune \
      -o -type f -print0 | sed -z 's|^\./||'
  fi
}

comment_of() {  # the comment marker of a source file, nothing for other files
  case $1 in
    tests/fuzz/corpus/*) ;;
    *.cpp|*.cc|*.cxx|*.h|*.hpp|*.inc) echo '//' ;;
    CMakeLists.txt|*/CMakeLists.txt|*.cmake|*.sh|*.py) echo '#' ;;
  esac
}

has_spdx() { [[ $(head -n 5 -- "$1") == *SPDX-License-Identifier:* ]]; }

add_spdx() {  # add_spdx FILE LINE: rewrites the file in place (mode and owner kept)
  local tmp
  tmp=$(mktemp)
  awk -v spdx="$2" '
    !done && NR == 1 && /^#!/ { print; shebang = 1; next }
    !done && NR == 2 && shebang && /^#.*coding[:=]/ { print; next }
    !done { print spdx; done = 1 }
    { print }
    END { if (!done) print spdx }
  ' "$1" > "$tmp"
  cat "$tmp" > "$1"
  rm -f "$tmp"
}

checked=0
missing=0
while IFS= read -r -d '' f; do
  marker=$(comment_of "$f")
  if [ -z "$marker" ] || [ ! -f "$f" ] || [ -L "$f" ]; then continue; fi
  checked=$((checked + 1))
  has_spdx "$f" && continue
  missing=$((missing + 1))
  if [ "$mode" = check ]; then
    echo "$f"
  else
    add_spdx "$f" "$marker SPDX-License-Identifier: $licence"
    echo "added: $f"
  fi
done < <(list_files | sort -z)

if [ "$checked" -eq 0 ]; then
  echo "spdx-headers.sh: no source files under $root" >&2
  exit 2
fi
if [ "$mode" = check ]; then
  if [ "$missing" -gt 0 ]; then
    echo "spdx-headers.sh: $missing of $checked source files lack the SPDX-License-Identifier line" \
         "(scripts/spdx-headers.sh adds it)" >&2
    exit 1
  fi
  echo "spdx-headers.sh: all $checked source files carry an SPDX-License-Identifier line" >&2
else
  echo "spdx-headers.sh: added the line to $missing of $checked source files" >&2
fi
