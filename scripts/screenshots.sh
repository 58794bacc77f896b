#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Makes docs/screenshots from real models trained with the default recipe (`auto`), one CPU thread each,
# the two trainings side by side (two cores):
#  1. English->Chinese on cmn.txt, trained with the CLI for a 10-minute budget (once): a finished run in
#     the history. The app then opens under Xvfb on the same corpus with that run's checkpoint loaded,
#     trains a fresh model for a 3-minute budget (the charts fill, and the probe sentence it picks has its
#     attention captured at each validation; Translate follows the model being trained, as its "Refresh
#     the training model" box says), translates a sentence and saves one PNG per panel and tab (but
#     Compare) into docs/screenshots/.
#  2. German->English on deu.txt with learned positions, trained with the CLI for a 30-minute budget
#     (once) with a probe sentence. The app opens that model, translates a verb-final sentence, replays
#     the probe's attention over the run from the history and saves the exploration views into
#     docs/screenshots/deu/.
#  3. deu.txt opened, nothing trained: the `auto` recipe box (auto-recipe.png).
# Usage: scripts/screenshots.sh [WORK_DIR [PART...]]: WORK_DIR defaults to /tmp/ts-shots; PART is cmn, deu or
# recipe (the three above; all of them when none is named). Needs ../shared/data/{cmn,deu}.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-/tmp/ts-shots}
shift || true
parts=" ${*:-cmn deu recipe} "
for part in $parts; do
  case $part in
    cmn | deu | recipe) ;;
    *)
      echo "screenshots.sh: unknown part \"$part\" (cmn, deu or recipe)" >&2
      exit 2
      ;;
  esac
done
wants() { [[ $parts == *" $1 "* ]]; }
build=${BUILD_DIR:-build}
cli="$build/app/cli/transformer-studio-cli"
shots="$build/app/screenshots/transformer-studio-screenshots"  # the app, driven from outside
mkdir -p "$work"
# One run history per model: a history takes one training at a time.
shoot() {
  local db=$1
  shift
  xvfb-run -a -s "-screen 0 1600x1000x24" "$shots" --db "$db" --window-size 1440x900 "$@"
}

deu=$(realpath ../shared/data/deu.txt)
probe="Ich habe das Buch gelesen."
example="Er hat gestern einen Brief geschrieben."
deu_training=
if wants deu && [[ ! -f "$work/deu-de-en/best.ckpt" ]]; then
  "$cli" train --corpus "$deu" --direction de-en --budget 30 --threads 1 \
    --set model.positions=learned --set model.max_positions=128 --probe "$probe" \
    --db "$work/deu-runs.db" --name "deu de→en auto, learned positions, 30 min" --out "$work/deu-de-en" \
    >"$work/deu-train.log" 2>&1 &
  deu_training=$!
fi

cmn=$(realpath ../shared/data/cmn.txt)
if wants cmn && [[ ! -f "$work/cmn-en-zh/best.ckpt" ]]; then
  "$cli" train --corpus "$cmn" --direction en-zh --budget 10 --threads 1 --db "$work/runs.db" \
    --name "cmn en→zh auto, 10 min" --out "$work/cmn-en-zh" >"$work/cmn-train.log" 2>&1
fi
if wants cmn; then
  # The default recipe for a 3-minute budget, as a newcomer picks it in "Train for"; the screenshots are
  # taken a minute after the budget ends (the final validation and the history written).
  shoot "$work/runs.db" --from-english --set train.budget_minutes=3 --set train.threads=1 --train \
    --checkpoint "$work/cmn-en-zh/best.ckpt" --translate "My father is a doctor." --explore-token father \
    --screenshots "$work/cmn-shots" --screenshot-delay "${DELAY:-240}" "$cmn"
  # Every panel but Compare: compare.png's caption in the README names the two models it compares.
  for shot in "$work"/cmn-shots/*.png; do
    case $(basename "$shot") in
      compare*.png) ;;
      *) cp "$shot" docs/screenshots/ ;;
    esac
  done
fi

if wants deu; then
  if [[ -n "$deu_training" ]]; then wait "$deu_training"; fi
  run=$("$cli" runs list --db "$work/deu-runs.db" | awk 'index($0, "deu.txt") { id = $1 } END { print id }')
  mkdir -p "$work/deu-shots" docs/screenshots/deu
  shoot "$work/deu-runs.db" --checkpoint "$work/deu-de-en/best.ckpt" --translate "$example" --explore-token Buch \
    --replay-probe "$run" --screenshots "$work/deu-shots" --screenshot-delay 40 "$deu"
  for view in attention attention-decoder-self attention-over-training beam-search-ranked anatomy-model-positions \
              anatomy-embeddings; do
    cp "$work/deu-shots/$view.png" docs/screenshots/deu/
  done
fi

if wants recipe; then
  # auto-recipe.png: the recipe box as a newcomer first sees it, deu.txt opened and nothing trained (the
  # machine is timed when a run starts; until then the box estimates from constants and says so).
  rm -f "$work/open-runs.db"
  shoot "$work/open-runs.db" --screenshots "$work/open-shots" --screenshot-delay 15 "$deu"
  cp "$work/open-shots/configuration.png" docs/screenshots/auto-recipe.png
fi
