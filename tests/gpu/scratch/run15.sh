#!/bin/sh
# GPU call 2: sort-study + concentrated (final f32 kernels), transpose gpu.sh (lib.sh refactor)
export LD_LIBRARY_PATH=$PWD/build/devlibs
R=/tmp/r15; mkdir -p $R; T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
el "sort-study"
timeout 300 build/kbench run conf/sort-study.ini -o $R/sort-study > $R/sort-study.txt 2> $R/sort-study-stderr.log; el "rc=$?"
grep -E "onesweep-early|cub-radix" $R/sort-study.txt | head -40
el "transpose gpu.sh"
OUT=$R timeout 230 sh plugins/transpose/gpu.sh build > $R/transpose-gpu.log 2>&1; el "transpose rc=$?"
tail -8 $R/transpose-gpu.log
rm -rf $R/transpose/correctness
tar czf $OUT/r15.tgz -C /tmp r15
