#!/bin/sh
# final: session.sh on the head of main (every unit test with the GPU, reduce run.sh through lib.sh, kbench check on every plugin, overhead)
R=/tmp/r19; mkdir -p $R; T0=$(date +%s)
git log --oneline -1 2>/dev/null
OUT=$R timeout 540 sh tests/gpu/session.sh build > $R/session.txt 2>&1; echo "session rc=$? $(( $(date +%s) - T0 ))s"
tail -40 $R/session.txt
tar czf $OUT/r19.tgz -C /tmp r19
