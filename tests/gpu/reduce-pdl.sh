#!/bin/sh
# onepass-pdl and onepass-pdl-late on the GPU, in one call: `kbench check`, the correctness file
# (plugins/reduce/gpu-correctness.ini) for onepass-pdl beside onepass and
# cub, memcheck, racecheck and synccheck of gpu-sanitize.ini's onepass-pdl
# rows, then conf/targets.ini's reduce sections (single launches and back to
# back) twice.  One archive back: $OUT/reduce-pdl.tgz.
#   tests/gpu/reduce-pdl.sh BUILD
set -u
build=${1:?usage: tests/gpu/reduce-pdl.sh BUILD}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$PWD/reduce-pdl-out}
w=$out/reduce-pdl
mkdir -p "$w"
export LD_LIBRARY_PATH="$root/$build/devlibs:${LD_LIBRARY_PATH:-}"
cd "$root"
kb=$build/kbench
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >"$w/gpu.txt" 2>&1
step() { echo "$1: exit $2"; }
"$kb" check reduce --variants onepass-pdl,onepass-pdl-late >"$w/check.txt" 2>&1; step check $?
"$kb" run plugins/reduce/gpu-correctness.ini --variants onepass-pdl,onepass-pdl-late,onepass,cub -q \
    -o "$w/correctness" >"$w/correctness.txt" 2>&1; step correctness $?
for tool in memcheck racecheck synccheck; do
    compute-sanitizer --tool $tool --target-processes all --error-exitcode 99 --print-limit 20 \
        "$kb" run plugins/reduce/gpu-sanitize.ini --variants onepass-pdl,onepass-pdl-late -q >"$w/$tool.txt" 2>&1
    step "$tool" $?
done
for r in 1 2; do
    "$kb" run conf/targets.ini --experiment reduce-hot,reduce-f32,reduce-i32 -o "$w/perf$r" \
        >"$w/perf$r.txt" 2>&1; step "perf $r" $?
done
tail -n 2 "$w"/*.txt | grep -E 'summary|SUMMARY|==>' 
(cd "$out" && tar czf reduce-pdl.tgz reduce-pdl && rm -rf reduce-pdl)
