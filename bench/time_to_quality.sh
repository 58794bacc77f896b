#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Time to quality: the default recipe (`train` with no --preset, i.e. `auto`) with a time budget, on
# the seed corpora in both directions, scored on its 1,000 held-out test pairs by the independent
# scorer ../shared/bench/bleu.py; optionally the peer (../shared/bench/peer_annotated.py) for the same
# machine, run back to back. Not part of CI: each run takes its budget plus a minute or two.
#
#   bench/time_to_quality.sh [BUDGETS] [RUNS]
#     BUDGETS  minutes, e.g. "5 20" (default "5 20")
#     RUNS     corpus:direction pairs (default "deu:de-en deu:en-de cmn:en-zh cmn:zh-en"; fra:fr-en, ara:ar-en too)
#   THREADS=2  threads for ours and the peer; PEER=MIN also trains the peer for MIN minutes on
#   deu de-en and cmn en-zh (PEER_RUNS="deu:de-en" for one); TAG=name keeps the results apart;
#   EXTRA="--set k=v ..." or "--preset annotated" goes to train; SYSTEM=name labels our runs in the summary
#   (default "auto"; e.g. SYSTEM=annotated EXTRA="--preset annotated").
# Results: bench/results/time-to-quality[-TAG]/<system>-<corpus>-<direction>-<B>min/ (logs, hypotheses,
# references, vmstat), summary.tsv, summary.md with the targets (issue 33's, for runs on the grouped split), the
# whole train command's wall time, the commit, the split (method, corpus SHA-256) and the CPU steal, summary.svg
# (BLEU per run) and budget.svg (BLEU against budget, one line per system and direction).
set -euo pipefail
cd "$(dirname "$0")/.."
budgets=${1:-5 20}
runs=${2:-deu:de-en deu:en-de cmn:en-zh cmn:zh-en}
threads=${THREADS:-2}
shared=$(cd .. && pwd)/shared
cli=${CLI:-build/app/cli/transformer-studio-cli}
root=bench/results/time-to-quality${TAG:+-$TAG}
mkdir -p "$root"
system=${SYSTEM:-auto}
summary=$root/summary.tsv
[ -f "$summary" ] || printf 'system\tcorpus\tdirection\tminutes\tbleu\tchrf\tdate\tcpu\tsteal\twall_s\tcommit\tsplit\n' > "$summary"
commit=$(git rev-parse --short=12 HEAD 2> /dev/null || echo unknown)
# shellcheck source=bench/lib.sh
source bench/lib.sh
bench_same_blas_as_ours
cpu=$(bench_cpu "$threads")
score() { bench_score "$@"; }
steal() { bench_steal "$@"; }

record() {  # system corpus direction minutes scores vmstat-log [wall-seconds split]
  local bleu chrf
  bleu=$(sed -n 's/.*BLEU[ =:]*\([0-9.]*\).*/\1/p' <<< "$5" | head -1)
  chrf=$(sed -n 's/.*chrF[^0-9]*\([0-9.]*\).*/\1/p' <<< "$5" | head -1)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$bleu" "$chrf" "$(date -u +%F)" "$cpu" \
    "$(steal "$6")" "${7:-}" "$commit" "${8:-}" >> "$summary"
  echo "$1 $2 $3 ${4}min: $5, steal $(steal "$6"), whole command ${7:-?} s"
}

