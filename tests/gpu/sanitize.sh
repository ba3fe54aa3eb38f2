#!/bin/sh
# kbench run --sanitize TOOL against the real compute-sanitizer (needs a
# GPU and the CUDA toolkit's compute-sanitizer; CI has neither and runs
# tests/test_sanitize.c with a stand-in):
#   1. memcheck on the gpucrash fixture: `ok` passes with no sanitizer
#      line, `illegal` (a write through a bogus pointer) is a failed row
#      that carries memcheck's "Invalid __global__ write" report, and the
#      run exits 1;
#   2. every tool on a small reduce experiment (three CUDA variants, a
#      library among them): memcheck and racecheck must find nothing (exit
#      0, as the family's gpu.sh demands of them); synccheck and initcheck
#      are run and their verdicts printed;
#   3. each worker was started under compute-sanitizer with
#      --target-processes all (the run's stderr shows no "unknown option").
# Logs go to $OUT/sanitize (or ./sanitize-out).  A table is printed last;
# the exit status is 0 when every required step passed, 1 otherwise.
#   tests/gpu/sanitize.sh BUILD
set -u
build=${1:?usage: tests/gpu/sanitize.sh BUILD}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-$PWD/sanitize-out}/sanitize
mkdir -p "$out"
kb="$build/kbench"
status=0
table=""
row() { table="$table$1
"; }

cat >"$out/crash.ini" <<'INI'
[gpu-illegal]
plugin = gpucrash
variants = ok, illegal
n = 1M
warmup = 0
runs = 1
INI
"$kb" run "$out/crash.ini" --plugin-path "$build/tests/fixtures/crash" --sanitize memcheck \
    -o "$out/crash" --force >"$out/crash.txt" 2>"$out/crash.err"
rc=$?
found=$(python3 - "$out/crash/results.json" <<'PY'
import json, sys
rows = {r["variant"]: r for r in json.load(open(sys.argv[1]))["results"]}
ok, bad = rows.get("ok", {}), rows.get("illegal", {})
good = (ok.get("status") == "pass" and not ok.get("sanitizer")
        and bad.get("status") in ("crashed", "error")
        and "Invalid __global__ write" in (bad.get("sanitizer") or ""))
print("yes" if good else "no: ok=%s/%r illegal=%s/%r" % (ok.get("status"), ok.get("sanitizer"),
      bad.get("status"), (bad.get("sanitizer") or "")[:120]))
PY
)
if [ "$rc" = 1 ] && [ "$found" = yes ]; then
    row "ok      memcheck finds gpucrash's illegal write (exit $rc)"
else
    row "FAILED  memcheck on gpucrash: exit $rc, $found (log: $out/crash.txt)"
    status=1
fi

cat >"$out/reduce.ini" <<'INI'
[reduce-small]
plugin = reduce
variants = shuffle, onepass, cub
dtype = f32
n = 1000, 65537
warmup = 0
runs = 1
INI
for tool in memcheck racecheck synccheck initcheck; do
    "$kb" run "$out/reduce.ini" --sanitize $tool -o "$out/reduce-$tool" --force \
        >"$out/reduce-$tool.txt" 2>"$out/reduce-$tool.err"
    rc=$?
    line=$(grep '^summary:' "$out/reduce-$tool.txt" | tail -1)
    if grep -q "unknown option\|could not start" "$out/reduce-$tool.err"; then
        row "FAILED  $tool: the sanitizer refused kbench's command line (log: $out/reduce-$tool.err)"
        status=1
    elif [ "$rc" = 0 ]; then
        row "ok      $tool on reduce: $line"
    elif [ $tool = memcheck ] || [ $tool = racecheck ]; then
        row "FAILED  $tool on reduce: exit $rc; $line (log: $out/reduce-$tool.err)"
        status=1
    else
        row "note    $tool on reduce: exit $rc; $line (log: $out/reduce-$tool.err)"
    fi
done

echo "---- kbench run --sanitize ----"
printf '%s' "$table"
[ $status -eq 0 ] && echo "all required steps passed" || echo "some steps failed"
exit $status
