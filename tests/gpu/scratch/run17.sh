#!/bin/sh
# GPU call 4: sort racecheck on the new gpu-racecheck.ini (lib.sh's command), concentrated.ini
export LD_LIBRARY_PATH=$PWD/build/devlibs
R=/tmp/r17; mkdir -p $R; T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
el "sort racecheck"
timeout 300 compute-sanitizer --tool racecheck --error-exitcode 99 --print-limit 20 build/kbench run plugins/sort/gpu-racecheck.ini -q > $R/sort-racecheck.log 2>&1; el "rc=$?"
grep -E "summary:|SUMMARY" $R/sort-racecheck.log
el "concentrated"
timeout 250 build/kbench run plugins/sort/concentrated.ini -o $R/concentrated > $R/concentrated.txt 2> $R/concentrated-stderr.log; el "rc=$?"
grep -E "^\[|onesweep-early|cub-radix|hist|key" $R/concentrated.txt | head -60
tar czf $OUT/r17.tgz -C /tmp r17
