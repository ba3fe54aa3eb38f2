#!/bin/bash
# One device call of the sort study (issue 23): run from the repository root
# with the carried folder D holding build/ (kbench, plugins/kbench-sort.so,
# devlibs/) and inis/.  Everything lands in $OUT/sort and one tarball.
#   bash D/device-run.sh D [timing|ncu|verify|all]
set -u
D=$(cd "$1" && pwd)
what=${2:-all}
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
if [ "$what" != verify ]; then
    timeout 300 "$K" run "$D/inis/targets.ini" -o "$R/targets" >"$R/targets.log" 2>&1
    gpu_check_run targets "$R/targets.log" $?
    pack timing
fi
if [ "$what" = all ] || [ "$what" = ncu ]; then
    # the second pass of a run: setup's untimed run of onesweep-early's
    # kernels comes first for every onesweep-early variant
    for vs in onesweep-early:1 onesweep-split:5 cub-radix:1; do
        v=${vs%:*}
        timeout 60 ncu --clock-control none --target-processes all -k 'regex:oe_pass|Onesweep' \
            --launch-skip ${vs#*:} --launch-count 1 --section SpeedOfLight --section Occupancy \
            --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis \
            --section SchedulerStats \
            "$K" run "$D/inis/ncu.ini" -q --set variants=$v >"$R/ncu-$v.txt" 2>&1
    done
    pack ncu
fi
if [ "$what" != timing ] && [ "$what" != ncu ]; then
    timeout 200 "$K" run "$D/inis/gpu-split.ini" -q -o "$R/split-correctness" >"$R/split-correctness.log" 2>&1
    gpu_check_run split-correctness "$R/split-correctness.log" $?
    pack correctness
    gpu_sanitize "$D/inis/gpu-sanitize-split.ini" "$D/inis/gpu-sanitize-split.ini"
    pack sanitizers
fi
printf '%s' "$summary" | tee "$R/summary.txt"
grep -E "^summary|FAIL|error" "$R/targets.log" | head -5
tar czf "$OUT/sort.tgz" -C "$OUT" sort && rm -rf "$R"
