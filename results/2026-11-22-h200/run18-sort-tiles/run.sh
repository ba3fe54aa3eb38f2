#!/bin/sh
# sort tile shapes at higher occupancy (256x20/18 x4 blocks, 384x16 x3) and pairs 384x21; correctness of the new shapes
export LD_LIBRARY_PATH=$PWD/build/devlibs
R=/tmp/r22; mkdir -p $R; T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
timeout 330 build/kbench run tests/gpu/scratch/early-perf2.ini -q -o $R/perf > $R/perf.txt 2>&1; el "perf rc=$?"
grep -E '^\S|onesweep-early|cub-radix' $R/perf/results.md | cut -c1-200 | head -60
timeout 200 build/kbench run tests/gpu/scratch/early-tiles.ini -q -o $R/tiles > $R/tiles.txt 2>&1; el "tiles rc=$?"; grep summary $R/tiles.txt
tar czf $OUT/r22.tgz -C /tmp r22
