#!/bin/sh
# tools/apt-get-wait against a fake apt-get: one that fails twice on a held
# lock and then succeeds is waited for (and the wait is said once); one
# whose lock is never freed gives up after the bound with a sentence and
# apt-get's status; any other failure is returned at once, without waiting.
#   check_apt_wait.sh SOURCE_DIR
set -u
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/apt-get" <<'FAKE'
#!/bin/sh
n=$(cat "$FAKE_COUNT" 2>/dev/null || echo 0)
echo $((n + 1)) >"$FAKE_COUNT"
case "$FAKE_MODE" in
lock) if [ "$n" -lt "$FAKE_LOCKED" ]; then
        echo "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (unattended-upgr)" >&2
        exit 100
      fi
      echo "installed $*"; exit 0 ;;
other) echo "E: Unable to locate package nosuch" >&2; exit 100 ;;
esac
FAKE
chmod +x "$tmp/apt-get"
fail=0
export KBENCH_APT_GET="$tmp/apt-get" KBENCH_APT_RETRY_S=0 FAKE_COUNT="$tmp/count"

FAKE_MODE=lock FAKE_LOCKED=2 KBENCH_APT_WAIT_S=10 sh "$src/tools/apt-get-wait" install x >"$tmp/out" 2>"$tmp/err"
st=$?
[ "$st" = 0 ] || { echo "FAIL: a lock freed after two tries: status $st"; fail=1; }
[ "$(cat "$tmp/count")" = 3 ] || { echo "FAIL: expected 3 tries, got $(cat "$tmp/count")"; fail=1; }
[ "$(grep -c 'waiting for it' "$tmp/err")" = 1 ] || { echo "FAIL: the wait is not said once"; cat "$tmp/err"; fail=1; }

rm -f "$tmp/count"
FAKE_MODE=lock FAKE_LOCKED=1000 KBENCH_APT_WAIT_S=0 sh "$src/tools/apt-get-wait" install x >"$tmp/out" 2>"$tmp/err"
st=$?
[ "$st" = 100 ] || { echo "FAIL: a lock never freed: status $st, not apt-get's 100"; fail=1; }
grep -q "still holds the lock after 0 s" "$tmp/err" || { echo "FAIL: no sentence after the bound"; cat "$tmp/err"; fail=1; }

rm -f "$tmp/count"
FAKE_MODE=other KBENCH_APT_WAIT_S=10 sh "$src/tools/apt-get-wait" install nosuch >"$tmp/out" 2>"$tmp/err"
st=$?
[ "$st" = 100 ] || { echo "FAIL: another failure: status $st"; fail=1; }
[ "$(cat "$tmp/count")" = 1 ] || { echo "FAIL: another failure was retried"; fail=1; }
grep -q "Unable to locate package" "$tmp/err" || { echo "FAIL: apt-get's own error was not passed on"; fail=1; }

[ "$fail" = 0 ] && echo "ok: apt-get-wait waits for a held lock, bounded, and only for it"
exit "$fail"
