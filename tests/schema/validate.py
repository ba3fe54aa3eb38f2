#!/usr/bin/env python3
"""Checks results.json documents against docs/results.schema.json.

Usage: validate.py SCHEMA PATH...  (a PATH that is a folder stands for every
*.json in it).  Prints one line per disagreement (file, where in the
document, what) and exits 1 when there is one, or when no document was
found at all; 77 (a skipped test) when Python's jsonschema is missing
(Debian: python3-jsonschema, which tools/setup.sh installs).
"""
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    print("schema: python3-jsonschema is not installed (tools/setup.sh installs it); "
          "the results files are not checked", file=sys.stderr)
    sys.exit(77)


def documents(paths):
    for p in paths:
        if os.path.isdir(p):
            for name in sorted(os.listdir(p)):
                if name.endswith(".json"):
                    yield os.path.join(p, name)
        else:
            yield p


def main():
    with open(sys.argv[1]) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    checked = bad = 0
    for path in documents(sys.argv[2:]):
        checked += 1
        try:
            with open(path) as f:
                doc = json.load(f)
        except ValueError as e:
            print(f"{path}: not JSON: {e}")
            bad += 1
            continue
        for e in sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path)):
            where = "/".join(str(x) for x in e.absolute_path) or "(the document)"
            print(f"{path}: at {where}: {e.message[:300]}")
            bad += 1
    if checked == 0:
        print("schema: no results.json was found to check", file=sys.stderr)
        return 1
    print(f"schema: {checked} results.json document(s) checked, {bad} disagreement(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
