#!/bin/sh
# GPU tests of the sort family (needs a CUDA device; CI has none).
#   sh plugins/sort/gpu.sh BUILD_DIR
# 1. kbench runs gpu-correctness.ini: every CUDA variant (within its size
#    limit), every key type, value mode and distribution, at awkward sizes;
#    any FAIL or error (or a non-zero exit) fails the script.
# 2. `kbench check sort`: the conformance check, which runs every variant
#    several times and verifies each run (onesweep's status words carry a
#    per-run epoch: this is where a stale word from an earlier run would show).
# 3. compute-sanitizer memcheck and racecheck run kbench on gpu-sanitize.ini
#    (small sizes); any reported error fails the script.
# Logs go to $OUT (when set) or ./gpu-test-logs/sort.  A short summary is
# printed last.  Exit status: 0 when every step passed, 1 otherwise, 2 on bad
# usage.
set -u
[ $# -ge 1 ] || { echo "usage: sh plugins/sort/gpu.sh BUILD_DIR" >&2; exit 2; }
build=$1
here=$(cd "$(dirname "$0")" && pwd)
logs=${OUT:-$PWD/gpu-test-logs}/sort
mkdir -p "$logs"
kbench="$build/kbench"
[ -x "$kbench" ] || { echo "gpu.sh: no kbench at $kbench (build it first)" >&2; exit 2; }
summary=""
status=0

note() { summary="$summary$1
"; }

# The table's last line reads "summary: P pass, F FAIL, E error, S skipped; exit code C".
check_run() { # name log rc
    line=$(grep '^summary:' "$2" | tail -1)
    fails=$(echo "$line" | sed -n 's/.* \([0-9]*\) FAIL, \([0-9]*\) error.*/\1 \2/p')
    if [ "$3" -ne 0 ] || [ -z "$line" ] || [ "$fails" != "0 0" ]; then
        note "FAILED  $1: exit $3; ${line:-no summary line} (log: $2)"
        grep -E ' (FAIL|error) ' "$2" | head -20
        status=1
    else
        note "ok      $1: $line"
    fi
}

"$kbench" run "$here/gpu-correctness.ini" -q -o "$logs/correctness" >"$logs/correctness.log" 2>&1
check_run correctness "$logs/correctness.log" $?

"$kbench" check sort >"$logs/check.log" 2>&1
rc=$?
line=$(grep '^summary:' "$logs/check.log" | tail -1)
if [ $rc -ne 0 ] || ! echo "$line" | grep -q ' 0 FAIL'; then
    note "FAILED  check: exit $rc; ${line:-no summary line} (log: $logs/check.log)"
    grep -E '^FAIL' "$logs/check.log" | head -20
    status=1
else
    note "ok      check: $line"
fi

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

echo "---- sort GPU tests ----"
printf '%s' "$summary"
[ $status -eq 0 ] && echo "all passed" || echo "some steps failed"
exit $status
