#!/bin/bash
# ragged helper, GPU call 2: builds plugins (A2, committed), expA0 (call 1's A), expB, expC, expD, expP1, expP5: timed, then verified, then ncu
B=build-rg
K=$B/kbench
cl=$(ls -d /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda-13*/lib* 2>/dev/null | tr '\n' ':')
export LD_LIBRARY_PATH=$PWD/$B/devlibs:$cl
export KBENCH_NO_DEFAULT_PLUGINS=1
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv > $R/env.txt 2>&1; cat $R/env.txt
D="plugins expA0 expB expC expD expP1 expP5"
V="plugins expP1 expB expD expP5"
for d in $D; do
  P="--plugin-path $B/$d"
  timeout 40 $K $P run $B/time2.ini > $R/time2-$d.txt 2>&1; echo "== $d time2 rc $?"
  grep -vE "x[0-9]+: stands" $R/time2-$d.txt | grep -E "point|ragged|vec16-band|cublas|copy" | cut -c1-118
done
for d in $V; do
  P="--plugin-path $B/$d"
  echo "== $d verify"
  timeout 40 $K $P run $B/corr.ini -q > $R/corr-$d.txt 2>&1; echo "corr rc $?"
  timeout 40 $K $P check transpose > $R/check-$d.txt 2>&1; echo "check rc $?"
  timeout 40 compute-sanitizer --tool memcheck --error-exitcode 99 --print-limit 20 $K $P run $B/san.ini -q > $R/memcheck-$d.txt 2>&1; echo "memcheck rc $?"
  timeout 50 compute-sanitizer --tool racecheck --error-exitcode 99 --print-limit 20 $K $P run $B/san.ini -q > $R/racecheck-$d.txt 2>&1; echo "racecheck rc $?"
  grep -hE "^summary" $R/corr-$d.txt $R/check-$d.txt $R/memcheck-$d.txt $R/racecheck-$d.txt
  grep -hE "SUMMARY" $R/memcheck-$d.txt $R/racecheck-$d.txt
done
for d in $D; do
  P="--plugin-path $B/$d"
  timeout 25 ncu --clock-control none --kernel-name regex:ragged --metrics gpu__time_duration.sum,lts__t_requests_srcunit_tex.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active $K $P run $B/ncu2.ini -q > $R/ncu-$d.txt 2>&1; echo "== $d ncu rc $?"
  grep -E "gpu__time|warps_active|inst_exec|lts__t_req" $R/ncu-$d.txt | head -4
done
cd $OUT && tar czf r.tgz r && rm -rf r
