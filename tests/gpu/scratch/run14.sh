#!/bin/sh
# GPU call 1 (session 3): sort gpu.sh through tests/gpu/lib.sh, merged sort-f32
export LD_LIBRARY_PATH=$PWD/build/devlibs
R=/tmp/r14; mkdir -p $R; T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
git log --oneline -1 2>/dev/null; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
el "sort gpu.sh"
OUT=$R timeout 560 sh plugins/sort/gpu.sh build > $R/sort-gpu.log 2>&1; el "sort gpu rc=$?"
cat $R/sort-gpu.log | tail -15
ls -la $R/sort
rm -rf $R/sort/correctness
tar czf $OUT/r14.tgz -C /tmp r14
