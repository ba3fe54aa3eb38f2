#!/bin/sh
# kbench on every GPU of one host, in one call (a machine of G >= 2 GPUs):
#   1. throughput: conf/targets.ini's reduce-f32, reduce-f64 and
#      transpose-shapes (45 points) with --gpus 0, then --gpus all: wall times;
#   2. sameness: the two runs compared (kbench compare), and reduce-i32 run on
#      GPU 1 alone against GPU 0's rows of run 1 (one GPU at a time);
#   3. which GPU ran each row (gpu_uuid, pci_bus_id in results.csv).
# One archive back: $OUT/multi.tgz.
#   tests/gpu/multi.sh BUILD
set -u
build=${1:?usage: tests/gpu/multi.sh BUILD}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$PWD/multi-out}
w=$out/multi
mkdir -p "$w"
export LD_LIBRARY_PATH="$root/$build/devlibs:${LD_LIBRARY_PATH:-}"
cd "$root"
kb=$build/kbench
nvidia-smi -L >"$w/gpus.txt" 2>&1
nvidia-smi topo -m >>"$w/gpus.txt" 2>&1
ex=reduce-f32,reduce-f64,transpose-shapes
for g in 0 all; do
    t0=$(date +%s.%N)
    "$kb" run conf/targets.ini --experiment $ex --gpus $g -q -o "$w/g$g" >"$w/g$g.txt" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    echo "--gpus $g: exit $rc, wall $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s" | tee -a "$w/summary.txt"
done
"$kb" compare "$w/g0/results.json" "$w/gall/results.json" >"$w/compare-0-all.txt" 2>&1
echo "compare 0 vs all: exit $?; $(grep -i -E 'no change|slower|faster' "$w/compare-0-all.txt" | tail -3 | tr '\n' ' ')" | tee -a "$w/summary.txt"
for g in 0 1; do
    "$kb" run conf/targets.ini --experiment reduce-i32 --gpus $g -q -o "$w/i32-g$g" >"$w/i32-g$g.txt" 2>&1
    echo "reduce-i32 --gpus $g: exit $?" | tee -a "$w/summary.txt"
done
"$kb" compare "$w/i32-g0/results.json" "$w/i32-g1/results.json" >"$w/compare-i32-g0-g1.txt" 2>&1
echo "compare i32 gpu 0 vs gpu 1: exit $?" | tee -a "$w/summary.txt"
tail -n 4 "$w/compare-0-all.txt" "$w/compare-i32-g0-g1.txt"
(cd "$out" && tar czf multi.tgz multi && rm -rf multi)
