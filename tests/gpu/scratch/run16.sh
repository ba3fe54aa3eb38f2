#!/bin/sh
# GPU call 3: sort racecheck (gpu-racecheck.ini, lib.sh's command), matmul gpu.sh (lib.sh refactor)
export LD_LIBRARY_PATH=$PWD/build/devlibs
R=/tmp/r16; mkdir -p $R; T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
el "sort racecheck"
timeout 330 compute-sanitizer --tool racecheck --error-exitcode 99 --print-limit 20 build/kbench run plugins/sort/gpu-racecheck.ini -q > $R/sort-racecheck.log 2>&1; el "rc=$?"
grep -E "summary:|SUMMARY" $R/sort-racecheck.log
el "matmul gpu.sh"
OUT=$R timeout 250 sh plugins/matmul/gpu.sh build > $R/matmul-gpu.log 2>&1; el "matmul rc=$?"
tail -9 $R/matmul-gpu.log
rm -rf $R/matmul/correctness
tar czf $OUT/r16.tgz -C /tmp r16
