#!/bin/sh
# A plugin's faults on a GPU machine, where they cost the most: a process a
# plugin leaves behind holds the worker's GPU lock, and `kbench check` opens
# a CUDA context in each of its children (kbench's own process never does).
#   tests/gpu/faults.sh BUILD_DIR
# BUILD_DIR is a build with the tests (the crash fixtures in
# BUILD_DIR/tests/fixtures/crash).  Steps, each ok or FAILED in the table
# printed last; logs in $OUT (when set) or ./gpu-faults-logs:
#   lock     kbench run tests/fixtures/crash/strays.ini: forker and daemon
#            leave a process each, which inherited the worker's GPU lock;
#            the rows say so (processes_left 1 at n=200), and a second run
#            started at once is not refused for the lock (exit 0)
#   cloexec  kbench run tests/fixtures/crash/channel.ini: fdleak finds no
#            descriptor of the worker's (the channel, the GPU's lock) that a
#            program it ran would hold (its row passes), and closeall is
#            crashed for closing the channel
#   check    kbench check gpucrash --variants ok,spin,cpu with a watchdog of
#            20 s: spin's kernel never ends, so its download() is stopped by
#            the watchdog (FAIL correct-run spin, exit 1), and ok and cpu are
#            checked in a fresh child with a fresh CUDA context (ok lines)
# Exit status: 0 when every step passed, 1 when one failed, 2 on bad usage.
set -u
[ $# -eq 1 ] || { echo "usage: tests/gpu/faults.sh BUILD_DIR" >&2; exit 2; }
build=$1
kbench="$build/kbench"
fixtures="$build/tests/fixtures/crash"
src=$(cd "$(dirname "$0")/../.." && pwd)
[ -x "$kbench" ] || { echo "faults.sh: no kbench at $kbench (build it first)" >&2; exit 2; }
[ -f "$fixtures/kbench-crash.so" ] && [ -f "$fixtures/kbench-gpucrash.so" ] ||
    { echo "faults.sh: no crash fixtures in $fixtures (a build with the tests)" >&2; exit 2; }
logs=${OUT:-$PWD/gpu-faults-logs}
mkdir -p "$logs"
export KBENCH_NO_DEFAULT_PLUGINS=1 KBENCH_PLUGIN_PATH=
summary=""
status=0
note() { summary="$summary$1
"; }

# lock: strays.ini, then good.ini at once.
rm -rf "$logs/strays"
"$kbench" run "$src/tests/fixtures/crash/strays.ini" --plugin-path "$fixtures" -q \
    -o "$logs/strays" >"$logs/strays.log" 2>&1
rc1=$?
"$kbench" run "$src/tests/fixtures/crash/good.ini" --plugin-path "$fixtures" -q \
    >"$logs/good-after.log" 2>&1
rc2=$?
left=$(grep -c '"processes_left": 1' "$logs/strays/results.json" 2>/dev/null)
gpu=$(grep -m1 '^machine:' "$logs/strays.log")
if [ $rc1 -ne 1 ] || [ $rc2 -ne 0 ] || [ "${left:-0}" -lt 6 ] ||
    echo "$gpu" | grep -q 'no GPU'; then
    note "FAILED  lock: strays.ini exit $rc1 (1 wanted: forksegv crashes), good.ini after it \
exit $rc2 (0 wanted), ${left:-0} rows with processes_left 1 (6 or more wanted); $gpu \
(logs: $logs/strays.log, $logs/good-after.log)"
    status=1
else
    note "ok      lock: the processes left were ended with their points ($left rows say so); \
the next run took the GPU at once; $gpu"
fi

# cloexec: the worker's descriptors with a GPU lock among them.
rm -rf "$logs/channel"
"$kbench" run "$src/tests/fixtures/crash/channel.ini" --plugin-path "$fixtures" -o "$logs/channel" \
    >"$logs/channel.log" 2>&1
fdleak=$(grep -A1 '^  fdleak ' "$logs/channel.log" | head -2 | tr '\n' ' ')
if ! grep -q '^  fdleak  *cpu  *pass' "$logs/channel.log" ||
    ! grep -q "crashed: the plugin closed kbench's channel" "$logs/channel.log"; then
    note "FAILED  cloexec: fdleak: $fdleak (log: $logs/channel.log)"
    status=1
else
    note "ok      cloexec: no descriptor of the worker's outlives an exec; a closed channel \
is named"
fi

# check: a kernel that never ends, under check's watchdog.
KBENCH_CHECK_TIMEOUT=20 "$kbench" check gpucrash --variants ok,spin,cpu --plugin-path "$fixtures" \
    >"$logs/check.log" 2>"$logs/check.err"
rc=$?
ck="$logs/check.log"
fails=$(grep -c '^FAIL' "$ck")
if [ $rc -ne 1 ] || [ "$fails" -ne 1 ] ||
    ! grep -q '^FAIL correct-run spin: .*did not return within 20 s' "$ck" ||
    ! grep -q '^ok   correct-run ok ' "$ck" || ! grep -q '^ok   correct-run cpu ' "$ck"; then
    note "FAILED  check: exit $rc (1 wanted); $fails FAIL lines (1 wanted: correct-run spin) \
(log: $ck)"
    grep -E '^(FAIL|skip)' "$logs/check.log" | head -10
    status=1
else
    note "ok      check: $(grep '^FAIL' "$logs/check.log" | cut -c1-160)"
fi

echo "---- faults on a GPU ----"
printf '%s' "$summary"
[ $status -eq 0 ] && echo "all passed" || echo "some steps failed"
exit $status
