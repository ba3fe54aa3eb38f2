#!/bin/sh
# GPU call: sort gpu.sh in full (check, correctness, memcheck, racecheck)
export LD_LIBRARY_PATH=$PWD/build/devlibs
R=/tmp/r; mkdir -p $R; T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
git log --oneline -1 > $R/revision.txt 2>/dev/null
el "sort gpu.sh"
OUT=$R timeout 555 sh plugins/sort/gpu.sh build > $R/sort-gpu.log 2>&1; el "sort gpu rc=$?"
tail -14 $R/sort-gpu.log
for f in $R/sort/*.log; do echo "== $f"; grep -E "^summary|SUMMARY" $f | tail -2; done
tar czf $OUT/r10.tgz -C /tmp r
