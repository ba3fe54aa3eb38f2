#!/bin/sh
# run_external.sh BUILD_DIR EXTERNAL_SOURCE_DIR CMAKE GENERATOR
#
# Checks that kbench installs and that plugins build outside the tree:
#  1. installs the build into a temporary prefix and checks the layout;
#  2. configures and builds tests/external (hello in C; saxpy and histo, the
#     two walk-throughs of docs/plugins.md, in C + CUDA on the kit, histo's
#     reference a CUB call) with -DCMAKE_PREFIX_PATH=<prefix> and no build
#     type or CUDA
#     architectures: the host code must be optimised (Release) and the CUDA
#     code built for kbench's own architectures; a project that chooses its
#     architectures and build type keeps them; tests/external/c-only (hello
#     in a C-only project) must build without looking for CUDA;
#  3. runs the installed kbench: `list` must show its installed plugins (found
#     beside the executable, not in the build tree) and the external ones;
#     `run` must pass on the correct variants (the CUDA variants of saxpy
#     and histo are skipped without a GPU) and exit 1 on the wrong one; a
#     plugin binary of ABI 1 (abi1.c) must be refused with a pointer to
#     docs/migrating.md.
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
for f in bin/kbench include/kbench/plugin.h include/kbench/kit.h lib/libkbench_kit.a \
         lib/cmake/kbench/kbenchConfig.cmake lib/cmake/kbench/kbenchConfigVersion.cmake \
         lib/cmake/kbench/kbenchTargets.cmake lib/cmake/kbench/KbenchPlugin.cmake \
         share/doc/kbench/plugins.md share/doc/kbench/migrating.md; do
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

# An installed plugin finds the CUDA runtime it needs through its own
# DT_RUNPATH (docs/plugins.md, "kbench_add_plugin"): one entry of it holds
# the libcudart the plugin names.
if command -v readelf >/dev/null 2>&1; then
    for p in "$prefix"/lib/kbench/plugins/*.so; do
        [ -e "$p" ] || continue
        need=$(readelf -d "$p" | sed -n 's/.*NEEDED.*\[\(libcudart[^]]*\)\].*/\1/p')
        [ -n "$need" ] || continue
        runpath=$(readelf -d "$p" | sed -n 's/.*(RUNPATH).*\[\(.*\)\].*/\1/p')
        [ -n "$runpath" ] || fail "the installed $(basename "$p") has no DT_RUNPATH (readelf -d)"
        found=
        for d in $(echo "$runpath" | tr ':' ' '); do
            [ -e "$d/$need" ] && found=$d
        done
        [ -n "$found" ] ||
            fail "the installed $(basename "$p") needs $need, which no folder of its DT_RUNPATH ($runpath) holds"
    done
fi

# 2. Configure and build the external project against the prefix, choosing
#    neither a build type nor CUDA architectures.
"$cmake" -S "$src" -B "$ext" -G "$generator" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$tmp/configure.log" 2>&1 ||
    { cat "$tmp/configure.log"; fail "configuring the external plugin project failed"; }
"$cmake" --build "$ext" >"$tmp/build.log" 2>&1 ||
    { cat "$tmp/build.log"; fail "building the external plugins failed"; }
for p in hello saxpy histo; do
    [ -f "$ext/kbench-$p.so" ] || fail "the external build made no kbench-$p.so"
done
grep -q 'CMAKE_BUILD_TYPE:STRING=Release' "$ext/CMakeCache.txt" ||
    fail "an external project without a build type was not made Release"

# The compile command of one source file, from compile_commands.json.
command_of() {
    grep '"command":' "$ext/compile_commands.json" | grep "$1" | head -n 1
}
for f in hello.c saxpy.c saxpy_kernel.cu histo.c histo_kernel.cu; do
    cmd=$(command_of "$f")
    [ -n "$cmd" ] || fail "compile_commands.json has no command for $f"
    echo "$cmd" | grep -Eq -- ' -O[23] ' ||
        { echo "$cmd"; fail "$f was compiled without optimisation (-O2 or -O3)"; }
done

# kbench's CUDA architectures, as its package records them, must be exactly
# those each .cu file was compiled for.
archs=$(sed -n 's/^set(KBENCH_CUDA_ARCHITECTURES "\(.*\)")$/\1/p' \
    "$prefix/lib/cmake/kbench/kbenchConfig.cmake")
