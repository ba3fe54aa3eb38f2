#!/bin/sh
# GPU call: transpose and matmul studies (tables for the READMEs)
export LD_LIBRARY_PATH=$PWD/build/devlibs
R=/tmp/r; mkdir -p $R; T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
git log --oneline -1 > $R/revision.txt 2>/dev/null
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/nvidia-smi.txt 2>&1
el "transpose-study"
timeout 200 build/kbench run conf/transpose-study.ini -o $R/transpose-study > $R/transpose-study.txt 2> $R/transpose-study-stderr.log; el "rc=$?"
el "matmul-study"
timeout 330 build/kbench run conf/matmul-study.ini -o $R/matmul-study > $R/matmul-study.txt 2> $R/matmul-study-stderr.log; el "rc=$?"
tail -3 $R/transpose-study.txt; tail -3 $R/matmul-study.txt
tar czf $OUT/r11.tgz -C /tmp r
