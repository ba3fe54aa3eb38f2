#!/bin/sh
# GPU tests of the sort family (needs a CUDA device; CI has none).
#   sh plugins/sort/gpu.sh BUILD_DIR
# 1. kbench runs gpu-correctness.ini: every CUDA variant (within its size
#    limit), every key type, value mode and distribution, at awkward sizes;
#    any FAIL or error (or a non-zero exit) fails the script.  Then
#    gpu-split.ini: the onesweep-split variants' pairs at every tile shape,
#    and gpu-skip.ini: inputs whose pass plan skips passes or copies.
# 2. `kbench check sort`: the conformance check, which runs every variant
#    several times and verifies each run (onesweep's status words carry a
#    per-run epoch: this is where a stale word from an earlier run would show).
# 3. compute-sanitizer memcheck runs kbench on gpu-sanitize.ini (small sizes,
#    every variant), racecheck on gpu-racecheck.ini (the own GPU variants at
#    a few small sizes: racecheck of the whole sanitize file outran 9 minutes
#    on an H200); any reported error or hazard fails the script.
# The steps are tests/gpu/lib.sh's.  Logs go to $OUT/sort (when OUT is set) or
# ./gpu-test-logs/sort.  A short summary is printed last.  Exit status: 0 when
# every step passed, 1 otherwise, 2 on bad usage.
set -u
[ $# -eq 1 ] || { echo "usage: sh plugins/sort/gpu.sh BUILD_DIR" >&2; exit 2; }
. "$(cd "$(dirname "$0")/../.." && pwd)/tests/gpu/lib.sh"
gpu_init sort "$1"
gpu_correctness
gpu_correctness "$here/gpu-split.ini" split-correctness
gpu_correctness "$here/gpu-skip.ini" skip-correctness
gpu_check
gpu_sanitize
gpu_finish
