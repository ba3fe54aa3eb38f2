#!/bin/sh
# kbench core 3 on a GPU machine, in one call:
#   1. containment: tests/fixtures/crash/gpu-contain.ini (an illegal address,
#      a __trap() and a kernel that never ends, between good reduce and
#      gpucrash variants) with --sanitize-on-crash;
#   2. --gpus through NVML: --gpus 0 runs, --gpus 0,0 and --gpus 7 are refused;
#      a second run on the GPU a first run holds is refused; a run with cuBLAS
#      records its version, and rows their GPU and the memory a point left;
#   3. the worker path against the in-process kbench of before core 3
#      (OLD_KBENCH, optional): the reduce headline points, alternating three
#      times, then kbench compare of the middle runs;
#   4. tests/overhead/run.sh.
# Prints a table of every row of (1) and a summary last.
#   tests/gpu/core3.sh BUILD [OLD_KBENCH]
set -u
build=${1:?usage: tests/gpu/core3.sh BUILD [OLD_KBENCH]}
old=${2:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=${OUT:-$PWD/core3-out}
mkdir -p "$out"
kb="$build/kbench"
fx="$build/tests/fixtures/crash"
summary=""
add() { summary="$summary$1
"; }

# 1. Containment.
start=$(date +%s)
"$kb" run tests/fixtures/crash/gpu-contain.ini --plugin-path "$fx" -o "$out/contain" \
    --sanitize-on-crash >"$out/contain.txt" 2>"$out/contain.err"
rc=$?
add "containment: exit $rc in $(( $(date +%s) - start )) s ($(grep '^summary:' "$out/contain.txt"))"
python3 - "$out/contain/results.json" <<'PY' >"$out/contain-rows.txt" 2>&1
import json, sys
doc = json.load(open(sys.argv[1]))
want = {  # (experiment, variant): the status each must have
    ("reduce-before", "cpu"): "pass", ("reduce-before", "shuffle"): "pass",
    ("reduce-before", "cub"): "pass", ("gpu-illegal", "ok"): "pass",
    ("gpu-illegal", "illegal"): "crashed", ("gpu-illegal", "ok2"): "pass",
    ("gpu-trap", "trap"): "crashed", ("gpu-trap", "ok2"): "pass",
    ("gpu-spin", "spin"): "timeout", ("gpu-spin", "cpu"): "pass",
    ("reduce-after", "cpu"): "pass", ("reduce-after", "shuffle"): "pass",
    ("reduce-after", "cub"): "pass"}
bad = 0
print("| experiment | variant | status | worker | reason | sanitizer |")
print("|---|---|---|---|---|---|")
seen = set()
for r in doc["results"]:
    k = (r["experiment"], r["variant"])
    seen.add(k)
    ok = want.get(k) == r["status"]
    bad += not ok
    print("| %s | %s | %s%s | %s | %s | %s |" % (k[0], k[1], r["status"], "" if ok else " (WRONG)",
          r.get("worker_pid"), (r.get("reason") or "")[:160], (r.get("sanitizer") or "")[:200]))
missing = set(want) - seen
bad += len(missing)
for k in sorted(missing):
    print("MISSING", k)
print("containment rows:", "all as expected" if not bad else "%d unexpected" % bad)
sys.exit(1 if bad else 0)
PY
crc=$?
add "$(tail -1 "$out/contain-rows.txt")"
[ $crc -eq 0 ] && [ $rc -eq 1 ] || add "FAILED  containment (rows $crc, exit $rc; expected exit 1)"

# 2. --gpus.
"$kb" run tests/gpu/core3/headline.ini --gpus 0 -o "$out/gpus0" -q >"$out/gpus0.txt" 2>&1
add "--gpus 0: exit $? ($(grep '^summary:' "$out/gpus0.txt"))"
"$kb" run tests/gpu/core3/headline.ini --gpus 0,0 -o "$out/gpus00" -q >"$out/gpus00.txt" 2>&1
add "--gpus 0,0: exit $? ($(head -1 "$out/gpus00.txt"))"
"$kb" run tests/gpu/core3/headline.ini --gpus 7 -o "$out/gpus7" -q >"$out/gpus7.txt" 2>&1
add "--gpus 7: exit $? ($(head -1 "$out/gpus7.txt"))"

# 3. Workers against the in-process kbench of before.
if [ -n "$old" ] && [ -x "$old" ]; then
    for round in 1 2 3; do
        KBENCH_PLUGIN_PATH="$root/$build/plugins" "$old" run -q tests/gpu/core3/headline.ini \
            -o "$out/old-$round" >"$out/old-$round.txt" 2>&1
        "$kb" run -q tests/gpu/core3/headline.ini -o "$out/new-$round" >"$out/new-$round.txt" 2>&1
    done
    python3 - "$out" <<'PY' >"$out/old-new.txt" 2>&1
import json, sys, statistics
out = sys.argv[1]
def rows(side):
    m = {}
    for rnd in (1, 2, 3):
        for r in json.load(open("%s/%s-%d/results.json" % (out, side, rnd)))["results"]:
            if r["status"] == "pass":
                m.setdefault(r["key"], []).append(r["time_s"]["median"])
    return m
o, n = rows("old"), rows("new")
worst = 0
print("| row | before core 3 (ms, median of 3 runs' medians) | workers (ms) | new/old |")
print("|---|---:|---:|---:|")
for k in sorted(o):
    if k not in n: continue
    a, b = statistics.median(o[k]) * 1e3, statistics.median(n[k]) * 1e3
    worst = max(worst, abs(b / a - 1))
    print("| %s | %.4f | %.4f | %.4f |" % (k.split("/")[-1] + " " + k.split("/")[1], a, b, b / a))
print("largest change: %.2f%%" % (worst * 100))
PY
    add "workers vs in-process: $(tail -1 "$out/old-new.txt")"
    "$kb" compare "$out/old-2/results.json" "$out/new-2/results.json" >"$out/compare.txt" 2>&1
    add "compare old-2 new-2: $(grep '^summary:' "$out/compare.txt")"
fi

# 2b. The GPU lock: a second run on the GPU a first run is using is refused
#     (exit 2), and runs with --allow-shared.
"$kb" run -q tests/gpu/core3/slow-reduce.ini -o "$out/busy" >"$out/busy.txt" 2>&1 &
busy=$!
sleep 4
"$kb" run -q tests/gpu/core3/matmul-small.ini -o "$out/second" >"$out/second.txt" 2>&1
add "second run on a busy GPU: exit $? ($(head -1 "$out/second.txt"))"
wait $busy
add "the busy run: exit $? ($(grep '^summary:' "$out/busy.txt"))"
# 2c. Provenance and the device memory a point left, from a run with cuBLAS.
"$kb" run -q tests/gpu/core3/matmul-small.ini -o "$out/mm" >"$out/mm.txt" 2>&1
add "matmul with cuBLAS: exit $? ($(grep '^summary:' "$out/mm.txt"))"
python3 - "$out/mm/results.json" "$out/busy/results.json" <<'PY' >"$out/provenance.txt" 2>&1
import json, sys
mm = json.load(open(sys.argv[1]))
print("provenance:", json.dumps(mm["provenance"]))
for f in sys.argv[1:]:
    for r in json.load(open(f))["results"]:
        print("%s %s: device_left_bytes %s, gpu_uuid %s, pci_bus_id %s, worker_pid %s" % (
            r["experiment"], r["variant"], r.get("device_left_bytes"), r.get("gpu_uuid"),
            r.get("pci_bus_id"), r.get("worker_pid")))
PY
add "$(head -1 "$out/provenance.txt")"

# 4. The overhead check.
OUT="$out" sh tests/overhead/run.sh "$build" >"$out/overhead.log" 2>&1
add "$(tail -1 "$out/overhead.log")"

cat "$out/contain-rows.txt"
[ -f "$out/old-new.txt" ] && cat "$out/old-new.txt"
cat "$out/provenance.txt"
echo "==== core 3 GPU summary ===="
printf '%s' "$summary"
