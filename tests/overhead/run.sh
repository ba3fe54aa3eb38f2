#!/bin/sh
# Overhead check, on the GPU machine: kbench's median for cub on 2^28 floats
# against a bare loop of CUDA events around the same call (bare_cub), in one
# session, alternating three times so that drift hits both alike.
#   tests/overhead/run.sh BUILD_DIR
set -eu
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp}/overhead
mkdir -p "$out"
for round in 1 2 3; do
    "$build/kbench-bare-cub" $((1 << 28)) 5 100 | tee -a "$out/bare.txt"
    "$build/kbench" run -q "$here/cub-2p28.ini" -o "$out/kbench-$round" >"$out/kbench-$round.txt"
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
             { printf "kbench   n=%s runs=%s median_ms=%.6f min_ms=%.6f max_ms=%.6f\n",
                      $col["n"], $col["runs"], $col["median_s"] * 1e3, $col["min_s"] * 1e3, $col["max_s"] * 1e3 }' \
        "$out/kbench-$round/results.csv" | tee -a "$out/kbench.txt"
done
bare=$(sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' "$out/bare.txt" | sort -n | sed -n 2p)
kb=$(sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' "$out/kbench.txt" | sort -n | sed -n 2p)
awk -v b="$bare" -v k="$kb" 'BEGIN { printf "overhead: bare %.6f ms, kbench %.6f ms (middle of 3 medians), kbench/bare = %.4f\n", b, k, k / b;
                                     exit (k / b > 1.01 || k / b < 0.99) ? 1 : 0 }'
