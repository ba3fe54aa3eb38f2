#!/bin/sh
# 1. ragged f32: MIN_BLOCKS 4 (committed) vs 5 vs 6, interleaved; per-instruction profile of the committed build
# 2. matmul gpu.sh and conf/matmul-study.ini on the committed build (176a581 kernels)
export LD_LIBRARY_PATH=$PWD/build/devlibs
R=/tmp/r29; mkdir -p $R; T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
for rep in 1 2; do
for b in mb4 tr-mb5 tr-mb6; do
  if [ $b = mb4 ]; then timeout 60 build/kbench run tests/gpu/scratch/tr-time2.ini -q > $R/t$rep-$b.txt 2>&1
  else KBENCH_NO_DEFAULT_PLUGINS=1 timeout 60 build/kbench --plugin-path build-x/$b run tests/gpu/scratch/tr-time2.ini -q > $R/t$rep-$b.txt 2>&1; fi
  el "t $rep $b rc=$?"; grep -E "ragged|copy|cublas" $R/t$rep-$b.txt | cut -c1-60
done; done
timeout 120 ncu --clock-control none --kernel-name regex:ragged_kernel --launch-count 1 --section SourceCounters --section WarpStateStats -o $R/rg build/kbench run tests/gpu/scratch/rg-ncu.ini -q > $R/ncu.log 2>&1; el "ncu rc=$?"
timeout 60 ncu -i $R/rg.ncu-rep --page source --print-source sass --csv > $R/src.csv 2>&1
timeout 60 ncu -i $R/rg.ncu-rep --page details > $R/details.txt 2>&1
grep -E "Stall|Warp Cycles" $R/details.txt | head
OUT2=$OUT; OUT=$R timeout 330 sh plugins/matmul/gpu.sh build > $R/mm-gpu-sh.txt 2>&1; el "mm gpu.sh rc=$?"; OUT=$OUT2
tail -12 $R/mm-gpu-sh.txt
timeout 200 build/kbench run conf/matmul-study.ini -q -o $R/mm-study --plot > $R/matmul-study.txt 2>&1; el "study rc=$?"
grep summary $R/matmul-study.txt
tar czf $OUT/r29.tgz -C /tmp r29
