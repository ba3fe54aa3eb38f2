#!/bin/sh
# GPU call: final validation (session.sh), compare on micro rows (batch off/auto), transpose study
export LD_LIBRARY_PATH=$PWD/build/devlibs
R=/tmp/r13; mkdir -p $R; T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
el "transpose-study"
timeout 120 build/kbench run conf/transpose-study.ini -o $R/transpose-study > $R/transpose-study.txt 2> $R/transpose-study-stderr.log; el "rc=$?"
el "compare-small A, B"
timeout 60 build/kbench run tests/gpu/compare-small.ini -q -o $R/A > $R/compare-A.txt 2>&1; el "A rc=$?"
timeout 60 build/kbench run tests/gpu/compare-small.ini -q -o $R/B > $R/compare-B.txt 2>&1; el "B rc=$?"
build/kbench compare $R/A/results.json $R/B/results.json > $R/compare-A-B.txt 2>&1; el "compare rc=$?"
grep -E "small-(single|batch)" $R/compare-A-B.txt | awk '{print $1, $NF}' | sort | uniq -c | head; tail -3 $R/compare-A-B.txt
el "session.sh"
OUT=$R/session timeout 330 sh tests/gpu/session.sh build > $R/session.txt 2>&1; el "session rc=$?"
tail -30 $R/session.txt
tar czf $OUT/r13.tgz -C /tmp r13
