#!/bin/sh
# Success rates of a strategy replayed (kbench tune --simulate, no GPU) from
# the exhaustive tunings of tests/gpu/tune.sh, over many seeds: the share
# of seeds whose best is within 2% of the exhaustive best (both judged on
# the screening medians, which the journals hold for every candidate) with
# at most 25% of the exhaustive evaluations (issue 25's target).
#   tests/gpu/tune-replay.sh BUILD EXHAUSTIVE SEEDS [--set K=V ...]
# BUILD: a build with the families' plugins (no GPU needed); EXHAUSTIVE: a
# folder holding <family>-exhaustive/ (for example
# results/2026-11-25-h100-b/tune); SEEDS: how many seeds (1..SEEDS,
# offset by $SEED0).  $STRATEGY picks the strategy (default auto),
# $FAMILIES the families (default "transpose sort matmul").
set -u
[ $# -ge 3 ] || { echo "usage: tests/gpu/tune-replay.sh BUILD EXHAUSTIVE SEEDS [--set K=V ...]" >&2; exit 2; }
build=$1 ex=$2 seeds=$3
shift 3
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for fam in ${FAMILIES:-transpose sort matmul}; do
    for s in $(seq 1 "$seeds"); do
        TUNE_STRATEGY=${STRATEGY:-auto} KBENCH_PLUGIN_PATH="$build/plugins" "$build/kbench" tune \
            "$root/tests/gpu/tune/$fam.ini" --simulate "$ex/$fam-exhaustive" -o "$out/$fam-$s" -q \
            --set "$fam.tune_seed=$((s + ${SEED0:-0}))" "$@" >/dev/null 2>"$out/$fam-$s.err" ||
            tail -2 "$out/$fam-$s.err"
    done
done
python3 - "$out" "$ex" "$seeds" ${FAMILIES:-transpose sort matmul} <<'PY'
import csv, json, sys
out, ex, seeds, fams = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
for fam in fams:
    best = {}
    for r in csv.DictReader(open(f'{ex}/{fam}-exhaustive/tried.csv')):
        if r['library'] == '1' or r['status'] != 'pass':
            continue
        best[r['problem']] = min(best.get(r['problem'], float('inf')), float(r['screen_s']))
    res = {}
    for s in range(1, seeds + 1):
        try:
            j = json.load(open(f'{out}/{fam}-{s}/best.json'))
        except (OSError, ValueError):
            print('no result:', fam, 'seed', s)
            continue
        for p in j['problems']:
            b = p['best']
            v = b['screen_median_s'] if b else float('inf')
            ok = v <= 1.02 * best[p['problem']] and p['evaluations'] <= 0.25 * p['valid']
            res.setdefault(p['problem'], []).append((ok, v / best[p['problem']] - 1, p['evaluations'], p['valid']))
    for p, l in res.items():
        n = sum(o for o, _, _, _ in l)
        print(f"{fam:10s} {p:26s} success {n}/{len(l)}  mean gap {100 * sum(g for _, g, _, _ in l) / len(l):5.1f}%"
              f"  worst {100 * max(g for _, g, _, _ in l):5.1f}%  evaluations {l[0][2]} of {l[0][3]}")
PY
