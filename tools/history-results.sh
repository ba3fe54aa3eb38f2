#!/bin/sh
# Imports every kbench results file kept under results (results.json,
# and the *.json / *.json.gz copies the GPU runs saved under other names)
# into a fresh history, then lists the series and runs the step detector:
# what docs/history.md ("What it finds in results") reports.
#   tools/history-results.sh [BUILD]      (BUILD: default build/)
# Run from anywhere; git in this checkout dates the kbench revisions the
# files were made with.  The history and the copies go to a temporary
# folder that is removed at the end.
set -eu
cd "$(dirname "$0")/.."
kbench=${1:-build}/kbench
[ -x "$kbench" ] || { echo "history-results: $kbench is not built" >&2; exit 2; }
work=$(mktemp -d /tmp/kbench-docs-history-XXXXXX)
trap 'rm -rf "$work"' EXIT
export KBENCH_HISTORY="$work/history.db"

n=0
for f in $(find results -name '*.json' -o -name '*.json.gz' | sort); do
    case $(basename "$f") in
        *.json.gz) head=$(gzip -dc "$f" | head -c 4096) ;;
        *) head=$(head -c 4096 "$f") ;;
    esac
    # Only kbench results files: they open with the "kbench" object.
    case $head in *'"kbench"'*'"results"'*|*'"kbench"'*) ;; *) continue ;; esac
    dir="$work/runs/$(echo "$f" | sed 's|^results/||; s|\.json\.gz$||; s|\.json$||; s|/|__|g')"
    mkdir -p "$dir"
    case $f in
        *.gz) gzip -dc "$f" > "$dir/results.json" ;;
        *) cp "$f" "$dir/results.json" ;;
    esac
    n=$((n + 1))
done
echo "== $n results files"
"$kbench" history add "$work"/runs/* >/dev/null
"$kbench" history runs
echo "== series by their number of points"
"$kbench" history list --csv | awk -F, 'NR > 1 { print $NF }' | sort -n | uniq -c |
    awk '{ printf "%6d series with %d point(s)\n", $1, $2 }'
echo "== regressions (default threshold)"
set +e
"$kbench" history regressions
code=$?
echo "== exit code $code"
