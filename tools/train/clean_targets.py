#!/usr/bin/env python3
"""Keeps the synthetic pairs whose real (target) side is written like the task-1 references.

Multi30k task 2's German captions were written by crowd workers, not translators: 13 % start
lower-case, 16 % lack the final stop and many write nouns lower-case ("ein mädchen im rosa
kleid"). Trained on as targets, they teach en-de to write that way (val greedy BLEU fell
from 38.2 to 35.0 in the first 750 steps). A pair is kept when its target starts with a capital
letter, ends with '.', and writes every word that the real training targets spell one way
(>= 5 occurrences, >= 95 % in one casing; first words of lines not counted) that way.

  clean_targets.py REAL_TARGETS < pairs.tsv > kept.tsv     (pairs: source<TAB>target)
Standard library only; reports what it kept on stderr.
"""
import collections
import sys

PUNCT = '.,!?;:"()'


def words(line):
    for w in line.split()[1:]:
        w = w.strip(PUNCT)
        if w:
            yield w


def main():
    casing = collections.defaultdict(collections.Counter)
    with open(sys.argv[1], encoding="utf-8") as real:
        for line in real:
            for w in words(line):
                casing[w.lower()][w] += 1
    fixed = {}
    for key, forms in casing.items():
        form, n = forms.most_common(1)[0]
        occurrences = sum(forms.values())
        if occurrences >= 5 and n >= 0.95 * occurrences:
            fixed[key] = form
    kept = total = 0
    for line in sys.stdin:
        total += 1
        source, _, target = line.rstrip("\n").partition("\t")
        target = target.strip()
        if not target or not target[0].isupper() or not target.endswith("."):
            continue
        if any(fixed.get(w.lower(), w) != w for w in words(target)):
            continue
        kept += 1
        sys.stdout.write(source + "\t" + target + "\n")
    print(f"clean_targets: kept {kept} of {total} synthetic pairs", file=sys.stderr)


if __name__ == "__main__":
    main()
