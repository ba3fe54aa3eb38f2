#!/bin/sh
# The energy windows (docs/energy.md) on one GPU, in one call of about
# three minutes:
#   1. repeatability: BF16 8192^3 (matmul wgmma) three times; the spread of
#      the three median joules per run (wanted: 2% or less);
#   2. sense: the watts of that product, of cuBLAS's, of a 1 GiB device copy
#      (transpose's copy) and of a kernel that keeps the GPU all but idle
#      (tests/fixtures/energy/idlespin.cu): BF16 > copy > idle, BF16 near the
#      board's limit;
#   3. the counter against an independent reading: the same product for 5
#      windows of 2 s while `nvidia-smi --query-gpu=power.draw -lms 50`
#      samples the board; kbench's joules against the samples integrated
#      over the same span (wanted: within 10%);
#   4. low-entropy inputs against random ones for the BF16 product (matmul
#      has no zeros: `inputs = exact`, small integers, is the nearest);
#   5. energy_windows = 11 on the BF16 product: 11 windows kept, the
#      interval from the third lowest to the second highest window.
# Prints a short table last; the results and logs go to $OUT/energy.
#   tests/gpu/energy.sh BUILD
set -u
build=${1:?usage: tests/gpu/energy.sh BUILD}
root=$(cd "$(dirname "$0")/../.." && pwd)
case $build in /*) ;; *) build=$root/$build ;; esac
out=${OUT:-$PWD/energy-out}/energy
rm -rf "$out" # this script's own folder: a run of it again starts afresh
mkdir -p "$out"
export LD_LIBRARY_PATH="$build/devlibs:${LD_LIBRARY_PATH:-}"
export KBENCH_NO_DEFAULT_PLUGINS=1
export KBENCH_PLUGIN_PATH="$build/plugins:$build/tests/fixtures/energy"
kb=$build/kbench
here=$root/tests/gpu/energy
[ -x "$kb" ] || { echo "energy.sh: no kbench at $kb" >&2; exit 2; }

nvidia-smi --query-gpu=name,power.limit,power.default_limit,clocks.max.sm --format=csv \
    >"$out/gpu.txt" 2>&1
"$kb" --version >>"$out/gpu.txt" 2>&1

# ENERGY_ANALYSE=DIR reads the files of an earlier run of this script
# (DIR/energy) again, without running anything (the tables below are its
# only output).
if [ -n "${ENERGY_ANALYSE:-}" ]; then
    out=$ENERGY_ANALYSE/energy
else
# 1, 2 and 4: one run.
"$kb" run "$here/energy.ini" -q -o "$out/main" >"$out/main.txt" 2>&1
echo "main run: exit $?" >>"$out/status.txt"

# 3: the counter against nvidia-smi's samples.  power.draw.instant where the
# driver knows it (an instant reading), else power.draw (on Hopper NVML's
# average over about a second).
fields=timestamp,power.draw,power.draw.instant
nvidia-smi --query-gpu=$fields --format=csv,noheader,nounits -c 1 >/dev/null 2>&1 ||
    fields=timestamp,power.draw
nvidia-smi --query-gpu=$fields --format=csv,noheader,nounits -lms 50 >"$out/smi.csv" 2>&1 &
smi=$!
sleep 1
"$kb" run "$here/counter.ini" -q -o "$out/counter" >"$out/counter.txt" 2>&1
echo "counter run: exit $?" >>"$out/status.txt"
sleep 2
kill "$smi" 2>/dev/null
wait "$smi" 2>/dev/null
echo "$fields" >"$out/smi-fields.txt"
fi

cat "$out/status.txt"
python3 - "$out" <<'EOF'
import json, sys, time, os
out = sys.argv[1]

def rows(run):
    try:
        with open(os.path.join(out, run, "results.json")) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"{run}: no results.json ({e})")
        return {}, {}
    return {(r["experiment"], r["variant"]): r for r in doc["results"]}, doc.get("machine", {})

main, machine = rows("main")
counter, _ = rows("counter")
gpu = machine.get("gpu") or "?"
lines = []
def say(check, figure, verdict):
    lines.append((check, figure, verdict))

def en(r):
    return (r or {}).get("energy") or {}

def fmt_j(j):
    return "-" if j is None else f"{j:.4g} J"

# 1. repeatability
reps = [main.get((f"rep-{i}", "wgmma")) for i in (1, 2, 3)]
js = [en(r).get("j_per_run") for r in reps]
if all(j for j in js):
    med = sorted(js)[1]
    spread = (max(js) - min(js)) / med * 100
    say("1 repeat: BF16 8192^3 wgmma x3", ", ".join(fmt_j(j) for j in js) +
        f"; spread {spread:.2f}%", "ok" if spread <= 2 else "SPREAD ABOVE 2%")
else:
    say("1 repeat: BF16 8192^3 wgmma x3", "statuses " + ", ".join(
        str(en(r).get("status")) + ": " + str(en(r).get("why")) for r in reps), "NOT MEASURED")

# 2. sense
def watts(key):
    return en(main.get(key)).get("watts")
w = {"bf16 wgmma": watts(("rep-1", "wgmma")), "bf16 cublas": watts(("sense-cublas", "cublas-bf16")),
     "copy 1 GiB": watts(("sense-copy", "copy")), "idle spin": watts(("sense-idle", "spin"))}
limit = en(main.get(("rep-1", "wgmma"))).get("power_limit_w")
idle_w = en(main.get(("rep-1", "wgmma"))).get("idle_w")
fig = ", ".join(f"{k} {v:.0f} W" if v else f"{k} -" for k, v in w.items())
fig += f"; limit {limit:.0f} W" if limit else "; limit ?"
fig += f"; idle before the point {idle_w:.0f} W" if idle_w else ""
ok = all(w.values()) and w["bf16 wgmma"] > w["copy 1 GiB"] > w["idle spin"] and \
    w["bf16 cublas"] > w["copy 1 GiB"]
near = limit and w["bf16 wgmma"] and w["bf16 wgmma"] >= 0.85 * limit
verdict = "NOT MEASURED" if not all(w.values()) else "ORDER WRONG" if not ok else \
    "ok, BF16 near the limit" if near else "ok, BF16 below 85% of the limit"
say("2 sense: watts", fig, verdict)
thr = {k: (en(r).get("throttled_windows"), en(r).get("throttled_s")) for k, r in main.items()}
say("2 throttled windows", ", ".join(
    f"{k[0]} {n}" + (f" ({t:.2f} s held back)" if t is not None else "")
    for k, (n, t) in thr.items() if n) or "none", "(info)")

# 3. the counter against nvidia-smi
c = en(counter.get(("counter", "wgmma")))
fields = open(os.path.join(out, "smi-fields.txt")).read().strip().split(",")
samples = []
for line in open(os.path.join(out, "smi.csv")):
    parts = [p.strip() for p in line.split(",")]
    if len(parts) != len(fields):
        continue
    try:
        stamp, frac = parts[0].rsplit(".", 1)
        t = time.mktime(time.strptime(stamp, "%Y/%m/%d %H:%M:%S")) + float("0." + frac)
        p = float(parts[2] if len(parts) > 2 else parts[1])
    except ValueError:
        continue
    samples.append((t, p))
if c.get("status") == "measured" and len(samples) > 20:
    span = sum(c["windows_s"])
    joules = sum(j * c["runs_per_window"] for j in c["windows_j"])
    # The windows are the run's one long stretch at high power: the longest
    # run of consecutive samples above the midway between the lowest and
    # highest reading.  Not the first to the last such sample: power.draw
    # averages over about a second, so the first samples can still carry
    # the power of the run before.
    lo, hi = min(p for _, p in samples), max(p for _, p in samples)
    above = [p > (lo + hi) / 2 for _, p in samples]
    first, last, i = 0, -1, 0
    while i < len(samples):
        j = i
        while above[i] and j + 1 < len(samples) and above[j + 1]:
            j += 1
        if above[i] and j - i > last - first:
            first, last = i, j
        i = j + 1
    t0, t1 = samples[first][0], samples[last][0]
    inside = [(t, p) for t, p in samples if t0 <= t <= t1]
    integral = sum((b[0] - a[0]) * (a[1] + b[1]) / 2 for a, b in zip(inside, inside[1:]))
    mean = integral / (t1 - t0) if t1 > t0 else float("nan")
    smi_j = mean * span  # the samples' mean power over the counter's span
    diff = (joules - smi_j) / smi_j * 100
    which = fields[2] if len(fields) > 2 else fields[1]
    say("3 counter vs nvidia-smi",
        f"counter {joules:.0f} J over {span:.1f} s ({c['watts']:.0f} W); "
        f"{which} {smi_j:.0f} J ({mean:.0f} W over {t1 - t0:.1f} s high); diff {diff:+.1f}%",
        "ok" if abs(diff) <= 10 else "DIFF ABOVE 10%")
else:
    say("3 counter vs nvidia-smi", f"status {c.get('status')}: {c.get('why')}; "
        f"{len(samples)} samples", "NOT MEASURED")

# 4. exact (low-entropy) against random inputs
r, x = main.get(("rep-1", "wgmma")), main.get(("inputs-exact", "wgmma"))
if en(r).get("j_per_run") and en(x).get("j_per_run"):
    dj = (en(x)["j_per_run"] - en(r)["j_per_run"]) / en(r)["j_per_run"] * 100
    dt = (x["time_s"]["median"] - r["time_s"]["median"]) / r["time_s"]["median"] * 100
    say("4 exact vs random inputs", f"J/run {fmt_j(en(r)['j_per_run'])} -> "
        f"{fmt_j(en(x)['j_per_run'])} ({dj:+.1f}%), time {r['time_s']['median'] * 1e3:.3f} -> "
        f"{x['time_s']['median'] * 1e3:.3f} ms ({dt:+.1f}%)", "(measured)")
else:
    say("4 exact vs random inputs", "not measured", "NOT MEASURED")

# 5. energy_windows = 11
e11 = en(main.get(("windows-11", "wgmma")))
w11 = e11.get("windows_j") or []
if e11.get("status") == "measured":
    # kbc_median_interval at 11: the third lowest and the second highest.
    s11 = sorted(w11)
    inside = len(s11) == 11 and abs(e11["j_lo"] - s11[2]) <= 1e-9 * s11[2] and \
        abs(e11["j_hi"] - s11[9]) <= 1e-9 * s11[9]
    say("5 energy_windows = 11", f"{len(w11)} windows {fmt_j(min(w11))} .. {fmt_j(max(w11))}; "
        f"interval {fmt_j(e11['j_lo'])} .. {fmt_j(e11['j_hi'])}",
        "ok" if len(w11) == 11 and inside else "WRONG COUNT OR INTERVAL")
else:
    say("5 energy_windows = 11", f"status {e11.get('status')}: {e11.get('why')}",
        "NOT MEASURED")

print(f"---- energy on {gpu} ----")
for check, figure, verdict in lines:
    print(f"{check:<32} {verdict:<28} {figure}")
EOF
