#!/bin/sh
# run_external.sh BUILD_DIR EXTERNAL_SOURCE_DIR CMAKE GENERATOR
#
# Checks that kbench installs and that a plugin builds outside the tree:
#  1. installs the build into a temporary prefix and checks the layout;
#  2. configures and builds tests/external (a C-only plugin project) with
#     -DCMAKE_PREFIX_PATH=<prefix>;
#  3. runs the installed kbench: `list` must show its installed plugins (found
#     beside the executable, not in the build tree) and the external one;
#     `run` must pass on the correct variant and exit 1 on the wrong one.
# Every failure prints one line saying which check failed; exit 1 then.
set -u
build=$1
src=$2
cmake=${3:-cmake}
generator=${4:-Ninja}

tmp=$(mktemp -d /tmp/kbench-external-XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
ext=$tmp/ext-build
# Only the installed folders and --plugin-path may provide plugins here.
unset KBENCH_PLUGIN_PATH KBENCH_NO_DEFAULT_PLUGINS

fail() {
    echo "external: FAILED: $*" >&2
    exit 1
}

# 1. Install.
"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; fail "cmake --install $build did not succeed"; }
for f in bin/kbench include/kbench/plugin.h \
         lib/cmake/kbench/kbenchConfig.cmake lib/cmake/kbench/kbenchConfigVersion.cmake \
         lib/cmake/kbench/kbenchTargets.cmake lib/cmake/kbench/KbenchPlugin.cmake; do
    [ -f "$prefix/$f" ] || fail "the install lacks $f"
done
[ -x "$prefix/bin/kbench" ] || fail "the installed bin/kbench is not executable"
# Every plugin the build made is installed, and no test fixture is.
n_plugins=0
for p in "$build"/plugins/kbench-*.so; do
    [ -e "$p" ] || continue
    n_plugins=$((n_plugins + 1))
    [ -f "$prefix/lib/kbench/plugins/$(basename "$p")" ] ||
        fail "the build's plugin $(basename "$p") was not installed into lib/kbench/plugins"
done
for p in "$prefix"/lib/kbench/plugins/*; do
    [ -e "$p" ] || continue
    [ -f "$build/plugins/$(basename "$p")" ] ||
        fail "lib/kbench/plugins holds $(basename "$p"), which is not one of the build's plugins"
done

# 2. Configure and build the external project against the prefix.
"$cmake" -S "$src" -B "$ext" -G "$generator" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_BUILD_TYPE=Release >"$tmp/configure.log" 2>&1 ||
    { cat "$tmp/configure.log"; fail "configuring the external plugin project failed"; }
"$cmake" --build "$ext" >"$tmp/build.log" 2>&1 ||
    { cat "$tmp/build.log"; fail "building the external plugin failed"; }
[ -f "$ext/kbench-hello.so" ] || fail "the external build made no kbench-hello.so"
if grep -qi cuda "$tmp/configure.log"; then
    cat "$tmp/configure.log"
    fail "configuring a C-only plugin project looked for CUDA"
fi

# 3. Run the installed kbench.
kb=$prefix/bin/kbench
"$kb" list --plugin-path "$ext" >"$tmp/list.out" 2>"$tmp/list.err"
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/list.out" "$tmp/list.err"; fail "kbench list exited with $rc"; }
[ -s "$tmp/list.err" ] && { cat "$tmp/list.err"; fail "kbench list warned about something"; }
grep -q '^hello ' "$tmp/list.out" || { cat "$tmp/list.out"; fail "kbench list does not show hello"; }
grep -q "file: $ext/kbench-hello.so" "$tmp/list.out" ||
    { cat "$tmp/list.out"; fail "kbench list does not name the external file"; }
grep -q 'off_by_one  *cpu ' "$tmp/list.out" ||
    { cat "$tmp/list.out"; fail "kbench list does not show hello's variants with their backend"; }
n_listed=$(grep -c "file: $prefix/lib/kbench/plugins/" "$tmp/list.out")
[ "$n_listed" -ge "$n_plugins" ] ||
    { cat "$tmp/list.out"; fail "the installed kbench found $n_listed of its $n_plugins installed plugins"; }
grep -q "file: $build/" "$tmp/list.out" &&
    { cat "$tmp/list.out"; fail "the installed kbench loaded plugins from the build tree"; }

"$kb" describe hello --plugin-path "$ext" >"$tmp/describe.out" 2>&1 ||
    { cat "$tmp/describe.out"; fail "kbench describe hello failed"; }
grep -q 'n  *size  *4K  *\[1, 2^26\]  *all  *number of elements' "$tmp/describe.out" ||
    { cat "$tmp/describe.out"; fail "kbench describe hello does not show parameter n"; }

cd "$tmp" || exit 1
"$kb" run "$src/hello.ini" --plugin-path "$ext" >"$tmp/run.out" 2>"$tmp/run.err"
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/run.out" "$tmp/run.err"; fail "kbench run hello.ini exited with $rc, not 0"; }
grep -q scalar "$tmp/run.out" || { cat "$tmp/run.out"; fail "the run's table does not show variant scalar"; }
grep -q 65536 "$tmp/run.out" || { cat "$tmp/run.out"; fail "the run's table does not show the point n=65536"; }

"$kb" run "$src/hello_wrong.ini" --plugin-path "$ext" >"$tmp/wrong.out" 2>"$tmp/wrong.err"
rc=$?
[ $rc -eq 1 ] ||
    { cat "$tmp/wrong.out" "$tmp/wrong.err"; fail "kbench run of a failing variant exited with $rc, not 1"; }

echo "external: install, out-of-tree build, list, describe and run all passed"
exit 0
