#!/bin/sh
# kbench tune with objective = time, energy and edp on one GPU, in about
# two minutes (issue 33): tests/gpu/tune/energy.ini, each objective in its
# own folder.  Prints each objective's best line, the winner's joules and
# time from best.json, and the four measured candidates of the energy
# tuning (tried.csv) so that the ranking can be checked by eye: the energy
# winner has the fewest joules of the candidates with energy.
#   tests/gpu/tune-energy.sh BUILD         results in $OUT/tune-energy
# Exit status: 0 when the three tunings ran and each winner has joules,
# 1 otherwise, 2 on bad usage.
set -u
build=${1:?usage: tests/gpu/tune-energy.sh BUILD}
root=$(cd "$(dirname "$0")/../.." && pwd)
kb="$build/kbench"
[ -x "$kb" ] || { echo "tune-energy.sh: no kbench at $kb (build it first)" >&2; exit 2; }
out=${OUT:-$PWD}/tune-energy
mkdir -p "$out"
status=0
for obj in time energy edp; do
    dir="$out/$obj"
    rm -rf "$dir"
    TUNE_OBJECTIVE=$obj "$kb" tune "$root/tests/gpu/tune/energy.ini" -o "$dir" \
        >"$out/$obj.txt" 2>"$out/$obj.err"
    rc=$?
    echo "== objective = $obj: exit $rc"
    grep -E '^ *best' "$out/$obj.txt" | head -3
    python3 - "$dir/best.json" <<'PY' || status=1
import json, sys
doc = json.load(open(sys.argv[1]))
probs = doc if isinstance(doc, list) else doc.get("problems", [doc])
for p in probs:
    b = p.get("best") or {}
    j, t = b.get("j_per_run"), b.get("median_s")
    print("   winner:", {k: v for k, v in b.items() if k not in ("j_per_run", "median_s", "edp_js")},
          "J/run", j, "median s", t, "edp", b.get("edp_js"))
    if j is None:
        sys.exit(1)
PY
    [ $rc -eq 0 ] || status=1
done
echo "== energy tuning's candidates (tried.csv)"
cat "$out/energy/tried.csv" 2>/dev/null | head -12
exit $status
