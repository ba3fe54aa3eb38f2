#!/bin/bash
# ragged helper, GPU call: correctness, check, sanitizers, timing, ncu
B=build-rg
K=$B/kbench
cl=$(ls -d /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda-13*/lib* 2>/dev/null | tr '\n' ':')
export LD_LIBRARY_PATH=$PWD/$B/devlibs:$cl
export KBENCH_NO_DEFAULT_PLUGINS=1
if ! ldd $B/plugins/kbench-transpose.so | grep -q "libcublas.so.13 => /"; then
  d=$(dirname "$(find / -name libcublas.so.13 -not -path '*/proc/*' 2>/dev/null | head -1)")
  export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$d
fi
mkdir -p $OUT/r
R=$OUT/r
{ nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv; echo LD=$LD_LIBRARY_PATH; ldd $B/plugins/kbench-transpose.so | grep -E "cublas|cudart"; } > $R/env.txt 2>&1
P="--plugin-path $B/plugins"
timeout 90 $K $P run $B/corr.ini -q > $R/corr.txt 2>&1; echo "corr rc $?" >> $R/rc.txt
timeout 60 $K $P check transpose > $R/check.txt 2>&1; echo "check rc $?" >> $R/rc.txt
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 99 --print-limit 20 $K $P run $B/san.ini -q > $R/memcheck.txt 2>&1; echo "memcheck rc $?" >> $R/rc.txt
timeout 70 compute-sanitizer --tool racecheck --error-exitcode 99 --print-limit 20 $K $P run $B/san.ini -q > $R/racecheck.txt 2>&1; echo "racecheck rc $?" >> $R/rc.txt
timeout 80 $K $P run $B/time.ini > $R/time.txt 2>&1; echo "time rc $?" >> $R/rc.txt
timeout 25 $K --plugin-path $B/expE run $B/timeE.ini > $R/timeE.txt 2>&1; echo "timeE rc $?" >> $R/rc.txt
timeout 40 ncu --clock-control none --kernel-name regex:'ragged|tiles_kernel|transpose|geam' --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_requests_srcunit_tex.sum,lts__t_sectors_srcunit_tex.sum,lts__t_sectors_srcunit_tex_op_write.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active $K $P run $B/ncu.ini -q > $R/ncu.txt 2>&1; echo "ncu rc $?" >> $R/rc.txt
cat $R/rc.txt; cat $R/env.txt
grep -E "^summary" $R/corr.txt; grep -cE " pass " $R/corr.txt; grep -E "FAIL|error" $R/corr.txt | head -5
grep -E "^summary" $R/check.txt; grep -E "^FAIL" $R/check.txt | head
grep -E "SUMMARY" $R/memcheck.txt $R/racecheck.txt; grep -E "^summary" $R/memcheck.txt $R/racecheck.txt
grep -vE "x[0-9]+: stands" $R/time.txt | grep -E "point|ragged|window|vec16-band|cublas|copy" | cut -c1-140
grep -vE "x[0-9]+: stands" $R/timeE.txt | grep -E "point|ragged|copy" | cut -c1-140
cd $OUT && tar czf r.tgz r && rm -rf r
