#!/bin/sh
# A core-only configure (KBENCH_FAMILIES=OFF) builds no tests unless asked,
# so that it needs no Criterion: configured here with Criterion hidden from
# CMake, it must succeed and leave BUILD_TESTING off; asked for the tests
# without Criterion, it must stop with the sentence that names the package.
#   check_core_only.sh SOURCE_DIR CMAKE GENERATOR
set -eu
src=$1 cmake=$2 gen=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! "$cmake" -S "$src" -B "$tmp/core" -G "$gen" -DKBENCH_FAMILIES=OFF >"$tmp/core.log" 2>&1; then
    cat "$tmp/core.log"; echo "FAIL: the core-only configure failed"; exit 1
fi
grep -q '^BUILD_TESTING:BOOL=OFF' "$tmp/core/CMakeCache.txt" ||
    { echo "FAIL: a core-only configure left BUILD_TESTING on"; exit 1; }
if grep -q '^CRITERION_LIB' "$tmp/core/CMakeCache.txt"; then
    echo "FAIL: a core-only configure looked for Criterion"; exit 1
fi
grep -q "kbench tests: off in a core-only build" "$tmp/core.log" ||
    { echo "FAIL: the configure did not say the tests are off"; exit 1; }
# Asked for the tests, with Criterion out of reach: one sentence, not
# CMake's bare "CRITERION_LIB-NOTFOUND".
if "$cmake" -S "$src" -B "$tmp/tests" -G "$gen" -DKBENCH_FAMILIES=OFF -DBUILD_TESTING=ON \
        -DCMAKE_IGNORE_PATH="$(dirname "$(find /usr -name 'libcriterion.so*' 2>/dev/null | head -1)" 2>/dev/null || echo /nowhere);/usr/include/criterion;/usr/include" \
        >"$tmp/tests.log" 2>&1; then
    if grep -q '^CRITERION_LIB:FILEPATH=/' "$tmp/tests/CMakeCache.txt"; then
        echo "note: Criterion could not be hidden from CMake here; the missing-Criterion sentence is not checked"
    else
        echo "FAIL: a configure with the tests and without Criterion succeeded"; exit 1
    fi
else
    grep -q "libcriterion-dev" "$tmp/tests.log" ||
        { cat "$tmp/tests.log"; echo "FAIL: the missing-Criterion error does not name the package"; exit 1; }
fi
echo "ok: a core-only configure builds no tests and needs no Criterion"
