#!/bin/sh
# GPU tests of the matmul plugin (needs a CUDA device; CI has none).
#   sh plugins/matmul/gpu.sh BUILD_DIR
# 1. kbench check matmul: the conformance check with every CUDA variant.
# 2. kbench runs gpu-correctness.ini: every CUDA variant at awkward shapes
#    (1 x 1 x 1, 1 x 4097 x 3, 127 x 129 x 131, the tutorial's 2000 x 80 x 2000
#    and its twin, 4095 x 4097 x 511, 4096^3 ...), random and exact inputs,
#    every tile, stage count and block size; the tensor-core variants and
#    library references at every precision (tf32, bf16, fp32x3) at the same
#    kinds of shapes; any FAIL or error fails the script.
# 3. compute-sanitizer memcheck and racecheck run kbench on gpu-sanitize.ini
#    (every kernel instance, the tensor-core ones at every precision);
#    any reported error or hazard fails the script.
# 4. The kernels' resource report (registers, spills, shared memory), rebuilt
#    from the plugin's object with cuobjdump when it is there (informational).
# The steps are tests/gpu/lib.sh's.  Logs go to $OUT/matmul (when OUT is set) or
# ./gpu-test-logs/matmul.  A short summary is printed last.  Exit status: 0 when
# every step passed, 1 otherwise, 2 on bad usage.
set -u
[ $# -eq 1 ] || { echo "usage: sh plugins/matmul/gpu.sh BUILD_DIR" >&2; exit 2; }
. "$(cd "$(dirname "$0")/../.." && pwd)/tests/gpu/lib.sh"
gpu_init matmul "$1"
gpu_check
gpu_correctness
gpu_sanitize

if command -v cuobjdump >/dev/null 2>&1; then
    : >"$logs/resources.log"
    for name in matmul_kernels.cu.o matmul_tc.cu.o matmul_wgmma.cu.o; do
        obj=$(find "$build/plugins/matmul" -name "$name" 2>/dev/null | head -1)
        [ -n "$obj" ] && cuobjdump --dump-resource-usage "$obj" >>"$logs/resources.log" 2>&1
    done
    [ -s "$logs/resources.log" ] && gpu_note "info    kernel resources: $logs/resources.log"
fi
gpu_finish
