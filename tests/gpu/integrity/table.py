#!/usr/bin/env python3
"""The tables of tests/gpu/integrity.sh, from the results.json files it wrote.

  table.py cheats RESULTS.json      each cheat of gpucheats caught with the reason
                                    expected, each honest row passed; exit 1 if not
  table.py residue RESULTS.json     the same rows before and after an audited
                                    experiment in one worker: the ratio of medians
  table.py flags RESULTS.json...    rows flagged by the integrity checks (there
                                    should be none: our families do not cheat),
                                    and what the partial audits said; exit 1 on a flag
  table.py cost OFF.json STRICT.json OFF_S STRICT_S
                                    the added seconds per point of the checks
"""
import json
import sys

# What each variant of gpucheats must be flagged with: any of these words in
# its reason.  None: an honest variant, which must pass with nothing flagged.
EXPECT = {
    "honest": None,
    "honest2": None,
    "honest3": None,
    "side": ["ran on a stream kbench does not time (stream"],
    "legacy": ["legacy default stream"],
    "hostthread": ["after run() returned, outside the timing", "left 1 thread running"],
    "memo": ["the timed runs did not do all the work"],
    "half": ["the timed runs did not do all the work"],
    "l2window": ["access-policy window"],
    "empty": ["the timed runs did not do all the work", "captured no work",
              "no work on the GPU"],
    "sometimes": ["a run alone, after the timed runs, is wrong", "under a third"],
    "download": ["download() launched"],
}
# With include_copies, download() is timed: its kernel is inside the
# timing, so the variant is honest there.
HONEST_WITH_COPIES = {"download"}


def rows(path):
    with open(path) as f:
        return json.load(f)["results"]


def short(text, n=110):
    text = (text or "").replace("\n", " ")
    return text if len(text) <= n else text[: n - 3] + "..."


def cheats(path):
    bad = 0
    print("%-8s %-11s %-7s %-6s %s" % ("exp", "variant", "status", "caught", "reason"))
    for r in rows(path):
        want = EXPECT.get(r["variant"], None)
        if r["experiment"] == "copies" and r["variant"] in HONEST_WITH_COPIES:
            want = None
        reason = r.get("reason") or ""
        integ = r.get("integrity") or ""
        if want is None:
            ok = r["status"] == "pass" and not integ.startswith("flagged")
            caught = "honest" if ok else "FLAGGED"
        else:
            ok = r["status"] == "FAIL" and any(w in reason for w in want)
            caught = "yes" if ok else "MISSED"
        bad += not ok
        print("%-8s %-11s %-7s %-6s %s" % (r["experiment"], r["variant"], r["status"], caught,
                                           short(reason if reason else integ)))
        if integ.startswith("partial") or "partial:" in integ:
            print("%27s %s" % ("", short(integ[integ.find("partial"):])))
    print("cheats: %d of %d rows as expected" % (len(rows(path)) - bad, len(rows(path))))
    return 1 if bad else 0


def residue(path):
    by = {}
    for r in rows(path):
        if r["status"] != "pass":
            continue
        n = r["params"].get("n")
        by.setdefault((r["variant"], n), {})[r["experiment"]] = r["time_s"]["median"]
    worst = drift = 0.0
    for (v, n), m in sorted(by.items(), key=lambda x: (x[0][0], x[0][1])):
        if "before" in m and "after" in m and m["before"]:
            ratio = m["after"] / m["before"]
            again = m.get("again", m["before"]) / m["before"]
            worst = max(worst, abs(ratio - 1))
            drift = max(drift, abs(again - 1))
            print("residue %-8s n=%-10s before %.4g us, again %.4g us, audited %.4g us, after "
                  "%.4g us: again/before %.4f, after/before %.4f"
                  % (v, n, m["before"] * 1e6, m.get("again", 0) * 1e6,
                     m.get("audited", 0) * 1e6, m["after"] * 1e6, again, ratio))
    print("residue: the largest change after an audit is %.2f%%; between two experiments "
          "with no audit, %.2f%%" % (worst * 100, drift * 100))
    return 0


def flags(paths):
    flagged = 0
    total = 0
    partial = {}
    for p in paths:
        try:
            rs = rows(p)
        except (OSError, ValueError) as e:
            print("flags: %s: %s" % (p, e))
            continue
        statuses = {}
        for r in rs:
            total += 1
            statuses[r["status"]] = statuses.get(r["status"], 0) + 1
            integ = r.get("integrity") or ""
            if integ.startswith("flagged"):
                flagged += 1
                print("FLAGGED %s: %s" % (r["key"], short(r.get("reason") or integ, 300)))
            i = integ.find("partial: ")
            if i >= 0:
                why = integ[i + 9:][:120]
                partial[why] = partial.get(why, 0) + 1
        print("flags: %s: %d rows, %s" % (p, len(rs), ", ".join(
            "%d %s" % (n, s) for s, n in sorted(statuses.items()))))
    for why, n in sorted(partial.items(), key=lambda x: -x[1]):
        print("partial x%d: %s" % (n, why))
    print("flags: %d flagged rows of %d" % (flagged, total))
    return 1 if flagged else 0


def cost(off_path, strict_path, off_s, strict_s):
    # Per point reached: a run stopped at its time limit reached fewer.
    def points(path):
        return len({(r["experiment"], r["point"]) for r in rows(path)})
    p_off, p_strict = points(off_path), points(strict_path)
    if not p_off or not p_strict:
        print("cost: no points to compare")
        return 0
    a, b = float(off_s) / p_off, float(strict_s) / p_strict
    print("cost: %d points in %.0f s with integrity = off (%.2f s a point), %d in %.0f s with "
          "strict (%.2f s a point): %.2f s added a point"
          % (p_off, float(off_s), a, p_strict, float(strict_s), b, b - a))
    return 0


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    what = argv[1]
    if what == "cheats":
        return cheats(argv[2])
    if what == "residue":
        return residue(argv[2])
    if what == "flags":
        return flags(argv[2:])
    if what == "cost" and len(argv) == 6:
        return cost(*argv[2:6])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
