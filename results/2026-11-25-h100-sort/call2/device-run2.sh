#!/bin/bash
# The second device call of the sort study (issue 23), from the repository
# root with the carried folder D (build/ with kbench, plugins/kbench-sort.so,
# devlibs/; inis/): timing (targets2.ini), then onesweep-prefetch's
# correctness (gpu-split.ini) and compute-sanitizer memcheck and racecheck
# (gpu-sanitize-split.ini), then ncu of one pairs pass.  Packs $OUT/sort.tgz
# after each step.
#   bash D/device-run2.sh D
set -u
D=$(cd "$1" && pwd)
export LD_LIBRARY_PATH=$D/build/devlibs
export KBENCH_PLUGIN_PATH=$D/build/plugins
K=$D/build/kbench
R=$OUT/sort
mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit \
    --format=csv >"$R/gpu.txt" 2>&1
. tests/gpu/lib.sh
gpu_init sort "$D/build"
logs=$R
t0=$(date +%s)
pack() { tar czf "$OUT/sort.tgz" -C "$OUT" sort; echo "$1 done $(( $(date +%s) - t0 )) s"; }
timeout 200 "$K" run "$D/inis/targets2.ini" -o "$R/targets2" >"$R/targets2.log" 2>&1
gpu_check_run targets2 "$R/targets2.log" $?
pack timing
timeout 60 "$K" run "$D/inis/gpu-split.ini" -q -o "$R/prefetch-correctness" \
    --set variants=onesweep-prefetch >"$R/prefetch-correctness.log" 2>&1
gpu_check_run prefetch-correctness "$R/prefetch-correctness.log" $?
pack correctness
for tool in memcheck racecheck; do
    timeout 40 compute-sanitizer --tool $tool --target-processes all --error-exitcode 99 \
        --print-limit 20 "$K" run "$D/inis/gpu-sanitize-split.ini" -q \
        --set variants=onesweep-prefetch >"$R/sanitize-$tool.log" 2>&1
    echo "$tool rc=$? $(grep -E '(ERROR|RACECHECK) SUMMARY' "$R/sanitize-$tool.log" | tail -1)" \
        >>"$R/summary-sanitize.txt"
    gpu_check_run "$tool" "$R/sanitize-$tool.log" 0
done
cat "$R/summary-sanitize.txt"
pack sanitizers
# the second pass of a run (setup's untimed run of onesweep-early's kernels
# comes first for onesweep-prefetch)
for vs in onesweep-early:1 onesweep-prefetch:5; do
    v=${vs%:*}
    timeout 30 ncu --clock-control none --target-processes all -k 'regex:oe_pass' \
        --launch-skip ${vs#*:} --launch-count 1 --section SpeedOfLight --section Occupancy \
        --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis \
        --section SchedulerStats \
        "$K" run "$D/inis/ncu2.ini" -q --set variants=$v >"$R/ncu-$v.txt" 2>&1
done
pack ncu
printf '%s' "$summary" | tee "$R/summary.txt"
tar czf "$OUT/sort.tgz" -C "$OUT" sort && rm -rf "$R"
