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
# Logs go to $OUT (when set) or ./gpu-test-logs/matmul.  A short summary is
# printed last.  Exit status: 0 when every step passed, 1 otherwise, 2 on bad
# usage.
set -u
[ $# -ge 1 ] || { echo "usage: sh plugins/matmul/gpu.sh BUILD_DIR" >&2; exit 2; }
build=$1
here=$(cd "$(dirname "$0")" && pwd)
logs=${OUT:-$PWD/gpu-test-logs}/matmul
mkdir -p "$logs"
kbench="$build/kbench"
[ -x "$kbench" ] || { echo "gpu.sh: no kbench at $kbench (build it first: tools/setup.sh)" >&2; exit 2; }
summary=""
status=0

note() { summary="$summary$1
"; }

# The table's last line reads "summary: P pass, F FAIL, E error, S skipped; exit code C".
check_run() { # name log rc
    line=$(grep '^summary:' "$2" | tail -1)
    fails=$(echo "$line" | sed -n 's/.* \([0-9]*\) FAIL, \([0-9]*\) error.*/\1 \2/p')
    passes=$(echo "$line" | sed -n 's/^summary: \([0-9]*\) pass.*/\1/p')
    # A run in which nothing passed (every variant skipped: no GPU found)
    # proves nothing and fails too.
    if [ "$3" -ne 0 ] || [ -z "$line" ] || [ "$fails" != "0 0" ] || [ "${passes:-0}" -eq 0 ]; then
        note "FAILED  $1: exit $3; ${line:-no summary line} (log: $2)"
        grep -E ' (FAIL|error) ' "$2" | head -20
        status=1
    else
        note "ok      $1: $line"
    fi
}

# 1. Conformance, CUDA variants included.
"$kbench" check matmul >"$logs/check.log" 2>&1
rc=$?
line=$(grep '^summary:' "$logs/check.log" | tail -1)
if [ $rc -ne 0 ]; then
    note "FAILED  check: exit $rc; ${line:-no summary} (log: $logs/check.log)"
    grep -E '^FAIL' "$logs/check.log" | head -20
    status=1
else
    note "ok      check: $line"
fi

# 2. Correctness at awkward shapes.
"$kbench" run "$here/gpu-correctness.ini" -q -o "$logs/correctness" >"$logs/correctness.log" 2>&1
check_run correctness "$logs/correctness.log" $?

# 3. compute-sanitizer.
if command -v compute-sanitizer >/dev/null 2>&1; then
    for tool in memcheck racecheck; do
        log="$logs/sanitize-$tool.log"
        compute-sanitizer --tool $tool --error-exitcode 99 --print-limit 20 \
            "$kbench" run "$here/gpu-sanitize.ini" -q >"$log" 2>&1
        rc=$?
        # memcheck ends with "ERROR SUMMARY: N errors", racecheck with
        # "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)".
        errors=$(grep -E '(ERROR|RACECHECK) SUMMARY: [0-9]+' "$log" | tail -1)
        if [ $rc -ne 0 ] || ! echo "$errors" | grep -qE 'ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards displayed \(0 errors, 0 warnings\)'; then
            note "FAILED  $tool: exit $rc; ${errors:-no error summary} (log: $log)"
            grep -m 20 -E '=========  (Invalid|Error|Race|.*hazard)' "$log"
            status=1
        else
            check_run "$tool (kbench results)" "$log" 0
            note "ok      $tool: $errors"
        fi
    done
else
    note "FAILED  compute-sanitizer not found"
    status=1
fi

# 4. Registers and spills of each kernel (informational).
if command -v cuobjdump >/dev/null 2>&1; then
    : >"$logs/resources.log"
    for name in matmul_kernels.cu.o matmul_tc.cu.o matmul_wgmma.cu.o; do
        obj=$(find "$build/plugins/matmul" -name "$name" 2>/dev/null | head -1)
        [ -n "$obj" ] && cuobjdump --dump-resource-usage "$obj" >>"$logs/resources.log" 2>&1
    done
    [ -s "$logs/resources.log" ] && note "info    kernel resources: $logs/resources.log"
fi

echo "---- matmul GPU tests ----"
printf '%s' "$summary"
[ $status -eq 0 ] && echo "all passed" || echo "some steps failed"
exit $status
