#!/usr/bin/env python3
"""check_shards.py ONE MERGED PART... -- checks a sharded kbench run.

ONE is the folder of a one-process `kbench run`, MERGED the folder that
`kbench merge` made of the PART folders (given in shard order: PART number i
must hold shard i of len(PART)).  Checks, and says which failed:

  - ONE holds rows, each key once, every status "pass" (so that an equality
    below compares real runs, not two lists of errors);
  - every PART holds rows, says in its plan that it is shard i of N, and no
    two PARTs share a key; together they hold exactly ONE's keys;
  - MERGED's results.json holds each key once, and the same (key, status)
    pairs as ONE; its results.csv the same keys; its results.md is there.

Exit 0 when all hold, 1 otherwise.  Standard library only.
"""
import csv
import json
import os
import sys


def load(folder):
    path = os.path.join(folder, "results.json")
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit("check: FAILED: cannot read %s: %s" % (path, e))
    rows = doc.get("results")
    if not isinstance(rows, list):
        raise SystemExit("check: FAILED: %s has no list \"results\"" % path)
    return doc, rows


def keys_once(rows, where, problems):
    """The rows as {key: status}; a key seen twice or missing is a problem."""
    seen = {}
    for n, r in enumerate(rows):
        key = r.get("key")
        if not isinstance(key, str) or not key:
            problems.append("%s: row %d has no key" % (where, n))
            continue
        if key in seen:
            problems.append("%s: key %s appears more than once" % (where, key))
        seen[key] = r.get("status")
    return seen


def csv_keys(folder, problems):
    path = os.path.join(folder, "results.csv")
    try:
        with open(path, newline="") as f:
            return [row.get("key") for row in csv.DictReader(f)]
    except OSError as e:
        problems.append("cannot read %s: %s" % (path, e))
        return []


def main(argv):
    if len(argv) < 4:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    one_dir, merged_dir, parts = argv[1], argv[2], argv[3:]
    problems = []

    _, one_rows = load(one_dir)
    one = keys_once(one_rows, one_dir, problems)
    if not one:
        problems.append("%s: the one-process run has no rows" % one_dir)
    not_pass = sorted(k for k, s in one.items() if s != "pass")
    if not_pass:
        problems.append("%s: %d rows did not pass, e.g. %s is %s"
                        % (one_dir, len(not_pass), not_pass[0], one[not_pass[0]]))

    # The parts: shard i of N each, disjoint, together the whole plan.
    owner = {}
    for i, part in enumerate(parts):
        doc, rows = load(part)
        got = keys_once(rows, part, problems)
        if not got:
            problems.append("%s: shard %d ran no rows" % (part, i))
        shard = (doc.get("plan") or {}).get("shard")
        want = {"index": i, "count": len(parts)}
        if not isinstance(shard, dict) or {k: shard.get(k) for k in want} != want:
            problems.append("%s: its plan says shard %s, expected index %d of count %d"
                            % (part, json.dumps(shard), i, len(parts)))
        for key in got:
            if key in owner:
                problems.append("key %s is in both %s and %s" % (key, owner[key], part))
            owner[key] = part
    if set(owner) != set(one):
        lost = sorted(set(one) - set(owner))
        extra = sorted(set(owner) - set(one))
        problems.append("the shards together hold %d keys, the one-process run %d "
                        "(%d missing from the shards%s, %d only in the shards%s)"
                        % (len(owner), len(one), len(lost), ", e.g. " + lost[0] if lost else "",
                           len(extra), ", e.g. " + extra[0] if extra else ""))

    # The merged folder against the one-process run.
    _, merged_rows = load(merged_dir)
    merged = keys_once(merged_rows, merged_dir, problems)
    for key in sorted(set(one) - set(merged)):
        problems.append("%s: key %s is missing (the one-process run has it)" % (merged_dir, key))
    for key in sorted(set(merged) - set(one)):
        problems.append("%s: key %s is not in the one-process run" % (merged_dir, key))
    for key in sorted(set(one) & set(merged)):
        if one[key] != merged[key]:
            problems.append("%s: key %s has status %s, the one-process run %s"
                            % (merged_dir, key, merged[key], one[key]))
    merged_csv = csv_keys(merged_dir, problems)
    if sorted(merged_csv) != sorted(merged):
        problems.append("%s: results.csv holds %d keys, results.json %d (or other keys)"
                        % (merged_dir, len(merged_csv), len(merged)))
    md = os.path.join(merged_dir, "results.md")
    if not os.path.isfile(md) or os.path.getsize(md) == 0:
        problems.append("%s is missing or empty" % md)

    for p in problems:
        print("check: FAILED: " + p, file=sys.stderr)
    if problems:
        return 1
    sizes = " + ".join(str(sum(1 for k in owner if owner[k] == p)) for p in parts)
    print("check: %d rows in %d shards (%s), each key once; merged = one-process run"
          % (len(one), len(parts), sizes))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
