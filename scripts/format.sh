#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Formats every C++ file git tracks (or would add: new, not ignored) with the repository's .clang-format (Debian 12's clang-format 14), or,
# with --check, fails naming each file and line that is not formatted (.ci/run does that).
set -euo pipefail
cd "$(dirname "$0")/.."
# Tracked files and new ones not yet added (but not ignored ones): a new file is formatted before its first commit.
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cpp' '*.h' '*.inc')
if [ "${1:-}" = --check ]; then
  clang-format --dry-run -Werror "${files[@]}"
  echo "format: ${#files[@]} C++ files as .clang-format wants them"
else
  clang-format -i "${files[@]}"
fi
