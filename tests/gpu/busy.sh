#!/bin/sh
# Every GPU busy (issue 30, item 4), in one call of about 6 minutes at most:
#   1. one GPU: the same plan with prefetch = off and with prefetch = auto (the
#      next point's inputs and reference made while the current point's GPU
#      work is timed, docs/plugins.md "Prefetch"): walls, and where each worker's time
#      went (--timeline: start, setup, waits, timed runs, tail);
#   2. several GPUs (when nvidia-smi lists more than one): --gpus all against
#      the --gpus 0 run of step 1 (table: GPUs, walls, ratio, share of G);
#   3. two shards with measured costs: --shard 0/2 on GPU 0 and --shard 1/2 on
#      GPU 1 at the same time (two processes of one host, as two ranks would
#      be), each with --costs the prefetch-on folder of step 1 (the same
#      plan); their walls against the mean, the dry runs' split by the model
#      and by the costs, and kbench merge of the two parts.
# The plan: conf/targets.ini's experiments reduce-f32, reduce-f64, reduce-i32,
# reduce-hot, transpose-square, transpose-shapes, bf16 and tf32 (72 points;
# sgemm's 36 and sort's are left out to keep the call short); BUSY_EXPERIMENTS
# names others.  Every run is checked: exit 0 and no FAIL or error row.
# Logs, timelines and results under $OUT/busy (one archive, busy.tgz); the
# table last.
#   tests/gpu/busy.sh BUILD
set -u
build=${1:?usage: tests/gpu/busy.sh BUILD}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=${OUT:-$PWD/busy-out}
w=$out/busy
rm -rf "$w"
mkdir -p "$w"
kb="$build/kbench"
ini=conf/targets.ini
plan=reduce-f32,reduce-f64,reduce-i32,reduce-hot,transpose-square,transpose-shapes,bf16,tf32
ex=${BUSY_EXPERIMENTS:-$plan}
table=""
row() { table="$table$1
"; }
status=0

nvidia-smi -L >"$w/gpus.txt" 2>&1
nvidia-smi topo -m >>"$w/gpus.txt" 2>&1
ngpu=$(grep -c '^GPU ' "$w/gpus.txt")
nproc >"$w/cpus.txt"

# run NAME ARGS...: one kbench run of the plan into $w/NAME, timed; sets $wall.
run() {
    name=$1
    shift
    t0=$(date +%s.%N)
    "$kb" run "$ini" --experiment "$ex" -q -o "$w/$name" --timeline "$w/$name.timeline" "$@" \
        >"$w/$name.txt" 2>"$w/$name.err"
    rc=$?
    t1=$(date +%s.%N)
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    line=$(grep '^summary:' "$w/$name.txt" | tail -1)
    if [ $rc -ne 0 ] || ! echo "$line" | grep -q ' 0 FAIL, 0 error'; then
        row "FAILED $name: exit $rc, $line (log $w/$name.txt, $w/$name.err)"
        status=1
    fi
    echo "$name: exit $rc, wall $wall s; $line" >>"$w/runs.txt"
}

count_rows() {
    python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["results"]))' "$1" \
        2>/dev/null || echo "?"
}

# Where a run's time went, from its timeline's summary.
where() {
    python3 - "$1" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
s = lines[-1]
pts = [l for l in lines if l.get("event") == "point"]
print("  wall %.1f s; points %d, %d set up from a host half made ahead" %
      (s["wall_s"], len(pts), sum(1 for p in pts if p["ahead"])))
for k in s["workers"]:
    print("  worker %d: start %.2f s (context %.2f, plugins %.2f, device and ceilings %.2f; %d "
          "start%s), points %.1f s (setup %.1f, host halves ahead %.1f on their thread, waits "
          "%.1f + %.1f, teardown %.1f), timed CUDA runs %.1f s, tail %.1f s, idle %.1f s" %
          (k["worker"], k["start_s"], k["context_s"], k["plan_s"], k["device_s"], k["starts"],
           "" if k["starts"] == 1 else "s", k["busy_s"], k["setup_s"], k["ahead_s"],
           k["wait_s"], k["joins_s"], k["teardown_s"], k["timed_cuda_s"], k["tail_s"],
           k["idle_s"]))
# The ten points with the most setup left on the GPU's clock.
top = sorted(pts, key=lambda p: -(p["setup_s"] + p["wait_s"]))[:10]
print("  largest setups (exp, point, setup + wait, made ahead):")
for p in top:
    print("    %s %d: %.2f s%s" % (p["exp"], p["point"], p["setup_s"] + p["wait_s"],
                                  " (ahead %.2f s)" % p["ahead_s"] if p["ahead"] else ""))
PY
}

