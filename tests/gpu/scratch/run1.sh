#!/bin/sh
# validation of the current revision + sort racecheck diagnosis + ncu profiles
export LD_LIBRARY_PATH=$PWD/build/devlibs
sh tests/gpu/session.sh build tests/gpu/reduce-quick.ini > $OUT/session.txt 2>&1
tail -40 $OUT/session.txt
echo "==== sort racecheck per variant (n=1025, u32) ===="
for v in onesweep radix bitonic merge; do
  sed "s/^variants = .*/variants = $v/" tests/gpu/scratch/race1.ini > /tmp/r_$v.ini
  start=$(date +%s)
  timeout 60 compute-sanitizer --tool racecheck --print-limit 5 build/kbench run /tmp/r_$v.ini -q > /tmp/race_$v.log 2>&1
  rc=$?
  echo "$v: rc=$rc $(($(date +%s)-start))s $(grep -E 'RACECHECK SUMMARY|summary:' /tmp/race_$v.log | tr '\n' ' ')"
done
tar czf $OUT/race.tgz /tmp/race_*.log 2>/dev/null
echo "==== ncu ===="
timeout 240 ncu --clock-control none --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed.sum \
  build/kbench run tests/gpu/scratch/prof.ini -q > $OUT/ncu.txt 2>&1
echo "ncu rc=$?"; grep -c "gpu__time_duration" $OUT/ncu.txt
