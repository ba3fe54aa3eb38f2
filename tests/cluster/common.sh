# common.sh -- what the cluster tests (mpi.sh, slurm.sh) share; sourced, not run.
# shellcheck shell=sh disable=SC2154 # $name is set by the script that sources this
#
# The caller sets `name` (the test's name in messages) and calls
# cl_init BUILD_DIR [FIXTURE_DIR].  Then: cl_write_ini, the launcher runs the shards into
# $tmp/part-<i>, cl_check_parts compares them with a one-process run.
# Exit codes: 0 pass, 1 fail, 77 skip (ctest's SKIP_RETURN_CODE).

cl_skip() {
    echo "$name: SKIPPED: $*" >&2
    exit 77
}

cl_fail() {
    echo "$name: FAILED: $*" >&2
    exit 1
}

cl_say() {
    echo "$name: $*"
}

# Set by the caller to a function that stops what it started; run on exit
# before the temporary folder goes.
cl_stop=:
# The command cl_bounded waits for, if any.
cl_child=""

cl_exit() {
    rc=$?
    trap - EXIT INT TERM HUP
    if [ -n "$cl_child" ]; then
        kill "$cl_child" 2>/dev/null || true
        wait "$cl_child" 2>/dev/null || true
    fi
    $cl_stop || true
    if [ -n "${tmp:-}" ] && [ -d "$tmp" ]; then
        if [ -n "${KBENCH_CLUSTER_KEEP:-}" ]; then
            echo "$name: kept $tmp (KBENCH_CLUSTER_KEEP is set)" >&2
        else
            rm -rf "$tmp"
        fi
    fi
    exit "$rc"
}

# Every step is bounded so that the whole test ends, stopping what it
# started, before ctest's TIMEOUT (300 s) would kill it.
cl_deadline=$(($(date +%s) + ${KBENCH_CLUSTER_SECONDS:-240}))

# cl_left: the seconds left before the deadline; fails when none are.
cl_left() {
    left=$((cl_deadline - $(date +%s)))
    [ "$left" -gt 0 ] || cl_fail "out of time: the test took more than ${KBENCH_CLUSTER_SECONDS:-240} s"
    echo "$left"
}

# cl_bounded SECONDS LOG COMMAND...: runs COMMAND with its output in LOG for
# at most SECONDS (and never past the deadline); returns its exit status,
# 124 when it ran out of time.  It runs in the background and is waited
# for, so that a signal stops the test (and its cleanup runs) at once.
cl_bounded() {
    limit=$1
    log=$2
    shift 2
    left=$(cl_left) || exit 1
    [ "$limit" -le "$left" ] || limit=$left
    timeout "$limit" "$@" >"$log" 2>&1 </dev/null &
    cl_child=$!
    brc=0
    wait "$cl_child" || brc=$?
    cl_child=""
    [ "$brc" != 124 ] || echo "$name: $1 was stopped after $limit s" >&2
    return "$brc"
}

# cl_init BUILD_DIR [FIXTURE_DIR]: finds kbench in the build and the toy
# plugin in FIXTURE_DIR (default BUILD_DIR/tests/fixtures/runner), checks
# that this kbench can shard and merge, makes $tmp.
cl_init() {
    build=${1:-}
    [ -n "$build" ] || { echo "usage: $0 BUILD_DIR [FIXTURE_DIR]" >&2; exit 2; }
    here=$(cd "$(dirname "$0")" && pwd)
    kbench=$build/kbench
    fixtures=${2:-$build/tests/fixtures/runner}
    [ -x "$kbench" ] || cl_fail "$kbench is not there; build kbench first (cmake --build $build)"
    [ -f "$fixtures/kbench-toy.so" ] ||
        cl_fail "$fixtures/kbench-toy.so is not there; build the toy fixture first (cmake --build $build)"
    command -v python3 >/dev/null 2>&1 || cl_skip "python3 is not installed; the comparison of the results needs it"
    help=$("$kbench" --help 2>&1) || true
    case $help in *--shard*) ;; *) cl_fail "kbench has no --shard (kbench --help does not name it)" ;; esac
    case $help in *"kbench merge"*) ;; *) cl_fail "kbench has no merge command (kbench --help does not name it)" ;; esac
    # Only --plugin-path may bring plugins in.
    KBENCH_PLUGIN_PATH=
    export KBENCH_PLUGIN_PATH
    # A test run inside a Slurm job or an MPI launcher must not hand that
    # launcher's variables to its own: Open MPI and srun would take the
    # outer job for theirs, and --shard auto would read them.
    for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\)=.*/\1/p; s/^\(OMPI_[A-Za-z0-9_]*\)=.*/\1/p; s/^\(PMIX*_[A-Za-z0-9_]*\)=.*/\1/p'); do
        unset "$v"
    done
    unset JOB_COMPLETION_INDEX
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/kbench-$name-XXXXXX") || cl_fail "mktemp -d did not work"
    trap cl_exit EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    trap 'exit 129' HUP
    ini=$tmp/sweep.ini
}

