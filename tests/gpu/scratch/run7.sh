#!/bin/sh
# GPU call: tensor cores (issue 9) — wgmma self-test, the tc study INI, the matmul GPU script
export LD_LIBRARY_PATH=$PWD/build/devlibs
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv > $OUT/gpu.txt 2>&1
cat $OUT/gpu.txt
t0=$(date +%s)
echo "==== wgmma_selftest ===="
timeout 150 build/plugins/matmul/tools/wgmma_selftest > $OUT/selftest.log 2>&1
echo "selftest rc=$? $(($(date +%s)-t0))s"; tail -30 $OUT/selftest.log
t0=$(date +%s)
echo "==== conf/matmul-tc.ini ===="
mkdir -p /tmp/tc
timeout 170 build/kbench run conf/matmul-tc.ini -o /tmp/tc > /tmp/tc/table.txt 2> /tmp/tc/stderr.log
echo "tc rc=$? $(($(date +%s)-t0))s"; cat /tmp/tc/table.txt | cut -c1-160; grep "max |C" /tmp/tc/stderr.log | head -30
tar czf $OUT/tc.tgz -C /tmp tc
t0=$(date +%s)
echo "==== matmul gpu.sh ===="
OUT=/tmp/mm timeout 250 sh plugins/matmul/gpu.sh build > /tmp/gpu-matmul.log 2>&1
echo "gpu.sh rc=$? $(($(date +%s)-t0))s"; tail -15 /tmp/gpu-matmul.log
cp /tmp/gpu-matmul.log $OUT/; tar czf $OUT/mm-logs.tgz -C /tmp mm
