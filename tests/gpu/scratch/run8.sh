#!/bin/sh
# GPU call: issue 11 section 3 (noise.ini), transpose gpu.sh, sort tune + gpu.sh
export LD_LIBRARY_PATH=$PWD/build/devlibs
R=/tmp/r; mkdir -p $R; T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
git log --oneline -1 > $R/revision.txt 2>/dev/null || true
el "noise.ini"
timeout 90 build/kbench run tests/gpu/noise.ini -o $R/noise > $R/noise.txt 2> $R/noise-stderr.log; el "noise rc=$?"
cut -c1-170 $R/noise.txt | head -80; head -20 $R/noise-stderr.log
el "sort tune.ini"
timeout 100 build/kbench run plugins/sort/tune.ini -o $R/sorttune > $R/sort-tune.txt 2> $R/sort-tune-stderr.log; el "tune rc=$?"
grep -E "point|onesweep|cub-radix|summary" $R/sort-tune.txt | cut -c1-150; tail -5 $R/sort-tune-stderr.log
el "transpose gpu.sh"
OUT=$R timeout 190 sh plugins/transpose/gpu.sh build > $R/transpose-gpu.log 2>&1; el "transpose rc=$?"
tail -12 $R/transpose-gpu.log
el "sort gpu.sh"
OUT=$R timeout 200 sh plugins/sort/gpu.sh build > $R/sort-gpu.log 2>&1; el "sort rc=$?"
tail -12 $R/sort-gpu.log
tar czf $OUT/r8.tgz -C /tmp r
el done
