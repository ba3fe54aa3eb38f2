#!/bin/sh
# Issue 23's targets on one GPU, in one call: conf/targets.ini (reduce,
# transpose, SGEMM and the tensor cores against their libraries), sort's
# plugins/sort/targets.ini (keys, pairs, distributions, against CUB) and the
# overhead check (tests/overhead/run.sh).  Everything it writes goes into
# $OUT/targets-<gpu>.tgz, one file, so that it comes back whole.
#   tests/gpu/targets.sh BUILD [SORT_SECONDS]
# SORT_SECONDS (default 300) bounds the sort run: the points it reaches are
# kept in its journal and table when it is stopped.
set -u
build=${1:?usage: tests/gpu/targets.sh BUILD [SORT_SECONDS]}
sort_s=${2:-300}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$PWD/targets-out}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tr -c 'A-Za-z0-9\n' '-' | sed 's/-*$//')
work=$out/targets-$gpu
mkdir -p "$work"
export LD_LIBRARY_PATH="$root/$build/devlibs:${LD_LIBRARY_PATH:-}"
cd "$root"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv >"$work/gpu.txt" 2>&1
"$build/kbench" --version >>"$work/gpu.txt" 2>&1 # the build's revision (the device copy's git metadata may be older)
t0=$(date +%s)
"$build/kbench" run conf/targets.ini -o "$work/targets" >"$work/targets.txt" 2>&1
echo "targets.ini: exit $? in $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
OUT="$work" sh tests/overhead/run.sh "$build" >"$work/overhead.log" 2>&1
echo "$(tail -1 "$work/overhead.log") (exit $?, $(( $(date +%s) - t0 )) s)"
t0=$(date +%s)
timeout "$sort_s" "$build/kbench" run plugins/sort/targets.ini -o "$work/sort" >"$work/sort.txt" 2>&1
echo "sort targets.ini: exit $? in $(( $(date +%s) - t0 )) s"
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv >>"$work/gpu.txt" 2>&1
tail -n 2 "$work/targets.txt" "$work/sort.txt"
(cd "$out" && tar czf "targets-$gpu.tgz" "targets-$gpu" && rm -rf "targets-$gpu")
ls -la "$out"
