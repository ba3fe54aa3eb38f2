#!/bin/sh
# Measurement integrity on one GPU (docs/integrity.md), in one call:
#   cheats    the CUDA cheats of tests/fixtures/integrity/gpucheats.cu between
#             honest variants (tests/fixtures/integrity/gpucheats.ini): a table of
#             every row with the reason it was flagged and whether that is the
#             reason expected; again with KBENCH_CUPTI=off (the partial audit,
#             for the record)                            20 s on an H200
#   residue   the same library rows timed in one worker before and after an
#             audited experiment (integrity/residue.ini): the audit leaves
#             nothing on later timed runs                5 s
#   families  zero false flags: the four families' conf/ studies and
#             conf/targets.ini at reduced runs (runs = 3, warmup = 1), the
#             integrity checks on: the count of flagged rows, each listed; and
#             the added seconds per point (the first file, reduce's study,
#             again with integrity = off).  Each file is stopped after
#             FAMILY_SECONDS (default 300; the rows it reached are kept), so
#             35 minutes at most; conf/reduce.ini, sort.ini, matmul-tc.ini
#             and transpose.ini took 2 to 12 s each on an H200
#   overhead  tests/overhead/run.sh                      about 20 s
#
#   tests/gpu/integrity.sh BUILD [SECTIONS] [FAMILY_SECONDS]
# SECTIONS: a comma-separated choice of the four (default: all of them).
# INTEGRITY_FILES overrides the families' files (a space-separated list).
# Everything it writes goes into $OUT/integrity-<gpu>.tgz; the tables are
# printed last, and the exit code is 1 when a cheat was missed, an honest row
# flagged, or the overhead check failed.
set -u
build=${1:?usage: tests/gpu/integrity.sh BUILD [SECTIONS] [FAMILY_SECONDS]}
sections=${2:-cheats,residue,families,overhead}
family_s=${3:-300}
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/tests/gpu/integrity
out=${OUT:-$PWD/integrity-out}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 |
      tr -c 'A-Za-z0-9\n' '-' | sed 's/-*$//')
work=$out/integrity-${gpu:-gpu}
mkdir -p "$work"
export LD_LIBRARY_PATH="$root/$build/devlibs:${LD_LIBRARY_PATH:-}"
cd "$root"
kbench="$build/kbench"
# A build carried to another machine does not find its plugin folder by the
# path it was built with: name it.
if ! KBENCH_PLUGIN_PATH= "$kbench" list 2>/dev/null | grep -q '^reduce '; then
    export KBENCH_PLUGIN_PATH="$root/$build/plugins"
fi
fixtures="$build/tests/fixtures/integrity"
cheats_ini=$root/tests/fixtures/integrity/gpucheats.ini
py=python3
status=0
tables=$work/tables.txt
: >"$tables"
want() { case ",$sections," in *",$1,"*) return 0 ;; esac; return 1; }
# Runs kbench, recording its wall time in $work/NAME.seconds.
timed() { # name seconds kbench-args...
    name=$1
    limit=$2
    shift 2
    t0=$(date +%s)
    timeout "$limit" "$kbench" "$@" >"$work/$name.txt" 2>&1
    rc=$?
    echo $(( $(date +%s) - t0 )) >"$work/$name.seconds"
    echo "$name: exit $rc in $(cat "$work/$name.seconds") s" | tee -a "$tables"
    return $rc
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv \
    >"$work/gpu.txt" 2>&1
"$kbench" --version >>"$work/gpu.txt" 2>&1

if want cheats; then
    timed cheats 600 run "$cheats_ini" -o "$work/cheats" --plugin-path "$fixtures"
    $py "$here/table.py" cheats "$work/cheats/results.json" >>"$tables" || status=1
    KBENCH_CUPTI=off timed cheats-nocupti 600 run "$cheats_ini" --experiment single \
        -o "$work/cheats-nocupti" --plugin-path "$fixtures"
    echo "without CUPTI (partial audit; for the record, not judged):" >>"$tables"
    $py "$here/table.py" cheats "$work/cheats-nocupti/results.json" >>"$tables"
fi

if want residue; then
    timed residue 600 run "$here/residue.ini" -o "$work/residue"
    $py "$here/table.py" residue "$work/residue/results.json" >>"$tables"
fi

if want families; then
    files=${INTEGRITY_FILES:-"conf/reduce-study.ini conf/sort-study.ini conf/transpose-study.ini conf/matmul-study.ini conf/matmul-tc.ini conf/targets.ini"}
    jsons=""
    for f in $files; do
        name=$(basename "$f" .ini)
        timed "$name" "$family_s" run "$f" -o "$work/$name" --set runs=3 --set warmup=1
        jsons="$jsons $work/$name/results.json"
    done
    $py "$here/table.py" flags $jsons >>"$tables" || status=1
    # What the checks cost: the first file again with them off.
    first=$(basename "${files%% *}" .ini)
    if [ -f "$work/$first/results.json" ]; then
        timed "$first-off" "$family_s" run "${files%% *}" -o "$work/$first-off" \
            --set runs=3 --set warmup=1 --set integrity=off
        $py "$here/table.py" cost "$work/$first-off/results.json" \
            "$work/$first/results.json" "$(cat "$work/$first-off.seconds")" \
            "$(cat "$work/$first.seconds")" >>"$tables"
    fi
fi

if want overhead; then
    OUT="$work" sh tests/overhead/run.sh "$build" >"$work/overhead.log" 2>&1 || status=1
    tail -1 "$work/overhead.log" >>"$tables"
fi

echo
cat "$tables"
echo "integrity.sh: exit $status"
# One file back (the device tool returns a few): the folder goes into it.
(cd "$out" && tar czf "integrity-${gpu:-gpu}.tgz" "integrity-${gpu:-gpu}" &&
    rm -rf "integrity-${gpu:-gpu}")
exit $status
