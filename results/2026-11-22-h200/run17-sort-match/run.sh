#!/bin/sh
# sort-match: new match (PTX ballots) vs old plugin, same run; onesweep-early correctness, check, sanitizers
export LD_LIBRARY_PATH=$PWD/build/devlibs
R=/tmp/r20; mkdir -p $R; T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
git log --oneline -1 > $R/revision.txt 2>/dev/null
nvidia-smi --query-gpu=name,clocks.sm,driver_version --format=csv > $R/gpu.txt 2>&1; cat $R/gpu.txt
timeout 150 build/kbench run tests/gpu/scratch/early-perf.ini -q -o $R/new > $R/new.txt 2>&1; el "new rc=$?"
KBENCH_NO_DEFAULT_PLUGINS=1 timeout 150 build/kbench --plugin-path build-x/old-sort run tests/gpu/scratch/early-perf.ini -q -o $R/old > $R/old.txt 2>&1; el "old rc=$?"
build/kbench compare $R/old/results.json $R/new/results.json > $R/compare.txt 2>&1
cat $R/compare.txt | cut -c1-150
timeout 60 build/kbench check sort --variants onesweep-early > $R/check.log 2>&1; el "check rc=$?"; tail -2 $R/check.log
timeout 150 build/kbench run tests/gpu/scratch/early-correct.ini -q -o $R/correct > $R/correct.txt 2>&1; el "correct rc=$?"; grep summary $R/correct.txt
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 build/kbench run plugins/sort/gpu-sanitize-early.ini -q > $R/memcheck.log 2>&1; el "memcheck rc=$?"; tail -3 $R/memcheck.log
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 99 build/kbench run plugins/sort/gpu-sanitize-early.ini -q > $R/racecheck.log 2>&1; el "racecheck rc=$?"; tail -3 $R/racecheck.log
tar czf $OUT/r20.tgz -C /tmp r20
