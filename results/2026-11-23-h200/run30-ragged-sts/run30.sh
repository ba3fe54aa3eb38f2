#!/bin/sh
# 1. matmul 4096^3 / 8192^3 on a cool GPU (the study's 8192 rows ran throttled in run29)
# 2. transpose ragged with predicated shared stores (new) against the head before the full-tile path (old-tr)
# 3. transpose gpu.sh and conf/transpose-study.ini on new
export LD_LIBRARY_PATH=$PWD/build/devlibs
R=/tmp/r30; mkdir -p $R; T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
nvidia-smi --query-gpu=name,temperature.gpu,clocks.sm,power.draw --format=csv > $R/gpu0.txt
timeout 120 build/kbench run tests/gpu/scratch/mm-final.ini -q -o $R/mm-final > $R/mm-final.txt 2>&1; el "mm rc=$?"
grep -E "point|pipelined|cublas" $R/mm-final.txt | cut -c1-120
for rep in 1 2; do
for b in new old; do
  if [ $b = new ]; then timeout 120 build/kbench run tests/gpu/scratch/tr-time.ini -q -o $R/time$rep-$b > $R/time$rep-$b.txt 2>&1
  else KBENCH_NO_DEFAULT_PLUGINS=1 timeout 120 build/kbench --plugin-path build-x/old-tr run tests/gpu/scratch/tr-time.ini -q -o $R/time$rep-$b > $R/time$rep-$b.txt 2>&1; fi
  el "time $rep $b rc=$?"
done; done
grep -E "point|ragged|copy|cublas" $R/time1-new.txt | grep -v stands | cut -c1-70
OUT2=$OUT; OUT=$R timeout 200 sh plugins/transpose/gpu.sh build > $R/tr-gpu-sh.txt 2>&1; el "tr gpu.sh rc=$?"; OUT=$OUT2
tail -9 $R/tr-gpu-sh.txt
timeout 330 build/kbench run conf/transpose-study.ini -q -o $R/tr-study --plot > $R/transpose-study.txt 2>&1; el "tr study rc=$?"
grep summary $R/transpose-study.txt
tar czf $OUT/r30.tgz -C /tmp r30
