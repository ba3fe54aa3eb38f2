#!/bin/sh
# kbench tune on a GPU machine, in one call (issue 25): this repository's
# real spaces (tests/gpu/tune/*.ini)
#   transpose  block_x x block_y x variant   at 2048 x 512 and 8191 x 8193
#   sort       tile x hist (onesweep-early)  at 2^24 and 2^28 u32 keys
#   matmul     tile x stages                 at 4096^3 and 3000 x 5000 x 2000
# each tuned on the GPU by exhaustive and by auto (in their own folders, so
# that neither reuses the other's measurements), then random, local, anneal
# and auto replayed from the exhaustive journals (--simulate: no GPU time).
# Then a second auto tuning into a copy of auto's folder, which must
# measure nothing again.  Prints, per problem: each strategy's evaluations, wall time, best
# value and its distance to the exhaustive best, the winner's status, and
# the library reference; the targets (issue 25): auto within 2% of the
# exhaustive best with at most 25% of its evaluations.
#   tests/gpu/tune.sh BUILD            (BUILD: a build with the families)
# Environment: OUT (the output folder; default ./tune-out), KBENCH_PLUGIN_PATH
# (when the families are not in BUILD/plugins), TUNE_FAMILIES
# (default "transpose sort matmul"), TUNE_SORT_BIG (default 2^28).
# Exit status: 0 when every tuning ran (whatever the targets say: the table
# says that), 1 when one failed, 2 on bad usage.
set -u
build=${1:?usage: tests/gpu/tune.sh BUILD}
root=$(cd "$(dirname "$0")/../.." && pwd)
kb="$build/kbench"
[ -x "$kb" ] || { echo "tune.sh: no kbench at $kb (build it first)" >&2; exit 2; }
out=${OUT:-$PWD/tune-out}
mkdir -p "$out"
families=${TUNE_FAMILIES:-transpose sort matmul}
status=0
now() { date +%s.%N; }

for fam in $families; do
    ini="$root/tests/gpu/tune/$fam.ini"
    for st in exhaustive auto; do
        dir="$out/$fam-$st"
        rm -rf "$dir"
        t0=$(now)
        TUNE_STRATEGY=$st "$kb" tune "$ini" -o "$dir" -q >"$out/$fam-$st.txt" 2>"$out/$fam-$st.err"
        rc=$?
        echo "$(now) $t0" | awk '{printf "%.1f\n", $1 - $2}' >"$dir.wall"
        echo "== $fam $st: exit $rc, $(cat "$dir.wall") s"
        [ $rc -le 1 ] || { status=1; tail -5 "$out/$fam-$st.err"; }
    done
    for st in random local anneal auto; do
        TUNE_STRATEGY=$st "$kb" tune "$ini" --simulate "$out/$fam-exhaustive" \
            -o "$out/$fam-sim-$st" -q >"$out/$fam-sim-$st.txt" 2>&1 || true
    done
    # The cache: the same auto tuning again (into a copy of its folder)
    # measures nothing.
    rm -rf "$out/$fam-auto-again"
    cp -r "$out/$fam-auto" "$out/$fam-auto-again"
    t0=$(now)
    TUNE_STRATEGY=auto "$kb" tune "$ini" -o "$out/$fam-auto-again" -q \
        >"$out/$fam-auto-again.txt" 2>"$out/$fam-auto-again.err"
    echo "$(now) $t0" | awk '{printf "%.1f\n", $1 - $2}' >"$out/$fam-auto-again.wall"
    echo "== $fam auto again: $(grep -c 'came from earlier tunings' "$out/$fam-auto-again.err") cache line(s), $(cat "$out/$fam-auto-again.wall") s"
done

# The table: one block per problem.
python3 - "$out" $families <<'PY'
import json, os, sys
out, fams = sys.argv[1], sys.argv[2:]

def load(path):
    try:
        with open(path) as f:
            return {p["problem"]: p for p in json.load(f)["problems"]}
    except (OSError, ValueError, KeyError):
        return {}

def value(p):
    b = p.get("best") if p else None
    if not b:
        return None
    return b.get("median_s") or b.get("screen_median_s")

def fmt(s):
    return "-" if s is None else ("%.4g ms" % (s * 1e3) if s < 1 else "%.4g s" % s)

fails = 0
for fam in fams:
    ex = load(os.path.join(out, fam + "-exhaustive", "best.json"))
    if not ex:
        print("\n[%s]: no exhaustive result (see %s-exhaustive.err)" % (fam, fam))
        fails += 1
    for prob, e in ex.items():
        print("\n[%s] %s: %d candidates allowed, %d of them valid (plan() accepts)" % (
            fam, prob, e.get("allowed", 0), e.get("valid", 0)))
        lib = [l for l in e.get("library", []) if l.get("median_s")]
        if lib:
            print("  library: " + ", ".join("%s %s" % (l["variant"], fmt(l["median_s"])) for l in lib))
        best_ex = value(e)
        print("  %-16s %6s %5s %9s %12s %9s  %-8s %s" % ("strategy", "evals", "%ex", "wall", "best",
                                                      "vs exh.", "target", "winner"))
        rows = [("exhaustive", "exhaustive", True), ("auto", "auto", True)]
        rows += [("sim-" + s, s + " (replay)", False) for s in ("random", "local", "anneal", "auto")]
        for folder, label, live in rows:
            p = load(os.path.join(out, fam + "-" + folder, "best.json")).get(prob)
            if not p:
                print("  %-16s (no result)" % label)
                fails += 1
                continue
            v = value(p)
            evals = p.get("evaluations", 0)
            share = 100.0 * evals / max(1, e.get("evaluations", 1))
            wall = p.get("wall_s", 0)
            gap = None if v is None or best_ex is None else (v / best_ex - 1) * 100
            target = ""
            if folder in ("auto", "sim-auto"):
                ok = gap is not None and gap <= 2.0 and share <= 25.0
                target = "met" if ok else "MISSED"
            b = p.get("best") or {}
            print("  %-16s %6d %4.0f%% %8.1fs %12s %8s  %-8s %s" % (
                label, evals, share, wall, fmt(v),
                "-" if gap is None else "%+.1f%%" % gap, target, b.get("candidate", "-")))
print("\nEvery winner passed verification: a candidate whose output fails it cannot win.")
sys.exit(1 if fails else 0)
PY
[ $? -eq 0 ] || status=1
echo
echo "outputs: $out (each folder: best.ini, best.json, tried.csv, trace.csv, trace-*.gp)"
exit $status
