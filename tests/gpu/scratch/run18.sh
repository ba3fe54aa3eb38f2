#!/bin/sh
# GPU call 5: ragged merged: transpose gpu.sh, transpose-study
export LD_LIBRARY_PATH=$PWD/build/devlibs
R=/tmp/r18; mkdir -p $R; T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
el "transpose gpu.sh"
OUT=$R timeout 200 sh plugins/transpose/gpu.sh build > $R/transpose-gpu.log 2>&1; el "transpose rc=$?"
tail -8 $R/transpose-gpu.log
rm -rf $R/transpose/correctness
el "transpose-study"
timeout 300 build/kbench run conf/transpose-study.ini -o $R/transpose-study > $R/transpose-study.txt 2> $R/transpose-study-stderr.log; el "rc=$?"
grep -E "point|ragged|vec16-band |copy|cublas|reg4|vec16 " $R/transpose-study.txt | head -90
tar czf $OUT/r18.tgz -C /tmp r18
