#!/bin/sh
# sort: ranks taken in the count phase (packed), 384x20 at 3 blocks and 256x24 at 4; shapes timed, old auto beside; correctness + sanitizers of every shape
export LD_LIBRARY_PATH=$PWD/build/devlibs
R=/tmp/r23; mkdir -p $R; T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
timeout 200 build/kbench run tests/gpu/scratch/early-perf3.ini -q -o $R/perf > $R/perf.txt 2>&1; el "perf rc=$?"
KBENCH_NO_DEFAULT_PLUGINS=1 timeout 50 build/kbench --plugin-path build-x/old2 run tests/gpu/scratch/early-perf-old.ini -q -o $R/old > $R/old.txt 2>&1; el "old rc=$?"
python3 - <<'P'
import csv
for f in ('/tmp/r23/perf/results.csv','/tmp/r23/old/results.csv'):
    try:
        for r in csv.DictReader(open(f)):
            print(f[9:13], r['n'], r['key'], r['values'], r['tile'], r['variant'], '%.4g'%(float(r['median_s'])*1e3), r['status'])
    except Exception as e: print(f, e)
P
timeout 150 build/kbench run tests/gpu/scratch/early-correct.ini -q -o $R/correct > $R/correct.txt 2>&1; el "correct rc=$?"; grep summary $R/correct.txt
timeout 40 build/kbench check sort --variants onesweep-early > $R/check.log 2>&1; el "check rc=$?"; tail -1 $R/check.log
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 build/kbench run tests/gpu/scratch/early-san.ini -q > $R/memcheck.log 2>&1; el "memcheck rc=$?"; tail -3 $R/memcheck.log
timeout 70 compute-sanitizer --tool racecheck --error-exitcode 99 build/kbench run tests/gpu/scratch/early-san.ini -q > $R/racecheck.log 2>&1; el "racecheck rc=$?"; tail -3 $R/racecheck.log
tar czf $OUT/r23.tgz -C /tmp r23
