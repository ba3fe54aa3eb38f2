#!/bin/sh
# ncu: onesweep-early's kernels vs CUB's, 2^28 u32 and f32 keys
export LD_LIBRARY_PATH=$PWD/build/devlibs
R=/tmp/r21; mkdir -p $R; T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
S=smsp__average_warps_issue_stalled
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,lts__t_sectors_op_write.sum,lts__t_sectors_op_red.sum,lts__t_sectors_op_atom.sum
for s in barrier long_scoreboard short_scoreboard mio_throttle lg_throttle wait math_pipe_throttle dispatch_stall membar no_instruction not_selected selected drain branch_resolving; do M=$M,${S}_${s}_per_issue_active.ratio; done
timeout 300 ncu --clock-control none --kernel-name regex:'oe_|Onesweep|Histogram|ExclusiveSum' --metrics $M build/kbench run tests/gpu/scratch/prof2.ini -q > $R/ncu.txt 2>&1; el "ncu rc=$?"
grep -c gpu__time_duration $R/ncu.txt
grep -E '^\s+(oe_|void|_Z)|gpu__time|inst_executed|issue_active' $R/ncu.txt | cut -c1-130 | head -80
tar czf $OUT/r21.tgz -C /tmp r21
