#!/usr/bin/env bash
# Installs dependencies, builds, and trains the demo preset on the built-in German-English
# corpus, then prints held-out BLEU and sample translations (the README's first command).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF
cmake --build "$BUILD_DIR" -j "$(nproc)" --target transformer-studio-cli
"$BUILD_DIR/app/cli/transformer-studio-cli" demo "$@"
