#!/bin/bash
# ncu stall reasons of pipelined 128x256x8 and cublasSgemm at 4096^3
export LD_LIBRARY_PATH=$PWD/build/devlibs
R=/tmp/rp; mkdir -p $R
build/kbench run build-x/prof/prof.ini -n 2>&1 | tail -3
timeout 300 ncu --clock-control none --kernel-name regex:"mm_bigwarp|mm_pipe|gemm|sgemm|xmma" \
  --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis --section InstructionStats \
  build/kbench run build-x/prof/prof.ini -q > $R/ncu.txt 2>&1; echo "ncu rc $?"
grep -E "^  [a-zA-Z_].*\(|Stall|Warp Cycles|Issued Warp|Eligible|Active Warps|Registers|Achieved Occ|Executed Ipc|Issue Slots|SM Busy|No Eligible|Theoretical Occ|Block Limit|Duration|Compute \(SM\)|Memory Throughput|Executed Instructions " $R/ncu.txt | head -80
timeout 200 ncu --clock-control none --kernel-name regex:"mm_bigwarp|mm_pipe|gemm|sgemm|xmma" \
  --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum,smsp__inst_executed_pipe_fma.sum,smsp__issue_active.avg.pct_of_peak_sustained_active \
  build/kbench run build-x/prof/prof.ini -q > $R/ncu-stalls.txt 2>&1; echo "ncu2 rc $?"
grep -E "^  [a-zA-Z_].*\(|stalled|inst_executed|issue_active" $R/ncu-stalls.txt | awk '$NF+0 > 0.05 || /\(/ || /inst_exec|issue_active/' | head -80
tar czf $OUT/rp.tgz -C /tmp rp
