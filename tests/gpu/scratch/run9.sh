#!/bin/sh
# GPU call: matmul (SIMT w64 tiles + fixed wgmma): gpu.sh, self-test tf32 check, matmul-tc.ini, sort early racecheck
export LD_LIBRARY_PATH=$PWD/build/devlibs
R=/tmp/r; mkdir -p $R; T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
el "selftest check tf32 + bf16"
timeout 90 build/plugins/matmul/tools/wgmma_selftest check tf32 bf16 > $R/selftest-check.log 2>&1; el "selftest rc=$?"
grep -E "FAIL|group|==" $R/selftest-check.log | tail -8
el "matmul-tc.ini"
timeout 120 build/kbench run conf/matmul-tc.ini -o $R/tc > $R/matmul-tc.txt 2> $R/matmul-tc-stderr.log; el "tc rc=$?"
grep -E "^matmul|wgmma|mma |cublas|summary" $R/matmul-tc.txt | grep -v stages | cut -c1-150 | head -40
grep "max |C" $R/matmul-tc-stderr.log | grep -E "wgmma|cublas," | head
el "sort racecheck early"
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 99 build/kbench run plugins/sort/gpu-sanitize-early.ini -q > $R/sort-race-early.log 2>&1; el "race rc=$?"
tail -3 $R/sort-race-early.log
el "matmul gpu.sh"
OUT=$R timeout 280 sh plugins/matmul/gpu.sh build > $R/matmul-gpu.log 2>&1; el "matmul gpu rc=$?"
tail -12 $R/matmul-gpu.log
tar czf $OUT/r9.tgz -C /tmp r
el done
