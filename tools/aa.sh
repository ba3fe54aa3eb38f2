#!/bin/sh
# aa.sh -- the A/A test of kbench compare: one INI file run twice, back to
# back, nothing changed, then the two runs compared.  Every row judged
# slower or faster is a false positive (docs/cli.md, "The A/A test").
#
#   tools/aa.sh KBENCH INI [OUT]   (OUT: a scratch folder, default ./aa-out)
#
# Prints compare's summary and "A/A: F false positives in R rows"; exits
# with compare's exit code (0 when no row is slower).
set -eu
if [ $# -lt 2 ]; then
    echo "usage: tools/aa.sh KBENCH INI [OUT]" >&2
    exit 2
fi
kbench=$1 ini=$2 out=${3:-aa-out}
"$kbench" run "$ini" -q -o "$out/a" --force >/dev/null || true
"$kbench" run "$ini" -q -o "$out/b" --force >/dev/null || true
rc=0
"$kbench" compare "$out/a/results.json" "$out/b/results.json" --format json >"$out/compare.json" || rc=$?
python3 - "$out/compare.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"]
rows = sum(s.values())
print("summary: %d slower, %d faster, %d noisy, %d no change, %d untested" %
      (s["slower"], s["faster"], s["noisy"], s["no_change"], s["untested"]))
print("A/A: %d false positives in %d rows" % (s["slower"] + s["faster"], rows))
PY
exit $rc
