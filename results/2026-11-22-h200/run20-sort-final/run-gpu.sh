#!/bin/sh
# sort gpu.sh in full on the head of main (check, correctness, memcheck, racecheck)
export LD_LIBRARY_PATH=$PWD/build/devlibs
R=/tmp/r24; mkdir -p $R; T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
OUT_SAVE=$OUT
OUT=$R timeout 580 sh plugins/sort/gpu.sh build > $R/sort-gpu.log 2>&1; el "sort gpu rc=$?"
tail -14 $R/sort-gpu.log
tar czf $OUT_SAVE/r24.tgz -C /tmp r24
