#!/bin/sh
# Issue 34's sort work on a GPU, in one call: checks of the changed
# kernels, then the timing points against CUB, a short table last.
#   sh plugins/sort/frontier.sh BUILD_DIR [LABEL=PLUGIN_DIR]...
# 1. Correctness of onesweep-early and onesweep-split-hold (their pass plan
#    and tile = auto's table changed): gpu-correctness.ini narrowed to the
#    two variants, to the sections below 10^8 keys (the 10^8 sections'
#    CPU reference alone takes minutes of a call) and to fewer small sizes
#    (the tile shapes at 1, 31, 6145, 8833, 16385), gpu-split.ini likewise,
#    gpu-skip.ini (the inputs whose plan skips passes or copies), and
#    `kbench check sort` of the two variants (stale status words).
# 2. compute-sanitizer memcheck and racecheck on gpu-sanitize-skip.ini.
# 3. compare.ini once for each LABEL=PLUGIN_DIR given (another build of the
#    sort plugin, e.g. the revision before) and once for BUILD_DIR's, each
#    against cub-radix in the same run; then frontier.ini, the timing
#    points, cub-radix in the same run.
# SORT_FRONTIER_SECONDS (default 1200) bounds step 3's frontier.ini: the
# rows of the points it reached are kept (its journal) and tabled.
# Everything goes into $OUT/sort-frontier.tgz (one file, so that it comes
# back whole) and the summary and table are printed last.  Exit status: 0
# when every check passed, 1 otherwise, 2 on bad usage.
set -u
[ $# -ge 1 ] || { echo "usage: sh plugins/sort/frontier.sh BUILD_DIR [LABEL=PLUGIN_DIR]..." >&2; exit 2; }
. "$(cd "$(dirname "$0")/../.." && pwd)/tests/gpu/lib.sh"
gpu_init sort-frontier "$1"
shift
builds="$*"
t_start=$(date +%s)
took() { echo "$(( $(date +%s) - $1 )) s"; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv >"$logs/gpu.txt" 2>&1
"$kbench" --version >>"$logs/gpu.txt" 2>&1
gpu_note "gpu: $(sed -n 2p "$logs/gpu.txt")"

two=onesweep-early,onesweep-split-hold
run_ini() { # name ini [kbench run options]
    name=$1
    ini=$2
    shift 2
    t0=$(date +%s)
    "$kbench" run "$ini" -q -o "$logs/$name" "$@" >"$logs/$name.log" 2>&1
    gpu_check_run "$name ($(took "$t0"))" "$logs/$name.log" $?
}
run_ini correctness "$here/gpu-correctness.ini" --variants "$two" \
    --experiment 'sort-small,sort-special-small,sort-mid,sort-mid-special,sort-other-seed,sort-early-tiles,sort-early-hist' \
    --set 'sort-small.n=1, 2, 31, 1025, 65537' --set 'sort-early-tiles.n=1, 31, 6145, 8833, 16385'
run_ini split "$here/gpu-split.ini" --experiment 'split-shapes,split-distributions,split-other-seed' \
    --set 'split-shapes.n=1, 31, 6145, 8833'
run_ini skip "$here/gpu-skip.ini"
t0=$(date +%s)
"$kbench" check sort --variants "$two" >"$logs/check.log" 2>&1
rc=$?
line=$(grep '^summary:' "$logs/check.log" | tail -1)
if [ $rc -ne 0 ] || ! echo "$line" | grep -q ' 0 FAIL'; then
    gpu_note "FAILED  check: exit $rc; ${line:-no summary line}"
    status=1
else
    gpu_note "ok      check ($(took "$t0")): $line"
fi
t0=$(date +%s)
gpu_sanitize "$here/gpu-sanitize-skip.ini" "$here/gpu-sanitize-skip.ini"
gpu_note "        sanitizers took $(took "$t0")"

for b in $builds this=${KBENCH_PLUGIN_PATH:-}; do
    label=${b%%=*}
    t0=$(date +%s)
    KBENCH_PLUGIN_PATH=${b#*=} "$kbench" run "$here/compare.ini" -o "$logs/compare-$label" \
        >"$logs/compare-$label.txt" 2>&1
    gpu_note "compare $label: exit $? in $(took "$t0")"
done
t0=$(date +%s)
timeout "${SORT_FRONTIER_SECONDS:-1200}" "$kbench" run "$here/frontier.ini" -o "$logs/frontier" \
    >"$logs/frontier.txt" 2>&1
gpu_note "timing: exit $? in $(took "$t0")"

nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv >>"$logs/gpu.txt" 2>&1

# The table: each own row against cub-radix at the same point (several
# results files: one table each, the file's folder named first).
table() {
    python3 - "$@" <<'PY'
import csv, os, re, sys
for f in sys.argv[1:]:
  if not os.path.exists(f):
    print("%s: no results" % f)
    continue
  print("== %s" % os.path.basename(os.path.dirname(f)))
  rows = list(csv.DictReader(open(f)))
  # cub-radix ignores tile: one of its rows stands for every tile value
  def where(r):
      return (r["experiment"], re.sub(r",?tile=[^,]*", "", r["key"].split("/")[2]))
  ref = {}
  for r in rows:
      if r["variant"] == "cub-radix" and r["status"] == "pass":
          ref[where(r)] = float(r["median_s"])
  print("device: %s" % (rows[0]["device"] if rows else "?"))
  print("%-20s %-42s %-20s %11s %11s %7s" % ("experiment", "point", "variant", "median", "cub", "cub/own"))
  for r in rows:
      if r["variant"] == "cub-radix":
          continue
      pt = r["key"].split("/")[2]
      for cut in (",values=none", ",tile=auto", ",hist=auto", "key=", "values=", "dist="):
          pt = pt.replace(cut, "")
      c = ref.get(where(r))
      if r["status"] != "pass" or c is None:
          print("%-20s %-42s %-20s %s %s" % (r["experiment"], pt, r["variant"], r["status"], r["reason"][:60]))
          continue
      m = float(r["median_s"])
      print("%-20s %-42s %-20s %9.1f us %9.1f us %6.3fx" % (r["experiment"][:20], pt[:42], r["variant"], m * 1e6, c * 1e6, c / m))
PY
}
table "$logs"/compare-*/results.csv "$logs/frontier/results.csv" >"$logs/table.txt" 2>&1 ||
    cp "$logs/frontier.txt" "$logs/table.txt"
(cd "$logs/.." && tar czf sort-frontier.tgz sort-frontier) && rm -rf "$logs"
echo "---- sort frontier ($(took "$t_start")) ----"
printf '%s' "$summary"
[ -f "$(dirname "$logs")/sort-frontier.tgz" ] && tar xzf "$(dirname "$logs")/sort-frontier.tgz" -O sort-frontier/table.txt
[ $status -eq 0 ] && echo "all checks passed" || echo "some checks failed"
exit $status
