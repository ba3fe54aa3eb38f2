#!/bin/sh
# `kbench check` on every plugin of a build, all variants (for the GPU
# machine: there the CUDA variants are checked too; without a GPU they are
# skipped, as in CI).
#   tests/gpu/check.sh BUILD_DIR
# Each plugin file in BUILD_DIR/plugins is loaded on its own, and every
# plugin it declares is checked.  Logs go to $OUT (when set) or
# ./gpu-check-logs, one per plugin.  Exit status: 0 when every check of every
# plugin passed, 1 when one failed (or no plugin was found), 2 on bad usage.
set -u
[ $# -eq 1 ] || { echo "usage: tests/gpu/check.sh BUILD_DIR" >&2; exit 2; }
build=$1
kbench="$build/kbench"
[ -x "$kbench" ] || { echo "check.sh: no kbench at $kbench (build it first)" >&2; exit 2; }
[ -d "$build/plugins" ] || { echo "check.sh: no plugin folder $build/plugins" >&2; exit 2; }
logs=${OUT:-$PWD/gpu-check-logs}
mkdir -p "$logs"
status=0
checked=0
summary=""

for so in "$build"/plugins/*.so; do
    [ -f "$so" ] || continue
    # The names it declares: `kbench list` starts each plugin's entry at the
    # first column.
    names=$(KBENCH_NO_DEFAULT_PLUGINS=1 KBENCH_PLUGIN_PATH= "$kbench" list --plugin-path "$so" 2>/dev/null |
        awk '/^[^ \t]/ {print $1}')
    if [ -z "$names" ]; then
        summary="${summary}FAILED  $so: declares no plugin kbench can load
"
        status=1
        continue
    fi
    for name in $names; do
        log="$logs/check-$name.log"
        KBENCH_NO_DEFAULT_PLUGINS=1 KBENCH_PLUGIN_PATH= "$kbench" check "$name" --plugin-path "$so" >"$log" 2>&1
        rc=$?
        checked=$((checked + 1))
        line=$(grep '^summary:' "$log" | tail -1)
        if [ $rc -ne 0 ]; then
            summary="${summary}FAILED  $name: exit $rc; ${line:-no summary line} (log: $log)
"
            grep -E '^FAIL ' "$log" | head -20
            status=1
        else
            summary="${summary}ok      $name: $line
"
        fi
    done
done
[ $checked -gt 0 ] || { summary="${summary}FAILED  no plugin in $build/plugins
"; status=1; }

echo "---- kbench check ----"
printf '%s' "$summary"
[ $status -eq 0 ] && echo "all passed" || echo "some checks failed"
exit $status
