#!/bin/sh
# conf/sort-study.ini and plugins/sort/concentrated.ini on the head of main
export LD_LIBRARY_PATH=$PWD/build/devlibs
R=/tmp/r25; mkdir -p $R; T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
timeout 420 build/kbench run conf/sort-study.ini -q -o $R/study --plot > $R/sort-study.txt 2>&1; el "study rc=$?"
grep summary $R/sort-study.txt
timeout 150 build/kbench run plugins/sort/concentrated.ini -q -o $R/conc > $R/concentrated.txt 2>&1; el "conc rc=$?"
grep summary $R/concentrated.txt
tar czf $OUT/r25.tgz -C /tmp r25