# 1. One GPU, prefetch off, then on.
run off --gpus 0 --set prefetch=off
wall_off=$wall
run on --gpus 0
wall_on=$wall
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
row "1 GPU, prefetch off: $wall_off s; auto: $wall_on s ($(ratio "$wall_on" "$wall_off") of off)"
if awk -v a="$wall_on" 'BEGIN { exit !(a < 60) }'; then
    row "note: the plan took under a minute on one GPU ($wall_on s); BUSY_EXPERIMENTS names more"
fi
{
    echo "== prefetch off"
    where "$w/off.timeline"
    echo "== prefetch auto"
    where "$w/on.timeline"
} >"$w/where.txt" 2>&1
"$kb" compare "$w/off/results.json" "$w/on/results.json" >"$w/compare-off-on.txt" 2>&1
rc=$?
row "compare off vs auto: exit $rc; $(grep -i 'no change' "$w/compare-off-on.txt" | tail -1)"

# 2. Every GPU.
if [ "$ngpu" -ge 2 ]; then
    run all --gpus all
    wall_all=$wall
    row "| GPUs | wall | speed-up over 1 GPU | of G |"
    row "|---|---|---|---|"
    row "| 1 (--gpus 0) | $wall_on s | 1 | 1 |"
    speedup=$(ratio "$wall_on" "$wall_all")
    row "| $ngpu (--gpus all) | $wall_all s | ${speedup}x | $(ratio "$speedup" "$ngpu") |"
    { echo "== --gpus all"; where "$w/all.timeline"; } >>"$w/where.txt" 2>&1
    "$kb" compare "$w/on/results.json" "$w/all/results.json" >"$w/compare-0-all.txt" 2>&1
    rc=$?
    row "compare --gpus 0 vs all: exit $rc; $(grep -i 'no change' "$w/compare-0-all.txt" | tail -1)"

    # 3. Two shards, measured costs, one GPU each, at the same time.
    for how in "" "--costs $w/on"; do
        "$kb" run "$ini" --experiment "$ex" --dry-run --shard 0/2 $how 2>&1 | grep '^shard' \
            >>"$w/split.txt"
    done
    t0=$(date +%s.%N)
    for i in 0 1; do
        (
            s0=$(date +%s.%N)
            "$kb" run "$ini" --experiment "$ex" -q --shard $i/2 --gpus $i --costs "$w/on" \
                -o "$w/part-$i" --timeline "$w/part-$i.timeline" \
                >"$w/part-$i.txt" 2>"$w/part-$i.err"
            rc=$?
            s1=$(date +%s.%N)
            echo "$rc $(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.1f", b - a }')" \
                >"$w/part-$i.wall"
        ) &
    done
    wait
    t1=$(date +%s.%N)
    both=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    read rc0 w0 <"$w/part-0.wall"
    read rc1 w1 <"$w/part-1.wall"
    rows0=$(count_rows "$w/part-0/results.json")
    rows1=$(count_rows "$w/part-1/results.json")
    over=$(awk -v a="$w0" -v b="$w1" \
        'BEGIN { m = (a + b) / 2; x = a > b ? a : b; printf "%+.1f%%", (x / m - 1) * 100 }')
    row "shards with --costs, GPU 0 and GPU 1 at once: exits $rc0 $rc1; walls $w0 s and $w1 s"
    row "  ($rows0 and $rows1 rows; the larger $over over the mean), both done in $both s"
    row "  ($(ratio "$wall_on" "$both")x the --gpus 0 run)"
    row "dry-run splits (by the model, then by the costs):"
    while read -r line; do row "  $line"; done <"$w/split.txt"
    "$kb" merge "$w/part-0" "$w/part-1" -o "$w/merged" >"$w/merge.txt" 2>&1
    row "merge of the two parts: exit $?"
    [ "$rc0" = 0 ] && [ "$rc1" = 0 ] || status=1
else
    row "one GPU only: --gpus all and the shards on two GPUs were not run"
fi

cat "$w/where.txt"
(cd "$out" && tar czf busy.tgz busy)
echo
echo "busy.sh on $(head -1 "$w/gpus.txt"), $ngpu GPU(s), $(cat "$w/cpus.txt") CPUs"
echo "plan: $ini --experiment $ex"
printf '%s' "$table"
exit $status
