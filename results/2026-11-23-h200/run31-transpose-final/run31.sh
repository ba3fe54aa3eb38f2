#!/bin/sh
# transpose at f8c965d (the full-tile path, committed): gpu.sh and conf/transpose-study.ini for the README
export LD_LIBRARY_PATH=$PWD/build/devlibs
R=/tmp/r31; mkdir -p $R; T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
timeout 330 build/kbench run conf/transpose-study.ini -q -o $R/tr-study --plot > $R/transpose-study.txt 2>&1; el "tr study rc=$?"
grep summary $R/transpose-study.txt
OUT2=$OUT; OUT=$R timeout 200 sh plugins/transpose/gpu.sh build > $R/tr-gpu-sh.txt 2>&1; el "tr gpu.sh rc=$?"; OUT=$OUT2
tail -9 $R/tr-gpu-sh.txt
timeout 60 build/kbench run tests/gpu/scratch/tr-time2.ini -q > $R/t-after.txt 2>&1; el "t rc=$?"
grep -E "ragged|copy|cublas" $R/t-after.txt | cut -c1-60
tar czf $OUT/r31.tgz -C /tmp r31
