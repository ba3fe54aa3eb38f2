#!/bin/bash
# Checks the man page and the shell completions the build made from kbench's
# option table (core/src/cli/gen_manual.c):
#   - every option of the table (kbench __options), and every command, is in
#     kbench.1, in the bash completion and in the zsh completion;
#   - the bash completion loads (complete -p kbench) and completes options
#     by command: `kbench CMD --` offers every option CMD takes and no
#     other, for every command; `kbench ` offers every command, `kbench
#     history ` each subcommand the usage text names (so does zsh), and
#     run and tune offer .ini files;
#   - `kbench help ` offers every command (so does zsh), and kbench.1
#     shows every example of the table of commands;
#   - the man page formats without a warning (when man is installed), and
#     the zsh completion parses (when zsh is installed).
# Usage: check_manual.sh KBENCH MANUAL_DIR
set -u -o pipefail
kbench=$1
dir=$2
fail=0
bad() { echo "FAIL: $*" >&2; fail=1; }

# Fields are separated by tabs; read splits on a unit separator instead,
# since it folds runs of tabs (empty fields) into one.
dump=$("$kbench" __options | tr '\t' '\037') || { echo "FAIL: kbench __options failed" >&2; exit 1; }
for f in kbench.1 kbench.bash _kbench; do
    [ -s "$dir/$f" ] || bad "$dir/$f is missing or empty"
done
[ $fail = 0 ] || exit 1

n=0
while IFS=$'\037' read -r kind name short arg rep opt only help; do
    case $kind in
    option)
        n=$((n + 1))
        roff=${name//-/\\-}
        grep -qF -- "\\fB$roff\\fR" "$dir/kbench.1" || bad "option $name is not in kbench.1"
        grep -qE -- "(^|[ '|(])$name([ '|)=[]|$)" "$dir/kbench.bash" ||
            bad "option $name is not in the bash completion"
        grep -qE -- "(^|[ '|(])$name([ '|)=[+]|$)" "$dir/_kbench" ||
            bad "option $name is not in the zsh completion"
        if [ -n "$short" ]; then
            grep -qF -- "\\fB\\-$short\\fR" "$dir/kbench.1" || bad "option -$short is not in kbench.1"
            grep -qE -- "[ '|]-$short[ '|)]" "$dir/kbench.bash" || bad "option -$short is not in the bash completion"
            grep -qF -- "'(-$short $name)-$short" "$dir/_kbench" || bad "option -$short is not in the zsh completion"
        fi
        ;;
    command)
        grep -qE "^\\.B $name( |$)" "$dir/kbench.1" || bad "command $name is not in kbench.1"
        grep -qE -- "[ ']$name[ ']" "$dir/kbench.bash" || bad "command $name is not in the bash completion"
        grep -qF -- "'$name:" "$dir/_kbench" || bad "command $name is not in the zsh completion"
        ;;
    esac
done <<<"$dump"
[ $n -gt 10 ] || bad "kbench __options printed only $n options"

# The bash completion loads and registers itself.
out=$(bash -c "source '$dir/kbench.bash' && complete -p kbench" 2>&1)
[ "$out" = "complete -o filenames -F _kbench kbench" ] ||
    bad "the bash completion does not load: $out"

# Completing options, as bash would for "kbench CMD --".
complete_words() {
    bash -c "source '$dir/kbench.bash'
             COMP_WORDS=($*); COMP_CWORD=\$((\${#COMP_WORDS[@]} - 1)); _kbench
             printf '%s\n' \"\${COMPREPLY[@]}\"" 2>&1
}
# Every command offers exactly the options that it takes.
commands=$(awk -F'\037' '$1 == "command" { print $2 }' <<<"$dump")
for c in $commands; do
    offered=$(complete_words kbench "$c" --)
    while IFS=$'\037' read -r kind name short arg rep opt only help; do
        [ "$kind" = option ] || continue
        case " $only " in "  " | *" $c "*) takes=1 ;; *) takes=0 ;; esac
        if [ $takes = 1 ]; then
            grep -qx -- "$name" <<<"$offered" || bad "'kbench $c --' does not offer $name"
        else
            grep -qx -- "$name" <<<"$offered" && bad "'kbench $c --' offers $name, which $c does not take"
        fi
    done <<<"$dump"
done
cmds=$(complete_words kbench "''")
for c in $commands; do
    grep -qx "$c" <<<"$cmds" || bad "'kbench ' does not offer the command $c"
done
# The subcommands the usage lines name ("kbench history add ..."), after
# their command, in both completions.
usage=$("$kbench" --help)
for c in $commands; do
    subs=$(sed -n "s/^\(usage:\)\{0,1\} *kbench $c \([a-z|]*\)\( .*\)\{0,1\}\$/\2/p" <<<"$usage" | tr '|' '\n')
    [ -n "$subs" ] || continue
    offered=$(complete_words kbench "$c" "''")
    for sub in $subs; do
        grep -qx -- "$sub" <<<"$offered" || bad "'kbench $c ' does not offer the subcommand $sub"
        grep -qE -- "\\($c\\) .*[(' ]$sub[ )]" "$dir/_kbench" ||
            bad "the zsh completion does not offer the subcommand $sub of $c"
    done
done
# After help, the commands (both completions).
offered=$(complete_words kbench help "''")
for c in $commands; do
    grep -qx -- "$c" <<<"$offered" || bad "'kbench help ' does not offer the command $c"
done
zhelp=$(grep -F -- "(help) args+=('2:command:(" "$dir/_kbench")
for c in $commands; do
    grep -qE -- "[( ]$c[ )]" <<<"$zhelp" || bad "the zsh completion does not offer $c after help"
done
# Every example of the table, in the man page's EXAMPLES.
while IFS=$'\037' read -r kind name summary synopsis ex1 ex2 complete; do
    [ "$kind" = command ] || continue
    for ex in "$ex1" "$ex2"; do
        [ -n "$ex" ] || bad "command $name has no two examples"
        grep -qxF -- "${ex//-/\\-}" "$dir/kbench.1" || bad "the example '$ex' is not in kbench.1"
    done
done <<<"$dump"
# An experiment file for the commands that read one.
for c in run tune; do
    grep -qF -- "$c) COMPREPLY=(\$(compgen -f -X '!*.ini'" "$dir/kbench.bash" ||
        bad "the bash completion does not offer .ini files to $c"
done

if command -v man >/dev/null 2>&1; then
    warn=$(MANWIDTH=80 man --warnings -l "$dir/kbench.1" 2>&1 >/dev/null)
    [ -z "$warn" ] || bad "man warns about kbench.1: $warn"
else
    echo "man is not installed: the page's formatting is not checked" >&2
fi
if command -v zsh >/dev/null 2>&1; then
    zsh -n "$dir/_kbench" || bad "the zsh completion does not parse"
else
    echo "zsh is not installed: the zsh completion is checked only for its options" >&2
fi
[ $fail = 0 ] && echo "the man page and both completions hold all $n options"
exit $fail