[ -n "$archs" ] || fail "the installed package does not record KBENCH_CUDA_ARCHITECTURES"
want=$(echo "$archs" | tr ';' '\n' | sed 's/-real$//; s/-virtual$//' | sort -u | tr '\n' ' ')
case "$want" in
*[!0-9a\ ]*)
    echo "external: kbench was built for '$archs': the architecture checks are skipped" ;;
*)
    objdump=$(command -v cuobjdump || true)
    nvcc=$(sed -n 's/^CMAKE_CUDA_COMPILER:[A-Z]*=//p' "$ext/CMakeCache.txt")
    [ -z "$objdump" ] && [ -x "$(dirname "$nvcc")/cuobjdump" ] && objdump=$(dirname "$nvcc")/cuobjdump
    for p in saxpy histo; do
        cmd=$(command_of "${p}_kernel.cu")
        got=$(echo "$cmd" | grep -Eo 'arch=compute_[0-9]+a?' | sed 's/arch=compute_//' | sort -u |
              tr '\n' ' ')
        [ "$got" = "$want" ] ||
            { echo "$cmd"; fail "$p's CUDA code was built for '$got', not kbench's '$want'"; }
        # The binary itself, where the toolkit has cuobjdump.
        if [ -n "$objdump" ]; then
            "$objdump" --list-elf "$ext/kbench-$p.so" >"$tmp/elf.txt" 2>&1 ||
                { cat "$tmp/elf.txt"; fail "cuobjdump --list-elf kbench-$p.so failed"; }
            elf=$(grep -Eo 'sm_[0-9]+a?' "$tmp/elf.txt" | sed 's/sm_//' | sort -u | tr '\n' ' ')
            [ "$elf" = "$want" ] ||
                { cat "$tmp/elf.txt"; fail "kbench-$p.so holds code for '$elf', not kbench's '$want'"; }
        fi
    done
    [ -n "$objdump" ] ||
        echo "external: no cuobjdump; the architectures were checked in the compile commands" ;;
esac

# A project that chooses its own architectures and build type keeps them
# (configured only: the compile commands are written at configure time).
"$cmake" -S "$src" -B "$tmp/ext-chosen" -G "$generator" -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CUDA_ARCHITECTURES=80 >"$tmp/chosen.log" 2>&1 ||
    { cat "$tmp/chosen.log"; fail "configuring the external project with its own choices failed"; }
cmd=$(grep '"command":' "$tmp/ext-chosen/compile_commands.json" | grep saxpy_kernel.cu)
echo "$cmd" | grep -q 'arch=compute_80' && ! echo "$cmd" | grep -Eq 'compute_90|-O3' ||
    { echo "$cmd"; fail "the project's own CUDA architectures (80) or build type (Debug) were overridden"; }

# hello in a project that enables C alone: it must not look for CUDA.
"$cmake" -S "$src/c-only" -B "$tmp/c-only" -G "$generator" -DCMAKE_PREFIX_PATH="$prefix" \
    >"$tmp/c-only.log" 2>&1 ||
    { cat "$tmp/c-only.log"; fail "configuring the C-only plugin project failed"; }
"$cmake" --build "$tmp/c-only" >>"$tmp/c-only.log" 2>&1 ||
    { cat "$tmp/c-only.log"; fail "building the C-only plugin project failed"; }
if grep -qi cuda "$tmp/c-only.log"; then
    cat "$tmp/c-only.log"
    fail "configuring or building a C-only plugin project looked for CUDA"
fi
[ -f "$tmp/c-only/kbench-hello.so" ] || fail "the C-only build made no kbench-hello.so"

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

grep -q '^saxpy ' "$tmp/list.out" || { cat "$tmp/list.out"; fail "kbench list does not show saxpy"; }
grep -q 'cuda  *cuda ' "$tmp/list.out" ||
    { cat "$tmp/list.out"; fail "kbench list does not show saxpy's cuda variant"; }
grep -q '^histo ' "$tmp/list.out" || { cat "$tmp/list.out"; fail "kbench list does not show histo"; }
grep -Eq 'cub  *cuda .*library' "$tmp/list.out" ||
    { cat "$tmp/list.out"; fail "kbench list does not show histo's cub variant as a library"; }

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

"$kb" run "$src/saxpy.ini" --plugin-path "$ext" >"$tmp/saxpy.out" 2>"$tmp/saxpy.err"
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/saxpy.out" "$tmp/saxpy.err"; fail "kbench run saxpy.ini exited with $rc, not 0"; }
[ "$(grep -Ec '^  cpu  *cpu  *pass ' "$tmp/saxpy.out")" -eq 2 ] ||
    { cat "$tmp/saxpy.out"; fail "saxpy's cpu variant did not pass at both points"; }
