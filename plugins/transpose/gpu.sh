#!/bin/sh
# GPU tests of the transpose plugin (needs a CUDA device; CI has none).
#   sh plugins/transpose/gpu.sh BUILD_DIR
# 1. kbench check transpose: the conformance check, CUDA variants included.
# 2. kbench runs gpu-correctness.ini: every CUDA variant, every type, at
#    awkward shapes, verified bit for bit; any FAIL or error (or a non-zero
#    exit) fails the script.
# 3. compute-sanitizer memcheck and racecheck run kbench on gpu-sanitize.ini
#    (small shapes); any reported error fails the script.
# The steps are tests/gpu/lib.sh's.  Logs go to $OUT/transpose (when OUT is set) or
# ./gpu-test-logs/transpose.  A short summary is printed last.  Exit status: 0 when
# every step passed, 1 otherwise, 2 on bad usage.
set -u
[ $# -eq 1 ] || { echo "usage: sh plugins/transpose/gpu.sh BUILD_DIR" >&2; exit 2; }
. "$(cd "$(dirname "$0")/../.." && pwd)/tests/gpu/lib.sh"
gpu_init transpose "$1"
gpu_check
gpu_correctness
gpu_sanitize
gpu_finish
