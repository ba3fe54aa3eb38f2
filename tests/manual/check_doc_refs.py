#!/usr/bin/env python3
"""The references between kbench's documents name sections, not numbers, and
each one leads somewhere.

    check_doc_refs.py ROOT

Reads README.md and docs/*.md under ROOT and fails (exit 1, one line per
problem) on:
  - a heading that starts with a number ("## 9. Building", "### 9.1 ..."):
    its anchor would change whenever a section is added before it;
  - a reference by number ("section 9.1", "§9.2");
  - a link to an anchor, in the same file ("](#name)") or another one
    ("](plugins.md#name)"), that no heading of that file makes (GitHub's
    rule: lower case, punctuation dropped, spaces to '-', "-1" ... for
    repeats);
  - a reference by name, `docs/NAME.md, "Heading"`, whose heading that
    file does not have (the quoted words begin a heading of it, or a
    paragraph's bold title: "**Stopping on noise.** With ...").
"""
import os
import re
import sys

root = sys.argv[1]
files = [os.path.join(root, "README.md")] + sorted(
    os.path.join(root, "docs", f) for f in os.listdir(os.path.join(root, "docs"))
    if f.endswith(".md"))


def headings(text):
    """The headings of a markdown text, outside fenced code."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            out.append(line.lstrip("#").strip())
    return out


def titles(text):
    """The bold titles that begin paragraphs: named places without anchors."""
    return [m.group(1).rstrip(".") for m in re.finditer(r"^\*\*([^*]+)\*\*", text, re.M)]


def anchors(heads):
    seen, out = {}, set()
    for h in heads:
        a = re.sub(r"[^\w\- ]", "", h.lower().replace("`", "")).replace(" ", "-")
        n = seen.get(a, 0)
        seen[a] = n + 1
        out.add(a if n == 0 else "%s-%d" % (a, n))
    return out


texts = {os.path.basename(f): open(f, encoding="utf-8").read() for f in files}
heads = {name: headings(t) for name, t in texts.items()}
anchor = {name: anchors(h) for name, h in heads.items()}
bad = []
for name, text in texts.items():
    for h in heads[name]:
        if re.match(r"\d", h):
            bad.append("%s: the heading '%s' starts with a number" % (name, h))
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    for m in re.finditer(r"\b[Ss]ection \d+(\.\d+)*|§ ?\d", prose):
        bad.append("%s: '%s' refers to a section by its number" % (name, m.group(0)))
    for m in re.finditer(r"\]\(([\w.-]*\.md)?#([^)]+)\)", prose):
        target = os.path.basename(m.group(1)) if m.group(1) else name
        if target not in anchor:
            bad.append("%s: link to %s#%s, a file that is not checked" % (name, target,
                                                                           m.group(2)))
        elif m.group(2) not in anchor[target]:
            bad.append("%s: link to %s#%s, which no heading makes" % (name, target, m.group(2)))
    for m in re.finditer(r"docs/([\w-]+\.md),\s+\"([^\"]+)\"", prose):
        target, words = m.group(1), m.group(2).replace("\n", " ")
        words = re.sub(r"\s+", " ", words)
        if target not in heads:
            bad.append("%s: reference to %s, which is not in docs/" % (name, target))
        elif not any(h.lower().startswith(words.lower())
                     for h in heads[target] + titles(texts[target])):
            bad.append("%s: reference to %s, \"%s\", which is no heading of it" % (name, target,
                                                                                  words))
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
