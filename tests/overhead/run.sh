#!/bin/sh
# Overhead check, on the GPU machine: kbench's median for cub on 2^28 floats
# against a bare loop of CUDA events around the same call (bare_cub), in one
# session, alternating three times so that drift hits both alike.  The
# yardstick is the bare loop with a hold (bare_cub ... hold): kbench holds the
# stream until a sample is enqueued (docs/output.md "The hold"), and so must
# the loop it is compared with; the plain loop's figure, which also counts the
# host's launch of CUB's kernels, is printed beside it.  Fails when kbench is
# more than 1% from the held loop.
#   tests/overhead/run.sh BUILD_DIR
set -eu
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp}/overhead
mkdir -p "$out"
for round in 1 2 3; do
    "$build/kbench-bare-cub" $((1 << 28)) 5 100 | tee -a "$out/bare.txt"
    "$build/kbench-bare-cub" $((1 << 28)) 5 100 hold | tee -a "$out/bare-hold.txt"
    "$build/kbench" run -q "$here/cub-2p28.ini" -o "$out/kbench-$round" >"$out/kbench-$round.txt"
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
             { printf "kbench   n=%s runs=%s median_ms=%.6f min_ms=%.6f max_ms=%.6f\n",
                      $col["n"], $col["runs"], $col["median_s"] * 1e3, $col["min_s"] * 1e3, $col["max_s"] * 1e3 }' \
        "$out/kbench-$round/results.csv" | tee -a "$out/kbench.txt"
done
middle() { sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p' "$1" | sort -n | sed -n 2p; }
bare=$(middle "$out/bare.txt")
held=$(middle "$out/bare-hold.txt")
kb=$(middle "$out/kbench.txt")
awk -v b="$bare" -v h="$held" -v k="$kb" 'BEGIN {
    printf "overhead: bare loop with a hold %.6f ms, kbench %.6f ms (middle of 3 medians), kbench/held = %.4f; the plain loop %.6f ms (kbench/plain = %.4f)\n",
           h, k, k / h, b, k / b;
    exit (k / h > 1.01 || k / h < 0.99) ? 1 : 0 }'
