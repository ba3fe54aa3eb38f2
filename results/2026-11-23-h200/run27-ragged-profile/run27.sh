#!/bin/sh
# ragged kernel: per-instruction profile (ncu SourceCounters) at 8191 x 8193 f32, streaming
export LD_LIBRARY_PATH=$PWD/build/devlibs
R=/tmp/r27; mkdir -p $R; T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
timeout 120 ncu --clock-control none --kernel-name regex:ragged_kernel --launch-count 1 --section SourceCounters --section InstructionStats --section WarpStateStats --section LaunchStats --section Occupancy -o $R/rg build/kbench run tests/gpu/scratch/rg-ncu.ini -q > $R/ncu.log 2>&1; el "ncu rc=$?"
timeout 60 ncu -i $R/rg.ncu-rep --page source --print-source sass --csv > $R/src.csv 2>&1; el "src rc=$?"
timeout 60 ncu -i $R/rg.ncu-rep --page details > $R/details.txt 2>&1; el "details rc=$?"
head -c 600 $R/src.csv; wc -l $R/src.csv
grep -E "Executed Ipc|Issue Slots|Warp Cycles|Instructions|Stall|Occupancy|Registers|Achieved" $R/details.txt | head -40
tar czf $OUT/r27.tgz -C /tmp r27
