#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# The README's first command: installs dependencies, builds, and opens the desktop app with the
# built-in German-English demo corpus loaded, training the demo preset (about two minutes) with
# live charts; then type a sentence into the Translate panel.
# Without a display (ssh, CI) it runs the same demo in the terminal with the command-line tool.
# Extra arguments go to the program (e.g. --db FILE).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DBUILD_GUI=ON
if [[ -n "${DISPLAY:-}" || -n "${WAYLAND_DISPLAY:-}" ]]; then
  cmake --build "$BUILD_DIR" -j "$(nproc)" --target transformer-studio
  exec "$BUILD_DIR/app/gui/transformer-studio" --train "$@"
fi
echo "no display found: running the demo in the terminal instead (transformer-studio-cli demo)" >&2
cmake --build "$BUILD_DIR" -j "$(nproc)" --target transformer-studio-cli
exec "$BUILD_DIR/app/cli/transformer-studio-cli" demo "$@"
