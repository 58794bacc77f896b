#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Makes docs/screenshots from real models:
#  1. English->Chinese on cmn.txt, trained with the CLI (30 minutes, once). The app then opens under
#     Xvfb on the same corpus, trains a fresh model for a few minutes (so the charts fill and the
#     probe sentence's attention is captured at each validation), translates a sentence with the
#     30-minute model and saves one PNG per panel and tab into docs/screenshots/.
#  2. German->English on deu.txt with learned positions, trained with the CLI (75 minutes, once) with
#     a probe sentence. The app opens that model, translates the probe (a verb-final sentence), replays
#     the probe's attention over the run from the history and saves the exploration views into
#     docs/screenshots/deu/.
# Usage: scripts/screenshots.sh [WORK_DIR] (default /tmp/ts-shots); needs ../shared/data/{cmn,deu}.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/tmp/ts-shots}
build=${BUILD_DIR:-build}
cli="$build/app/cli/transformer-studio-cli"
shots="$build/app/screenshots/transformer-studio-screenshots"  # the app, driven from outside
mkdir -p "$work"
shoot() { xvfb-run -a -s "-screen 0 1600x1000x24" "$shots" --db "$work/runs.db" "$@"; }

cmn=$(realpath ../shared/data/cmn.txt)
if [[ ! -f "$work/cmn-en-zh/best.ckpt" ]]; then
  "$cli" train --corpus "$cmn" --direction en-zh --preset annotated-debug \
    --max-minutes 30 --threads 1 --set data.dev=500 --set data.test=1000 --set train.validate_every=500 \
    --db "$work/runs.db" --name "cmn en→zh annotated-debug 30 min" --out "$work/cmn-en-zh"
fi
# No time budget ("Train for: until I stop it"): validations every 100 steps, as train.validate_every says.
shoot --preset annotated-debug --set data.dev=100 --set train.validate_every=100 --set train.threads=1 \
  --set train.budget_minutes=0 --set "train.probe=My father is a doctor." --train \
  --checkpoint "$work/cmn-en-zh/best.ckpt" --translate "My father is a doctor." --explore-token father \
  --screenshots docs/screenshots --screenshot-delay "${DELAY:-300}" "$cmn"

deu=$(realpath ../shared/data/deu.txt)
probe="Ich habe das Buch gelesen."
example="Er hat gestern einen Brief geschrieben."
if [[ ! -f "$work/deu-de-en/best.ckpt" ]]; then
  "$cli" train --corpus "$deu" --direction de-en --preset annotated-debug \
    --set model.positions=learned --set model.max_positions=128 --max-minutes 75 --threads 1 \
    --set data.dev=500 --set data.test=1000 --set train.validate_every=250 --probe "$probe" \
    --db "$work/runs.db" --name "deu de→en annotated-debug, learned positions" --out "$work/deu-de-en" \
    | tee "$work/deu-train.log"
fi
run=$("$cli" runs list --db "$work/runs.db" | awk 'index($0, "deu.txt") { id = $1 } END { print id }')
mkdir -p "$work/deu-shots" docs/screenshots/deu
shoot --checkpoint "$work/deu-de-en/best.ckpt" --translate "$example" --explore-token Buch --replay-probe "$run" \
  --screenshots "$work/deu-shots" --screenshot-delay 40 "$deu"
for view in attention attention-decoder-self attention-over-training beam-search anatomy-model-positions \
            anatomy-embeddings; do
  cp "$work/deu-shots/$view.png" docs/screenshots/deu/
done