# Without a GPU the skipped CUDA rows fold into one line per experiment.
grep -Eq '^  cuda  *cuda  *(pass|skipped) |^  CUDA variants skipped: (.*, )?cuda(,|:)' "$tmp/saxpy.out" ||
    { cat "$tmp/saxpy.out"; fail "saxpy's cuda variant neither passed nor was skipped"; }

# The second walk-through: histo's cpu variant passes at each of its four
# points (two sizes, one of them 2^20+3, times two skews), exactly; its
# CUDA variants pass where there is a GPU and are skipped elsewhere.
"$kb" run "$src/histo.ini" --plugin-path "$ext" >"$tmp/histo.out" 2>"$tmp/histo.err"
rc=$?
[ $rc -eq 0 ] || { cat "$tmp/histo.out" "$tmp/histo.err"; fail "kbench run histo.ini exited with $rc, not 0"; }
[ "$(grep -Ec '^  cpu  *cpu  *pass ' "$tmp/histo.out")" -eq 4 ] ||
    { cat "$tmp/histo.out"; fail "histo's cpu variant did not pass at all four points"; }
grep -q 1048579 "$tmp/histo.out" ||
    { cat "$tmp/histo.out"; fail "the run's table does not show the point n=2^20+3=1048579"; }
for v in shared cub; do
    [ "$(grep -Ec "^  $v( \\[[a-z|]*\\])?  *cuda  *(pass|skipped) " "$tmp/histo.out")" -eq 4 ] ||
        grep -Eq "^  CUDA variants skipped: (.*, )?$v(,|:)" "$tmp/histo.out" ||
        { cat "$tmp/histo.out"; fail "histo's $v variant neither passed nor was skipped at each point"; }
done

# The conformance check passes for the out-of-tree plugins (CUDA variants
# are skipped without a GPU and checked on one), and catches hello's variant
# that is wrong on purpose.
for p in "hello --variants scalar" saxpy histo; do
    # shellcheck disable=SC2086
    "$kb" check $p --plugin-path "$ext" >"$tmp/check-$p.out" 2>&1 ||
        { cat "$tmp/check-$p.out"; fail "kbench check $p failed"; }
    grep -q '^summary: [0-9]* ok, 0 FAIL' "$tmp/check-$p.out" ||
        { cat "$tmp/check-$p.out"; fail "kbench check $p printed no clean summary"; }
done
"$kb" check hello --variants off_by_one --plugin-path "$ext" >"$tmp/check-wrong.out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q '^FAIL correct-run off_by_one' "$tmp/check-wrong.out" ||
    { cat "$tmp/check-wrong.out"; fail "kbench check did not fail hello's wrong variant with exit 1 (got $rc)"; }

"$kb" run "$src/hello_wrong.ini" --plugin-path "$ext" >"$tmp/wrong.out" 2>"$tmp/wrong.err"
rc=$?
[ $rc -eq 1 ] ||
    { cat "$tmp/wrong.out" "$tmp/wrong.err"; fail "kbench run of a failing variant exited with $rc, not 1"; }

# A plugin binary built for ABI 1 is refused, and the warning says where
# the porting note is: a rebuild alone does not compile.
mkdir -p "$tmp/abi1" || exit 1
${CC:-cc} -shared -fPIC -o "$tmp/abi1/kbench-old.so" "$src/abi1.c" >"$tmp/abi1.log" 2>&1 ||
    { cat "$tmp/abi1.log"; fail "compiling the ABI 1 stand-in (abi1.c) failed"; }
"$kb" list --plugin-path "$tmp/abi1" >"$tmp/abi1.out" 2>"$tmp/abi1.err"
grep -q "kbench-old.so: plugin ABI 1.0, but this kbench speaks ABI 2.x; port the plugin to ABI 2" \
    "$tmp/abi1.err" && grep -q 'docs/migrating.md' "$tmp/abi1.err" ||
    { cat "$tmp/abi1.out" "$tmp/abi1.err"; fail "an ABI 1 plugin was not refused with a pointer to docs/migrating.md"; }

echo "external: install, out-of-tree C and CUDA builds (Release, kbench's CUDA architectures), list, describe, run and the refusal of an ABI 1 plugin all passed"
exit 0
