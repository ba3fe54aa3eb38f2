#!/bin/sh
# GPU tests of the transpose plugin (needs a CUDA device; CI has none).
#   sh plugins/transpose/gpu.sh BUILD_DIR
# 1. kbench check transpose: the conformance check, CUDA variants included.
# 2. kbench runs gpu-correctness.ini: every CUDA variant, every type, at
#    awkward shapes, verified bit for bit; any FAIL or error (or a non-zero
#    exit) fails the script.
# 3. compute-sanitizer memcheck and racecheck run kbench on gpu-sanitize.ini
#    (small shapes); any reported error fails the script.
# Logs go to $OUT/transpose (when OUT is set) or ./gpu-test-logs/transpose.
# A short summary is printed last.  Exit status: 0 when every step passed,
# 1 otherwise, 2 on bad usage.
set -u
[ $# -eq 1 ] || { echo "usage: sh plugins/transpose/gpu.sh BUILD_DIR" >&2; exit 2; }
build=$1
here=$(cd "$(dirname "$0")" && pwd)
logs=${OUT:-$PWD/gpu-test-logs}/transpose
mkdir -p "$logs"
kbench="$build/kbench"
[ -x "$kbench" ] || { echo "gpu.sh: no kbench at $kbench (build it first)" >&2; exit 2; }
summary=""
status=0

note() { summary="$summary$1
"; }

# kbench run's table ends with "summary: P pass, F FAIL, E error, S skipped; exit code C".
check_run() { # name log rc
    line=$(grep '^summary:' "$2" | tail -1)
    fails=$(echo "$line" | sed -n 's/.* \([0-9]*\) FAIL, \([0-9]*\) error.*/\1 \2/p')
    passes=$(echo "$line" | sed -n 's/^summary: \([0-9]*\) pass.*/\1/p')
    if [ "${passes:-0}" = 0 ]; then
        # Everything skipped (no GPU in use): nothing was checked.
        note "FAILED  $1: nothing passed; ${line:-no summary line} (log: $2)"
        status=1
    elif [ "$3" -ne 0 ] || [ -z "$line" ] || [ "$fails" != "0 0" ]; then
        note "FAILED  $1: exit $3; ${line:-no summary line} (log: $2)"
        grep -E ' (FAIL|error) ' "$2" | head -20
        status=1
    else
        note "ok      $1: $line"
    fi
}

"$kbench" check transpose >"$logs/check.log" 2>&1
rc=$?
line=$(grep '^summary:' "$logs/check.log" | tail -1)
if [ $rc -ne 0 ] || ! echo "$line" | grep -q ' 0 FAIL'; then
    note "FAILED  check: exit $rc; ${line:-no summary line} (log: $logs/check.log)"
    grep -E '^FAIL' "$logs/check.log" | head -20
    status=1
else
    note "ok      check: $line"
fi

"$kbench" run "$here/gpu-correctness.ini" -q -o "$logs/correctness" >"$logs/correctness.log" 2>&1
check_run correctness "$logs/correctness.log" $?

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

echo "---- transpose GPU tests ----"
printf '%s' "$summary"
[ $status -eq 0 ] && echo "all passed" || echo "some steps failed"
exit $status