for b in $budgets; do
  for run in $runs; do
    name=${run%%:*}
    direction=${run#*:}
    out=$root/$system-$name-$direction-${b}min
    # shellcheck disable=SC2086
    bench_train "$out" "$name" "$direction" "$b" "$threads" ${EXTRA:-} || echo "$system $name $direction: train failed"
    wall=$bench_wall
    split=$(bench_split_of "$out/run")
    "$cli" eval --checkpoint "$out/run/best.ckpt" --threads "$threads" --hyp-out "$out/hyp.txt" \
      --ref-out "$out/ref.txt" > "$out/eval.txt" 2>&1
    record "$system" "$name" "$direction" "$b" "$(score "$out/hyp.txt" "$out/ref.txt" "$direction")" "$out/vmstat.log" \
      "$wall" "$split"
  done
done

if [ -n "${PEER:-}" ]; then
  for run in ${PEER_RUNS:-deu:de-en cmn:en-zh}; do
    name=${run%%:*}
    direction=${run#*:}
    flags=(--reverse)
    [ "$name" = cmn ] && flags=(--char_tgt)
    out=$root/peer-$name-$direction-${PEER}min
    mkdir -p "$out"
    vmstat 10 > "$out/vmstat.log" &
    vm=$!
    /usr/bin/python3 "$shared/bench/peer_annotated.py" "$shared/data/$name.txt" "${flags[@]}" --threads "$threads" \
      --minutes "$PEER" --test 1000 --out "$out/peer" > "$out/peer.log" 2>&1
    kill "$vm" 2> /dev/null || true
    record peer "$name" "$direction" "$PEER" "$(score "$out/peer.hyp" "$out/peer.ref" "$direction")" "$out/vmstat.log"
  done
fi

# The table with the targets of issue 21, and a bar chart.
/usr/bin/python3 - "$summary" "$root" << 'EOF'
import csv, sys, html
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
# Issue 33's targets on the clean split (grouped by source); rows of the old split have no target.
targets = {("de-en", "20"): 40, ("en-zh", "20"): 36, ("fr-en", "20"): 40, ("de-en", "5"): 25}
latest = {}
for r in rows:
    latest[(r["system"], r["direction"], r["minutes"])] = r
default = ("ours", "auto")  # our default recipe ("ours" in summaries written before SYSTEM existed)
lines = ["| system | direction | budget | BLEU | chrF | target | whole command (s) | CPU steal % | date | commit | split | machine |",
         "|---|---|---:|---:|---:|---:|---:|---:|---|---|---|---|"]
for key in sorted(latest, key=lambda k: (k[0] not in default, k[0], k[1], float(k[2]))):
    r = latest[key]
    clean = (r.get("split") or "").startswith("grouped")
    t = targets.get((r["direction"], r["minutes"])) if r["system"] in default and clean else None
    lines.append(f"| {r['system']} | {r['direction']} | {r['minutes']} min | {r['bleu']} | {r['chrf']} | "
                 f"{'≥ ' + str(t) if t else ''} | {r.get('wall_s') or ''} | {r.get('steal') or 'n/a'} | {r['date']} | "
                 f"{r.get('commit') or ''} | {r.get('split') or 'old split'} | {r['cpu']} |")
open(sys.argv[2] + "/summary.md", "w").write("\n".join(lines) + "\n")
# SVG: one group per direction, one bar per (system, budget), target ticks.
bars = sorted(latest.values(), key=lambda r: (r["direction"], r["system"] not in default, r["system"], float(r["minutes"])))
w, h, pad = max(560, 60 + 64 * len(bars) + 20 * 4), 320, 40
out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">',
       f'<text x="{pad}" y="16" font-size="13">BLEU on 1,000 held-out pairs by time budget (ours: default recipe)</text>']
scale = (h - 80) / 40.0
for v in range(0, 41, 10):
    y = h - 40 - v * scale
    out.append(f'<line x1="{pad}" x2="{w - 10}" y1="{y}" y2="{y}" stroke="#ddd"/><text x="8" y="{y + 4}">{v}</text>')
x, last = pad + 10, None
for r in bars:
    if last and r["direction"] != last:
        x += 20
    last = r["direction"]
    bleu = float(r["bleu"] or 0)
    colour = {"peer": "#d8833b", "annotated": "#5a9e4b"}.get(r["system"], "#3b7dd8")
    y = h - 40 - bleu * scale
    out.append(f'<rect x="{x}" y="{y}" width="38" height="{bleu * scale}" fill="{colour}"/>')
    out.append(f'<text x="{x + 19}" y="{y - 3}" text-anchor="middle">{bleu:.1f}</text>')
    out.append(f'<text x="{x + 19}" y="{h - 26}" text-anchor="middle">{html.escape(r["direction"])}</text>')
    out.append(f'<text x="{x + 19}" y="{h - 12}" text-anchor="middle">{r["system"]} {r["minutes"]}m</text>')
    t = targets.get((r["direction"], r["minutes"])) if r["system"] in default and (r.get("split") or "").startswith("grouped") else None
    if t:
        ty = h - 40 - t * scale
        out.append(f'<line x1="{x - 3}" x2="{x + 41}" y1="{ty}" y2="{ty}" stroke="#c00" stroke-width="2"/>')
    x += 64
out.append(f'<text x="{w - 230}" y="34" fill="#c00">red line: target (issue 33)</text></svg>')
open(sys.argv[2] + "/summary.svg", "w").write("\n".join(out))
# SVG: BLEU against budget (log scale), one line per system and direction with two budgets or more.
series = {}
for r in latest.values():
    series.setdefault((r["system"], r["direction"]), []).append((float(r["minutes"]), float(r["bleu"] or 0)))
series = {k: sorted(v) for k, v in series.items() if len(v) > 1}
if series:
    import math
    minutes = sorted({m for v in series.values() for m, _ in v})
    top = max(10, math.ceil(max(b for v in series.values() for _, b in v) / 10) * 10)
    w, h, left, right, bottom = 640, 360, 48, 170, 44
    lo, hi = math.log(minutes[0]), math.log(minutes[-1])
    px = lambda m: left + (w - left - right) * ((math.log(m) - lo) / (hi - lo) if hi > lo else 0.5)
    py = lambda b: h - bottom - (h - bottom - 44) * b / top
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">',
           f'<text x="{left}" y="16" font-size="13">BLEU on 1,000 held-out pairs against the time budget</text>',
           f'<text x="{left}" y="30" fill="#555">{html.escape("; ".join(sorted({r["cpu"] for r in latest.values()})))}; '
           f'CPU steal: {html.escape(", ".join(sorted({(r.get("steal") or "n/a").split(" ")[0] + "%" for r in latest.values()})))}</text>']
    for v in range(0, top + 1, 10):
        out.append(f'<line x1="{left}" x2="{w - right}" y1="{py(v)}" y2="{py(v)}" stroke="#ddd"/>'
                   f'<text x="{left - 6}" y="{py(v) + 4}" text-anchor="end">{v}</text>')
    for m in minutes:
        out.append(f'<text x="{px(m)}" y="{h - bottom + 16}" text-anchor="middle">{m:g}</text>')
    out.append(f'<text x="{(left + w - right) / 2}" y="{h - 8}" text-anchor="middle">budget (minutes, log scale)</text>')
    palette = ["#3b7dd8", "#5a9e4b", "#d8833b", "#9b59b6", "#c0392b", "#16a085", "#7f8c8d", "#d4ac0d"]
    for i, (key, pts) in enumerate(sorted(series.items(), key=lambda kv: (kv[0][0] not in default, kv[0]))):
        c = palette[i % len(palette)]
        dash = "" if key[0] in default else ' stroke-dasharray="5,3"'
        path = " ".join(f"{px(m):.1f},{py(b):.1f}" for m, b in pts)
        out.append(f'<polyline points="{path}" fill="none" stroke="{c}" stroke-width="2"{dash}/>')
        for m, b in pts:
            out.append(f'<circle cx="{px(m):.1f}" cy="{py(b):.1f}" r="3" fill="{c}"/>'
                       f'<text x="{px(m):.1f}" y="{py(b) - 6:.1f}" text-anchor="middle">{b:.1f}</text>')
        y = 40 + 18 * i
        out.append(f'<line x1="{w - right + 12}" x2="{w - right + 36}" y1="{y}" y2="{y}" stroke="{c}" stroke-width="2"{dash}/>'
                   f'<text x="{w - right + 42}" y="{y + 4}">{html.escape(key[0] + " " + key[1])}</text>')
    out.append("</svg>")
    open(sys.argv[2] + "/budget.svg", "w").write("\n".join(out))
EOF
cat "$root/summary.md"
