#!/bin/sh
# The transpose family's tma variant on one GPU, in one call:
#   1. plugins/transpose/gpu.sh: kbench check, the correctness file (every
#      CUDA variant, tma included, at awkward shapes, bit for bit),
#      memcheck and racecheck of gpu-sanitize.ini;
#   2. plugins/transpose/tma.ini: tma against vec16-band, ragged, cuBLAS and
#      the copy at 8192^2, 16384^2, 8191 x 8193 and 12000 x 5000 f32,
#      medians of 30, plain and streaming stores;
# then a short table: each row's median and its share of the copy timed at
# the same shape in the same run.
#   sh tests/gpu/transpose-tma.sh BUILD
# Everything it writes goes into $OUT/transpose-tma.tgz (one file, so that
# it comes back whole; ./transpose-tma-out without OUT) beside the table,
# $OUT/transpose-tma-table.txt.  Each step has a time limit (gpu.sh 170 s, TMA_GPU_SH_SECONDS,
# the timing 60 s, TMA_TIMING_SECONDS) so that the call ends inside 4 minutes.  Exit status: 0
# when both steps passed, 1 otherwise, 2 on bad usage.
set -u
[ $# -eq 1 ] || { echo "usage: sh tests/gpu/transpose-tma.sh BUILD" >&2; exit 2; }
build=$(cd "$1" 2>/dev/null && pwd) || { echo "transpose-tma.sh: no folder $1" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$PWD/transpose-tma-out}
w=$out/transpose-tma
mkdir -p "$w"
cd "$root"
[ -x "$build/kbench" ] || { echo "transpose-tma.sh: no kbench at $build/kbench" >&2; exit 2; }
status=0
t0=$(date +%s)
el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu \
    --format=csv >"$w/gpu.txt" 2>&1
"$build/kbench" --version >>"$w/gpu.txt" 2>&1

OUT="$w" timeout "${TMA_GPU_SH_SECONDS:-170}" sh plugins/transpose/gpu.sh "$build" >"$w/gpu-sh.txt" 2>&1
rc=$?
el "plugins/transpose/gpu.sh: exit $rc"
[ $rc -eq 0 ] || status=1
tail -n 9 "$w/gpu-sh.txt"
# tma's own rows in the correctness run (a skipped tma means no sm_90 device).
csv="$w/transpose/correctness/results.csv"
if [ -f "$csv" ]; then
    echo "tma in the correctness run: $(grep -c ',tma,' "$csv") rows," \
        "$(grep ',tma,' "$csv" | grep -c ',pass,') pass"
fi

timeout "${TMA_TIMING_SECONDS:-60}" "$build/kbench" run plugins/transpose/tma.ini -o "$w/timing" >"$w/timing.txt" 2>&1
rc=$?
el "plugins/transpose/tma.ini: exit $rc"
[ $rc -eq 0 ] || status=1
line=$(grep '^summary:' "$w/timing.txt" | tail -1)
echo "${line:-no summary line (see timing.txt)}"
# Nothing timed (no GPU in use, every row skipped) is a failure too.
echo "$line" | grep -q '^summary: [1-9][0-9]* pass' || status=1

# The table, from results.csv (columns found by name; quoted fields may
# hold commas).
table=$out/transpose-tma-table.txt
if [ -f "$w/timing/results.csv" ]; then
    awk '
    function split_csv(line, f,    n, i, c, q, cur) {
        n = 0; cur = ""; q = 0
        for (i = 1; i <= length(line); i++) {
            c = substr(line, i, 1)
            if (c == "\"") q = !q
            else if (c == "," && !q) { f[++n] = cur; cur = "" }
            else cur = cur c
        }
        f[++n] = cur
        return n
    }
    NR == 1 { n = split_csv($0, h); for (i = 1; i <= n; i++) col[h[i]] = i; next }
    {
        split_csv($0, f)
        shape = f[col["rows"]] " x " f[col["cols"]]
        k = ++rows; sh[k] = shape; va[k] = f[col["variant"]]; st[k] = f[col["streaming"]]
        stat[k] = f[col["status"]]; med[k] = f[col["median_s"]]
        if (va[k] == "copy" && stat[k] == "pass") copy[shape] = med[k]
    }
    END {
        printf "%-14s %-16s %-9s %11s %10s  %s\n", "shape (f32)", "variant", "streaming", "median us", "% of copy", "status"
        for (k = 1; k <= rows; k++) {
            pct = (stat[k] == "pass" && copy[sh[k]] > 0 && med[k] > 0) ? sprintf("%.1f", 100 * copy[sh[k]] / med[k]) : "-"
            us = med[k] > 0 ? sprintf("%.1f", med[k] * 1e6) : "-"
            printf "%-14s %-16s %-9s %11s %10s  %s\n", sh[k], va[k], st[k], us, pct, stat[k]
        }
    }' "$w/timing/results.csv" >"$table"
else
    echo "no results.csv from the timing run (see timing.txt)" >"$table"
    status=1
fi
(cd "$out" && tar czf transpose-tma.tgz transpose-tma && rm -rf transpose-tma)
el "logs: $out/transpose-tma.tgz"
echo "---- tma against the family's best, cuBLAS and the copy (H200 targets: 98% of the copy at 8192^2 and 16384^2, 92% at ragged shapes) ----"
cat "$table"
[ $status -eq 0 ] && echo "all steps passed" || echo "some steps failed"
exit $status
