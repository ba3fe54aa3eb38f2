#!/bin/sh
# transpose ragged: full-tile fast path (new) against the head's (old), same call; ncu instruction count; gpu.sh on new
export LD_LIBRARY_PATH=$PWD/build/devlibs
R=/tmp/r28; mkdir -p $R; T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
for rep in 1 2; do
for b in new old; do
  if [ $b = new ]; then P=""; else P="--plugin-path build-x/old-tr"; fi
  if [ $b = new ]; then timeout 120 build/kbench run tests/gpu/scratch/tr-time.ini -q -o $R/time$rep-$b > $R/time$rep-$b.txt 2>&1
  else KBENCH_NO_DEFAULT_PLUGINS=1 timeout 120 build/kbench $P run tests/gpu/scratch/tr-time.ini -q -o $R/time$rep-$b > $R/time$rep-$b.txt 2>&1; fi
  el "time $rep $b rc=$?"
  grep -E "^\[|n-|point|ragged|vec16-band|cublas|copy" $R/time$rep-$b.txt | grep -v "^#" | cut -c1-100 | grep -E "point|ragged|cublas|copy|band"
done
done
timeout 60 ncu --clock-control none --kernel-name regex:ragged_kernel --metrics gpu__time_duration.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active,lts__t_requests_srcunit_tex.sum build/kbench run tests/gpu/scratch/rg-ncu.ini -q > $R/ncu-new.txt 2>&1; el "ncu rc=$?"
grep -E "gpu__time|inst_exec|warps_active|lts__t" $R/ncu-new.txt
OUT2=$OUT; OUT=$R timeout 400 sh plugins/transpose/gpu.sh build > $R/gpu-sh.txt 2>&1; el "gpu.sh rc=$?"; OUT=$OUT2
tail -15 $R/gpu-sh.txt
tar czf $OUT/r28.tgz -C /tmp r28
