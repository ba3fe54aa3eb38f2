#!/bin/sh
# One GPU-machine session, everything in one call: the Criterion tests with
# the GPU present, the reduce GPU tests (plugins/reduce/gpu.sh), `kbench check` on
# every plugin with every variant (tests/gpu/check.sh), the overhead check
# (tests/overhead/run.sh) and optionally an experiment file; every log is
# packed into $OUT/logs.tar.gz and a short summary is printed last.
#   tests/gpu/session.sh BUILD_DIR [INI...]
set -u
build=${1:?usage: tests/gpu/session.sh BUILD_DIR [INI...]}
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
final=${OUT:-$PWD/gpu-session}
work=$(mktemp -d)
mkdir -p "$final"
export LD_LIBRARY_PATH="$root/$build/devlibs:${LD_LIBRARY_PATH:-}"
cd "$root"
summary=""
add() { summary="$summary$1
"; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,utilization.gpu \
    --format=csv >"$work/nvidia-smi.txt" 2>&1
add "gpu: $(tail -1 "$work/nvidia-smi.txt")"

for t in "$build"/tests/test_*; do
    [ -x "$t" ] || continue
    if "$t" --jobs 1 >"$work/$(basename "$t").log" 2>&1; then add "ok      $(basename "$t")"; else
        add "FAILED  $(basename "$t") (see its log)"; fi
done

OUT="$work/gpu" sh plugins/reduce/gpu.sh "$build" >"$work/gpu-tests.log" 2>&1
add "$(sed -n '/---- reduce GPU tests ----/,$p' "$work/gpu-tests.log")"

OUT="$work/check" sh tests/gpu/check.sh "$build" >"$work/check.log" 2>&1
add "$(sed -n '/---- kbench check ----/,$p' "$work/check.log")"

OUT="$work" sh tests/overhead/run.sh "$build" >"$work/overhead.log" 2>&1
add "$(tail -1 "$work/overhead.log")"

for ini in "$@"; do
    name=$(basename "$ini" .ini)
    "$build/kbench" run -q "$ini" -o "$work/$name" >"$work/$name.txt" 2>&1
    add "$name: exit $? ($(grep '^summary:' "$work/$name.txt" | tail -1))"
    cp "$work/$name.txt" "$final/$name.txt"
    cp "$work/$name/results.csv" "$final/$name.csv" 2>/dev/null
done

tar -C "$work" -czf "$final/logs.tar.gz" .
echo "==== GPU session summary ===="
printf '%s' "$summary"
