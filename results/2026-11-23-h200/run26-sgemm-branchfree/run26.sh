#!/bin/sh
# matmul bigwarp: old (head) vs branch-free loop with FMA orders 0, 1, 5
export LD_LIBRARY_PATH=$PWD/build/devlibs
R=/tmp/r26; mkdir -p $R; T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $R/gpu.txt
for b in mm-o5 mm-o1 mm-o0 old-mm; do
  KBENCH_NO_DEFAULT_PLUGINS=1 timeout 150 build/kbench --plugin-path build-x/$b run tests/gpu/scratch/mm-w64-correct.ini -q -o $R/corr-$b > $R/corr-$b.txt 2>&1; el "corr $b rc=$?"
  grep -c "FAIL" $R/corr-$b.txt; grep summary $R/corr-$b.txt
done
for rep in 1 2; do
for b in mm-o5 mm-o1 mm-o0 old-mm; do
  KBENCH_NO_DEFAULT_PLUGINS=1 timeout 100 build/kbench --plugin-path build-x/$b run tests/gpu/scratch/mm-perf.ini -q -o $R/perf$rep-$b > $R/perf$rep-$b.txt 2>&1; el "perf $rep $b rc=$?"
  grep -E "pipelined|cublas" $R/perf$rep-$b.txt | grep -v "^#" | head -20
done
done
tar czf $OUT/r26.tgz -C /tmp r26