# The experiment every launcher runs: the toy CPU plugin, two variants over
# seven sizes, so 14 rows that any number of shards up to 7 splits unevenly.
cl_write_ini() {
    cat >"$ini" <<'EOF'
[global]
runs = 3
warmup = 1

[sweep]
plugin = toy
variants = good, slow
n = 1K..7K:+1K
EOF
}

# The plan's row count, which the one-process run must reach.
cl_rows=14

# cl_check_parts COUNT: $tmp/part-0 .. part-(COUNT-1) were written by COUNT
# shards.  Merges them, runs the INI in one process, compares; then checks
# that a merge without shard 1 fails naming it, and that the comparison
# itself fails on a merged folder with a row taken out or given twice.
cl_check_parts() {
    count=$1
    parts=""
    i=0
    while [ "$i" -lt "$count" ]; do
        [ -f "$tmp/part-$i/results.json" ] || cl_fail "shard $i wrote no $tmp/part-$i/results.json"
        # Which shard did --shard auto make of this process's launcher variables?
        got=$(python3 -c 'import json, sys
s = (json.load(open(sys.argv[1])).get("plan") or {}).get("shard") or {}
print("%s/%s" % (s.get("index"), s.get("count")))' "$tmp/part-$i/results.json")
        [ "$got" = "$i/$count" ] ||
            cl_fail "part-$i (process $i of $count) ran shard $got, not $i/$count: --shard auto read the wrong launcher variables"
        parts="$parts $tmp/part-$i"
        i=$((i + 1))
    done

    rc=0
    # shellcheck disable=SC2086 # $parts is a list of folders without spaces
    "$kbench" merge $parts -o "$tmp/merged" >"$tmp/merge.log" 2>&1 || rc=$?
    [ "$rc" = 0 ] || { cat "$tmp/merge.log" >&2; cl_fail "kbench merge of the $count shards exited $rc"; }

    rc=0
    cl_bounded 60 "$tmp/one.log" "$kbench" run "$ini" -q -o "$tmp/one" --plugin-path "$fixtures" || rc=$?
    [ "$rc" = 0 ] || { cat "$tmp/one.log" >&2; cl_fail "the one-process kbench run exited $rc"; }

    # shellcheck disable=SC2086
    python3 "$here/check_shards.py" "$tmp/one" "$tmp/merged" $parts ||
        cl_fail "the merged run is not the one-process run (above)"
    n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["results"]))' "$tmp/one/results.json")
    [ "$n" = "$cl_rows" ] || cl_fail "the one-process run has $n rows, the INI file's plan $cl_rows"

    # A merge that lacks shard 1 must fail and say which shard is missing.
    rest=""
    i=0
    while [ "$i" -lt "$count" ]; do
        [ "$i" = 1 ] || rest="$rest $tmp/part-$i"
        i=$((i + 1))
    done
    rc=0
    # shellcheck disable=SC2086
    "$kbench" merge $rest -o "$tmp/lacking" >"$tmp/lacking.log" 2>&1 || rc=$?
    [ "$rc" != 0 ] || cl_fail "kbench merge without shard 1 of $count exited 0"
    grep -qiE "shard 1( of |/)$count" "$tmp/lacking.log" ||
        { cat "$tmp/lacking.log" >&2; cl_fail "kbench merge without shard 1 exited $rc but did not name shard 1 (above)"; }
    cl_say "merge without shard 1 exits $rc: $(grep -i "shard 1" "$tmp/lacking.log" | head -n 1)"

    # The comparison must be able to fail: a merged folder with one row
    # taken out, and one with a row given twice.
    for how in drop twice; do
        cp -r "$tmp/merged" "$tmp/broken-$how"
        python3 - "$tmp/broken-$how/results.json" "$how" <<'EOF'
import json, sys
path, how = sys.argv[1], sys.argv[2]
doc = json.load(open(path))
if how == "drop":
    doc["results"].pop(len(doc["results"]) // 2)
else:
    doc["results"].append(doc["results"][0])
json.dump(doc, open(path, "w"))
EOF
        # shellcheck disable=SC2086
        if python3 "$here/check_shards.py" "$tmp/one" "$tmp/broken-$how" $parts >/dev/null 2>&1; then
            cl_fail "the comparison accepted a merged results.json with a row $( [ "$how" = drop ] && echo taken out || echo given twice)"
        fi
    done
}

# cl_clear_parts NAME: moves one launcher's folders aside into $tmp/NAME, so
# that the next launcher starts with none.
cl_clear_parts() {
    mkdir -p "$tmp/$1"
    for d in "$tmp"/part-* "$tmp/merged" "$tmp/one" "$tmp/lacking" "$tmp"/broken-*; do
        [ ! -e "$d" ] || mv "$d" "$tmp/$1/"
    done
}
