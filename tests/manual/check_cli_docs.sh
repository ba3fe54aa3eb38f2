#!/bin/bash
# Checks that docs/cli.md and README.md say what the built kbench does:
#   - the synopsis at the top of docs/cli.md is the usage lines of
#     `kbench --help`, line for line;
#   - the command table of docs/cli.md lists every command of the option
#     table (kbench __options), in its order, and nothing else;
#   - the option table of docs/cli.md has a row for every option, whose
#     "applies to" column names exactly the commands that take it (the rule
#     kbench enforces), and no row for an option kbench does not have;
#   - the exit-code table is one table, with a row for each exit code the
#     usage text names;
#   - a command's help shown in docs/cli.md is what `kbench help CMD` prints;
#   - the sentence a bare `kbench` prints is quoted as it is;
#   - README.md shows every command but help in an example.
# Usage: check_cli_docs.sh KBENCH SOURCE_DIR
set -u -o pipefail
kbench=$1
src=$2
cli=$src/docs/cli.md
fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }

usage=$("$kbench" --help) || { echo "FAIL: kbench --help failed" >&2; exit 1; }
dump=$("$kbench" __options | tr '\t' '\037') || { echo "FAIL: kbench __options failed" >&2; exit 1; }

# The synopsis: the usage lines without "usage: " (7 columns), and the
# first fenced block of docs/cli.md.
want=$(awk 'NR == 1 { sub(/^usage: /, "") } /^$/ { exit } NR > 1 { $0 = substr($0, 8) } { print }' <<<"$usage")
have=$(awk '/^```/ { if (open) exit; open = 1; next } open { print }' "$cli")
if [ "$want" != "$have" ]; then
    bad "the synopsis of docs/cli.md is not the usage text of kbench --help:"
    diff <(echo "$want") <(echo "$have") | sed 's/^/    /' >&2
fi

# A markdown table of docs/cli.md: the rows after the heading line that
# starts with $1, up to the first line that is not a row.
table() {
    awk -v head="$1" 'index($0, head) == 1 { on = 1; getline; next }
                      on && /^\|/ { print; next } on { exit }' "$cli"
}

# The commands, in order.
want=$(awk -F'\037' '$1 == "command" { print $2 }' <<<"$dump")
have=$(table '| command | what it does |' | sed -n 's/^| `\([a-z]*\).*/\1/p')
if [ "$want" != "$have" ]; then
    bad "the command table of docs/cli.md does not list kbench's commands in order:"
    diff <(echo "$want") <(echo "$have") | sed 's/^/    /' >&2
fi

# The options: each row's first cell names the option (`--name` or
# `--name VALUE`, `--name=...`), its second the commands.  Cells are
# separated by '|' (a '\|' inside a cell is not a separator).
options=$(table '| option | applies to | meaning |' | sed 's/\\|/\x1e/g')
n=0
while IFS=$'\037' read -r kind name short arg rep opt only help; do
    [ "$kind" = option ] || continue
    n=$((n + 1))
    row=$(awk -F'|' -v n="$name" '{ c = $2 " " } index(c, "`" n " ") || index(c, "`" n "`") ||
                                       index(c, "`" n "=") || index(c, "`" n "[") { print; exit }' \
          <<<"$options")
    if [ -z "$row" ]; then
        bad "option $name has no row in the option table of docs/cli.md"
        continue
    fi
    cell=$(awk -F'|' '{ print $3 }' <<<"$row")
    want=$(tr ' ' '\n' <<<"$only" | sed '/^$/d' | sort | tr '\n' ' ')
    have=$(tr -d ' ' <<<"$cell" | tr ',' '\n' | sed '/^$/d; /^all$/d' | sort | tr '\n' ' ')
    [ "$want" = "$have" ] ||
        bad "option $name applies to '${only:-all}' but docs/cli.md says '$cell'"
done <<<"$dump"
[ $n -gt 10 ] || bad "kbench __options printed only $n options"
names=$(awk -F'\037' '$1 == "option" { print $2 }' <<<"$dump")
while read -r first; do
    for word in $(grep -o -- '`--[a-z-]*' <<<"$first" | tr -d '`'); do
        grep -qx -- "$word" <<<"$names" || [ "$word" = -- ] ||
            bad "docs/cli.md has a row for $word, which kbench does not have"
    done
done < <(awk -F'|' '{ print $2 }' <<<"$options")

# The exit codes the usage text names, each a row of the one table.
codes=$(table '| code | meaning |' | sed -n 's/^| \([0-9]*\) |.*/\1/p' | tr '\n' ' ')
for code in 0 1 2 3 130; do
    grep -qE "(^|[ (;])$code " <<<"$usage" || bad "kbench --help does not name the exit code $code"
    case " $codes" in *" $code "*) ;; *) bad "exit code $code is not a row of the exit-code table of docs/cli.md" ;; esac
done

# A command's help that docs/cli.md shows ("$ kbench help CMD" and what
# follows in its fenced block) is what kbench prints.
while read -r topic; do
    want=$("$kbench" help "$topic")
    have=$(awk -v t="\$ kbench help $topic" '$0 == t { on = 1; next } on && /^```/ { exit } on { print }' "$cli")
    if [ "$want" != "$have" ]; then
        bad "docs/cli.md shows another help of $topic than kbench help $topic prints:"
        diff <(echo "$want") <(echo "$have") | sed 's/^/    /' >&2
    fi
done < <(sed -n 's/^\$ kbench help \([a-z]*\)$/\1/p' "$cli")

# The sentence of a bare `kbench`, quoted as it is printed.
bare=$("$kbench" 2>&1 >/dev/null)
grep -qF -- "\`$bare\`" "$cli" || bad "docs/cli.md does not quote what a bare kbench says: $bare"

# README.md's examples show each command.
for c in $(awk -F'\037' '$1 == "command" && $2 != "help" { print $2 }' <<<"$dump"); do
    grep -qE "kbench $c( |\$)" "$src/README.md" || bad "README.md has no example of kbench $c"
done

[ $fail = 0 ] && echo "docs/cli.md and README.md agree with kbench --help and its $n options"
exit $fail
