#!/usr/bin/env bash
# Makes docs/screenshots: trains an English->Chinese model on cmn.txt with the CLI (30 minutes, once),
# then opens the desktop app under Xvfb on the same corpus, trains in the app for a few minutes so the
# charts fill, translates a sentence with the 30-minute model, and saves one PNG per panel.
# Usage: scripts/screenshots.sh [WORK_DIR] (default /tmp/ts-shots); needs ../shared/data/cmn.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/tmp/ts-shots}
corpus=$(realpath ../shared/data/cmn.txt)
build=${BUILD_DIR:-build}
mkdir -p "$work"
if [[ ! -f "$work/cmn-en-zh/best.ckpt" ]]; then
  "$build/app/cli/transformer-studio-cli" train --corpus "$corpus" --direction en-zh --preset annotated-debug \
    --max-minutes 30 --threads 1 --set data.dev=500 --set data.test=1000 --set train.validate_every=500 \
    --db "$work/runs.db" --name "cmn en→zh annotated-debug 30 min" --out "$work/cmn-en-zh"
fi
xvfb-run -a -s "-screen 0 1600x1000x24" "$build/app/gui/transformer-studio" --db "$work/runs.db" \
  --preset annotated-debug --set data.dev=300 --set train.validate_every=100 --set train.threads=1 --train \
  --checkpoint "$work/cmn-en-zh/best.ckpt" --translate "My father is a doctor." \
  --screenshots docs/screenshots --screenshot-delay "${DELAY:-300}" "$corpus"
