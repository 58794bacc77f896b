#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The two desktop binaries from outside, offscreen: the screenshot tool opens the app on the demo
# corpus and saves every panel, then quits; both refuse a bad launch option by name with exit code 2.
# APP is the front people start (app/gui/front.cpp), which starts transformer-studio-app beside it;
# copied alone it says what it cannot find.
# Usage: screenshots_tool_test.sh TOOL APP
set -uo pipefail
tool=$1
app=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export QT_QPA_PLATFORM=offscreen XDG_CONFIG_HOME=$work/config XDG_DATA_HOME=$work/data
fail() { echo "FAIL: $*"; exit 1; }

"$tool" --db "$work/runs.db" --window-size 1280x800 --screenshots "$work/shots" --screenshot-delay 0 \
  > "$work/out.txt" 2> "$work/err.txt" || { cat "$work/err.txt"; fail "the tool exited with $?"; }
for view in dataset configuration training translate history compare attention attention-over-training \
            beam-search anatomy attention-decoder-self; do
  [ -s "$work/shots/$view.png" ] || fail "no $view.png"
  grep -qx "$work/shots/$view.png" "$work/out.txt" || fail "$view.png not listed"
done
# A PNG's width and height: big-endian 32-bit numbers at bytes 16 and 20.
size=$(od -An -tu1 -j16 -N8 "$work/shots/dataset.png" | awk '{ print ($3 * 256 + $4) "x" ($7 * 256 + $8) }')
[ "$size" = 1280x800 ] || fail "dataset.png is $size, not the 1280 x 800 window"

"$tool" --db "$work/runs.db" > /dev/null 2> "$work/err.txt" && fail "the tool ran without --screenshots"
grep -q -- "--screenshots DIR is required" "$work/err.txt" || fail "no message for a missing --screenshots"
"$tool" --screenshots "$work/x" --screenshot-delay soon > /dev/null 2> "$work/err.txt"
[ $? -eq 2 ] && grep -q -- "--screenshot-delay soon" "$work/err.txt" || fail "a bad delay is not refused by name"
"$app" --db "$work/runs.db" --window-size 10x10 > /dev/null 2> "$work/err.txt"
[ $? -eq 2 ] && grep -q -- "--window-size 10x10" "$work/err.txt" || fail "the app does not refuse --window-size 10x10"
"$app" --help | grep -q -- "--screenshots" && fail "the app still offers --screenshots"
"$app" --help | grep -q -- "--window-size" || fail "the app's help lacks its launch options"
"$app" --version | grep -q "^transformer-studio " || fail "the app started by the front does not say its version"
mkdir "$work/alone"
cp "$app" "$work/alone/"
"$work/alone/$(basename "$app")" --help > /dev/null 2> "$work/err.txt"
status=$?
[ $status -eq 127 ] || fail "the front without the app exited with $status, not 127"
grep -q "cannot find transformer-studio-app" "$work/err.txt" || fail "the front alone does not name what it lacks"
echo "ok"
