# Shared steps of the families' GPU scripts (plugins/<family>/gpu.sh), sourced
# by them: sh is POSIX, the functions set the caller's variables.
#   gpu_init FAMILY BUILD_DIR   logs in $OUT/FAMILY (or ./gpu-test-logs/FAMILY)
#   gpu_check                   kbench check FAMILY
#   gpu_correctness [INI [NAME]] kbench run INI (default: gpu-correctness.ini
#                               beside the calling script), logs as NAME
#                               (default: correctness)
#   gpu_sanitize [INI [RACE]]   compute-sanitizer memcheck on INI (default:
#                               gpu-sanitize.ini), racecheck on RACE (default:
#                               gpu-racecheck.ini where the family has one, a
#                               smaller file, else INI)
#   gpu_finish                  prints the summary, exits 0 (all passed) or 1
# gpu_note "line" adds a line of the caller's own to the summary.  A step
# fails on a non-zero exit, on any FAIL or error row, on a run in which
# nothing passed (every variant skipped: no GPU in use, nothing checked), and
# on any error or hazard the sanitizer reports.

gpu_init() { # family build
    family=$1
    build=$2
    here=$(cd "$(dirname "$0")" && pwd)
    logs=${OUT:-$PWD/gpu-test-logs}/$family
    mkdir -p "$logs"
    kbench="$build/kbench"
    [ -x "$kbench" ] || { echo "gpu.sh: no kbench at $kbench (build it first: tools/setup.sh)" >&2; exit 2; }
    summary=""
    status=0
}

gpu_note() { summary="$summary$1
"; }

# kbench run's table ends with "summary: P pass, F FAIL, E error, S skipped; exit code C".
gpu_check_run() { # name log rc
    line=$(grep '^summary:' "$2" | tail -1)
    fails=$(echo "$line" | sed -n 's/.* \([0-9]*\) FAIL, \([0-9]*\) error.*/\1 \2/p')
    passes=$(echo "$line" | sed -n 's/^summary: \([0-9]*\) pass.*/\1/p')
    if [ "${passes:-0}" = 0 ]; then
        gpu_note "FAILED  $1: nothing passed; ${line:-no summary line} (log: $2)"
        status=1
    elif [ "$3" -ne 0 ] || [ -z "$line" ] || [ "$fails" != "0 0" ]; then
        gpu_note "FAILED  $1: exit $3; ${line:-no summary line} (log: $2)"
        grep -E ' (FAIL|error) ' "$2" | head -20
        status=1
    else
        gpu_note "ok      $1: $line"
    fi
}

gpu_check() {
    "$kbench" check "$family" >"$logs/check.log" 2>&1
    rc=$?
    line=$(grep '^summary:' "$logs/check.log" | tail -1)
    if [ $rc -ne 0 ] || ! echo "$line" | grep -q ' 0 FAIL'; then
        gpu_note "FAILED  check: exit $rc; ${line:-no summary line} (log: $logs/check.log)"
        grep -E '^FAIL' "$logs/check.log" | head -20
        status=1
    else
        gpu_note "ok      check: $line"
    fi
}

gpu_correctness() { # [ini [name]]
    name=${2:-correctness}
    "$kbench" run "${1:-$here/gpu-correctness.ini}" -q -o "$logs/$name" >"$logs/$name.log" 2>&1
    gpu_check_run "$name" "$logs/$name.log" $?
}

gpu_sanitize() { # [ini [race-ini]]
    if ! command -v compute-sanitizer >/dev/null 2>&1; then
        gpu_note "FAILED  compute-sanitizer not found"
        status=1
        return
    fi
    for tool in memcheck racecheck; do
        ini=${1:-$here/gpu-sanitize.ini}
        if [ $tool = racecheck ]; then
            if [ -n "${2:-}" ]; then
                ini=$2
            elif [ -z "${1:-}" ] && [ -f "$here/gpu-racecheck.ini" ]; then
                ini="$here/gpu-racecheck.ini"
            fi
        fi
        log="$logs/sanitize-$tool.log"
        compute-sanitizer --tool $tool --target-processes all --error-exitcode 99 --print-limit 20 \
            "$kbench" run "$ini" -q >"$log" 2>&1
        rc=$?
        # memcheck ends with "ERROR SUMMARY: N errors", racecheck with
        # "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)".
        errors=$(grep -E '(ERROR|RACECHECK) SUMMARY: [0-9]+' "$log" | tail -1)
        if [ $rc -ne 0 ] || ! echo "$errors" | grep -qE 'ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards displayed \(0 errors, 0 warnings\)'; then
            gpu_note "FAILED  $tool: exit $rc; ${errors:-no error summary} (log: $log)"
            grep -m 20 -E '=========  (Invalid|Error|Race|.*hazard)' "$log"
            status=1
        else
            gpu_check_run "$tool (kbench results, $(basename "$ini"))" "$log" 0
            gpu_note "ok      $tool: $errors"
        fi
    done
}

gpu_finish() {
    echo "---- $family GPU tests ----"
    printf '%s' "$summary"
    [ $status -eq 0 ] && echo "all passed" || echo "some steps failed"
    exit $status
}
