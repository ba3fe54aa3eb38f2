#!/bin/sh
# GPU tests of the reduce family (needs a CUDA device; CI has none).
#   sh plugins/reduce/gpu.sh BUILD_DIR [--study]
# 1. kbench runs gpu-correctness.ini: every CUDA variant, every type, at
#    awkward sizes (with exact-input sections: tolerance 0 for every
#    variant); any FAIL or error (or a non-zero exit) fails the script.
# 2. compute-sanitizer memcheck and racecheck run kbench on gpu-sanitize.ini
#    (small sizes, every CUDA variant); any reported error fails the script.
# 3. with --study, conf/reduce-study.ini runs too (timings, not checked).
# The steps are tests/gpu/lib.sh's, as the other families' gpu.sh.  Logs go to
# $OUT/reduce (when OUT is set) or ./gpu-test-logs/reduce.  A short summary
# is printed last.  Exit status: 0 when every step passed, 1 otherwise, 2 on
# bad usage.
set -u
[ $# -ge 1 ] || { echo "usage: sh plugins/reduce/gpu.sh BUILD_DIR [--study]" >&2; exit 2; }
study=${2:-}
. "$(cd "$(dirname "$0")/../.." && pwd)/tests/gpu/lib.sh"
gpu_init reduce "$1"
root=$(cd "$here/../.." && pwd)
gpu_correctness
gpu_sanitize
if [ "$study" = "--study" ]; then
    "$kbench" run "$root/conf/reduce-study.ini" -o "$logs/study" >"$logs/study.log" 2>&1
    gpu_check_run study "$logs/study.log" $?
fi
gpu_finish
