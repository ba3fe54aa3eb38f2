#!/bin/sh
# ncu's duration and launch figures of onepass's kernel and CUB's two kernels
# at the small reduce sizes (tests/gpu/ncu/reduce-small.ini).  Prints one
# line per kernel launch: name, n (from the grid), duration, blocks.
#   tests/gpu/ncu/reduce-small.sh BUILD      (writes $OUT/ncu-reduce-small.csv)
set -u
build=${1:?usage: tests/gpu/ncu/reduce-small.sh BUILD}
root=$(cd "$(dirname "$0")/../../.." && pwd)
out=${OUT:-$PWD}
export LD_LIBRARY_PATH="$root/$build/devlibs:${LD_LIBRARY_PATH:-}"
ncu --clock-control none --target-processes all --csv --kernel-name regex:'k_onepass|DeviceReduce' \
    --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,sm__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum \
    "$root/$build/kbench" run "$root/tests/gpu/ncu/reduce-small.ini" -q -o "$out/ncu-run" \
    >"$out/ncu-reduce-small.csv" 2>"$out/ncu-reduce-small.err"
echo "ncu: exit $?"
grep -c '"gpu__time_duration.sum"' "$out/ncu-reduce-small.csv"
