#!/bin/sh
# One call's worth of checks on the GPU machine after a merge of core and
# family changes (what CI cannot run):
#   1. the first sweep of a fresh machine (verify/first-sweep.ini), before
#      anything else touches the GPU, with nvidia-smi's clocks before it;
#   2. `kbench check` on every plugin (tests/gpu/check.sh);
#   3. the families' GPU tests: reduce, transpose and matmul gpu.sh in full;
#      sort's correctness steps and memcheck of onesweep-split-hold (its
#      other sanitizer steps take ~8 minutes: plugins/sort/gpu.sh runs them);
#   4. the A/A test of compare (verify/aa.ini run twice, then compare);
#   5. the first sweep again, now on a warm GPU.
#   tests/gpu/verify.sh BUILD [STEP...]    logs in $OUT/verify (or ./verify-logs)
# STEPs (default: all, in this order): first check families sort aa again.
# Exit status: 0 when every step passed, 1 otherwise, 2 on bad usage.
set -u
[ $# -ge 1 ] || { echo "usage: tests/gpu/verify.sh BUILD [STEP...]" >&2; exit 2; }
build=$1
shift
steps=${*:-first check families sort aa again}
want() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }
root=$(cd "$(dirname "$0")/../.." && pwd)
kb="$build/kbench"
[ -x "$kb" ] || { echo "verify.sh: no kbench at $kb" >&2; exit 2; }
logs=${OUT:-$PWD/verify-logs}/verify
mkdir -p "$logs"
status=0
step() { # name rc
    if [ "$2" -eq 0 ]; then echo "verify: $1 ok"; else echo "verify: $1 FAILED (exit $2)"; status=1; fi
}
t0=$(date +%s)
if want first; then
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,pstate,temperature.gpu,power.draw \
    --format=csv >"$logs/clocks-before.csv" 2>&1
"$kb" run "$root/tests/gpu/verify/first-sweep.ini" -o "$logs/first" >"$logs/first.txt" 2>&1
step "first sweep" $?
fi
if want check; then
OUT="$logs/check" sh "$root/tests/gpu/check.sh" "$build" >"$logs/check.log" 2>&1
step "kbench check (every plugin)" $?
fi
if want families; then
for fam in reduce transpose matmul; do
    OUT="$logs" sh "$root/plugins/$fam/gpu.sh" "$build" >"$logs/$fam.log" 2>&1
    step "$fam gpu.sh" $?
done
fi
if want sort; then
"$kb" run "$root/plugins/sort/gpu-correctness.ini" -o "$logs/sort-correctness" -q \
    >"$logs/sort-correctness.txt" 2>&1
step "sort correctness" $?
"$kb" run "$root/plugins/sort/gpu-split.ini" -o "$logs/sort-split" -q >"$logs/sort-split.txt" 2>&1
step "sort split correctness" $?
compute-sanitizer --tool memcheck --target-processes all --error-exitcode 99 --print-limit 20 \
    "$kb" run "$root/plugins/sort/gpu-sanitize-split.ini" -q >"$logs/sort-split-memcheck.txt" 2>&1
step "sort split memcheck (onesweep-split-hold, its default tile)" $?
fi
if want aa; then
"$kb" run "$root/tests/gpu/verify/aa.ini" -o "$logs/aa1" -q >"$logs/aa1.txt" 2>&1
step "A/A run 1" $?
"$kb" run "$root/tests/gpu/verify/aa.ini" -o "$logs/aa2" -q >"$logs/aa2.txt" 2>&1
step "A/A run 2" $?
"$kb" compare "$logs/aa1/results.json" "$logs/aa2/results.json" >"$logs/aa-compare.txt" 2>&1
step "A/A compare (exit 0: no row judged slower)" $?
fi
if want again; then
"$kb" run "$root/tests/gpu/verify/first-sweep.ini" -o "$logs/again" >"$logs/again.txt" 2>&1
step "first sweep again (warm)" $?
fi
echo "verify: $(($(date +%s) - t0)) s"
[ -f "$logs/first.txt" ] && echo "--- first sweep (fresh machine)" && grep -E "point|cub|onepass|suspect" "$logs/first.txt" | grep -v "^ *variant"
[ -f "$logs/again.txt" ] && echo "--- first sweep again (warm)" && grep -E "point|cub|onepass|suspect" "$logs/again.txt" | grep -v "^ *variant"
[ -f "$logs/aa-compare.txt" ] && echo "--- A/A compare" && tail -4 "$logs/aa-compare.txt"
for f in "$logs"/sort-*.txt; do [ -f "$f" ] || continue; echo "--- $(basename "$f")"; grep -E "summary|ERROR SUMMARY" "$f" | tail -2; done
for f in "$logs"/*.log; do [ -f "$f" ] || continue; echo "--- $(basename "$f")"; tail -4 "$f"; done
exit $status
