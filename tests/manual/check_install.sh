#!/bin/sh
# Checks that `cmake --install` puts the man page, both completions, the
# docs, the example experiments and the JSON Schema where README.md says.
# Usage: check_install.sh CMAKE BUILD_DIR
set -u
cmake=$1
build=$2
prefix=$(mktemp -d /tmp/kbench-install-XXXXXX)
trap 'rm -rf "$prefix"' EXIT
"$cmake" --install "$build" --prefix "$prefix" >/dev/null || { echo "FAIL: cmake --install failed" >&2; exit 1; }
fail=0
for f in bin/kbench share/man/man1/kbench.1 share/bash-completion/completions/kbench \
         share/zsh/site-functions/_kbench share/kbench/results.schema.json \
         share/kbench/conf/default.ini share/doc/kbench/README.md share/doc/kbench/cli.md \
         share/doc/kbench/output.md share/doc/kbench/plugins.md; do
    [ -s "$prefix/$f" ] || { echo "FAIL: cmake --install left out $f" >&2; fail=1; }
done
# Every experiment of conf/ is installed.
for ini in "$(dirname "$0")"/../../conf/*.ini; do
    [ -s "$prefix/share/kbench/conf/$(basename "$ini")" ] ||
        { echo "FAIL: cmake --install left out conf/$(basename "$ini")" >&2; fail=1; }
done
[ $fail = 0 ] && echo "cmake --install put every file in place"
exit $fail
