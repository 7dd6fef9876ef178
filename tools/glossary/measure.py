#!/usr/bin/env python3
"""The glossary measure: do a glossary's terms land where the model's own words for them stand?

Over the lines that hold a source term, the share whose output with the glossary
  - holds each target term,
  - no longer holds the model's own word for it (the forms listed in the terms file), and
  - otherwise keeps the plain translation: length within 0.75-1.33x of the plain output, and a
    character similarity of at least 0.8 (difflib's ratio) to the plain output with its own
    words swapped for the terms;
and over the lines without a term, the share whose output equals the plain one.

A terms file has one "source term<TAB>target term<TAB>own forms" per line, the own forms (the
words the model writes for the source term without the glossary) separated by '|'. A lines file
has one source sentence per line. Methods compared (docs/glossary.md):
  placed    ordo's glossary: the translation edited where the term's words stand
  redecode  the same edit, then the rest of the sentence decoded again after the term
            (a target prefix up to the last term)
  force     transformers' constrained beam search (force_words: the targets as phrases)

  python3 tools/glossary/measure.py --model en-de --terms tests/data/glossary/en-de.terms \\
      --lines tests/data/glossary/en-de.lines [--method placed|redecode|force|all] [--examples 5]

--latency instead times the lines with a term one at a time (batch 1, one thread), without and
with the glossary, interleaved, the median of three rounds.

Needs the `ordo` Python package (build/python on PYTHONPATH).
"""
import argparse
import difflib
import re
import sys
import time


def read_terms(path):
    terms = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            fields = line.split("\t")
            if len(fields) != 3 or not all(fields):
                sys.exit(f"{path}:{number}: expected 'source term<TAB>target term<TAB>own|forms'")
            terms.append((fields[0], fields[1], fields[2].split("|")))
    return terms


def word_pattern(word):
    return re.compile(r"(?<!\w)" + re.escape(word) + r"(?!\w)", re.IGNORECASE)


def terms_in(line, terms):
    return [t for t in terms if word_pattern(t[0]).search(line)]


def judge(plain, output, found):
    """Whether `output` puts the `found` terms in place of their own words in `plain`, and why not."""
    expected = plain
    for _, target, forms in found:
        if not word_pattern(target).search(output):
            return False, f"no '{target}'"
        for form in forms:
            if word_pattern(form).search(output):
                return False, f"still '{form}'"
            expected = word_pattern(form).sub(target, expected)
    ratio = len(output) / max(1, len(plain))
    if not 0.75 <= ratio <= 1.33:
        return False, f"length {ratio:.2f}x"
    similarity = difflib.SequenceMatcher(None, output, expected).ratio()
    if similarity < 0.8:
        return False, f"similarity {similarity:.2f}"
    return True, ""


def redecode(translator, lines, placed, terms):
    """The placed outputs cut after their last term, each continued by the model."""
    prefixes = []
    for line, out in zip(lines, placed):
        end = 0
        for _, target, _ in terms_in(line, terms):
            for m in word_pattern(target).finditer(out):
                end = max(end, m.end())
        prefixes.append(out[:end] if end else None)
    results = translator.translate_batch(lines, target_prefix=prefixes)
    return [r.hypotheses[0].text for r in results]


def measure(model, terms, lines, methods, examples=0, out=sys.stdout, translator=None):
    import ordo

    translator = translator or ordo.Translator(model)
    glossary = {source: target for source, target, _ in terms}
    with_terms = [line for line in lines if terms_in(line, terms)]
    without = [line for line in lines if not terms_in(line, terms)]
    start = time.perf_counter()
    plain = [r.hypotheses[0].text for r in translator.translate_batch(with_terms)]
    plain_seconds = time.perf_counter() - start
    plain_without = [r.hypotheses[0].text for r in translator.translate_batch(without)]
    shares = {}
    for method in methods:
        start = time.perf_counter()
        if method in ("placed", "redecode"):
            results = translator.translate_batch(with_terms, glossary=glossary)
            outputs = [r.hypotheses[0].text for r in results]
            if method == "redecode":
                outputs = redecode(translator, with_terms, outputs, terms)
        elif method == "force":
            outputs = []
            for line in with_terms:
                phrases = "|".join(target for _, target, _ in terms_in(line, terms))
                outputs.append(translator.translate_batch([line], force_words=phrases)[0].hypotheses[0].text)
        else:
            raise ValueError(f"unknown method '{method}'")
        seconds = time.perf_counter() - start
        verdicts = [judge(p, o, terms_in(line, terms)) for line, p, o in zip(with_terms, plain, outputs)]
        good = sum(ok for ok, _ in verdicts)
        unchanged = sum(
            a == b
            for a, b in zip(
                plain_without,
                [r.hypotheses[0].text for r in translator.translate_batch(without, glossary=glossary)],
            )
        )
        shares[method] = (good / max(1, len(with_terms)), unchanged / max(1, len(without)))
        print(
            f"{model} {method}: {good}/{len(with_terms)} lines with a term in place "
            f"({100 * good / max(1, len(with_terms)):.1f} %), {unchanged}/{len(without)} lines without a term "
            f"unchanged; {seconds / max(plain_seconds, 1e-9):.2f}x the plain translation's time",
            file=out,
        )
        shown = 0
        for line, p, o, (ok, why) in zip(with_terms, plain, outputs, verdicts):
            if shown >= examples:
                break
            if not ok or shown < examples // 2:
                print(f"  {'ok  ' if ok else 'FAIL'} {line}\n       plain: {p}\n       {method}: {o}" +
                      (f"\n       ({why})" if why else ""), file=out)
                shown += 1
    return shares


def latency(model, terms, lines, rounds=3, out=sys.stdout):
    import statistics

    import ordo

    translator = ordo.Translator(model, threads=1)
    glossary = {source: target for source, target, _ in terms}
    with_terms = [line for line in lines if terms_in(line, terms)]
    times = {"plain": [], "glossary": []}
    for _ in range(rounds):
        for kind in times:
            start = time.perf_counter()
            for line in with_terms:
                translator.translate_batch([line], glossary=glossary if kind == "glossary" else None)
            times[kind].append((time.perf_counter() - start) / max(1, len(with_terms)) * 1000)
    plain, placed = statistics.median(times["plain"]), statistics.median(times["glossary"])
    print(f"{model}: {len(with_terms)} lines one at a time, 1 thread: {plain:.1f} ms a line without the glossary, "
          f"{placed:.1f} ms with it ({placed / plain:.2f}x)", file=out)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True)
    parser.add_argument("--terms", required=True)
    parser.add_argument("--lines", required=True)
    parser.add_argument("--method", default="all", choices=["placed", "redecode", "force", "all"])
    parser.add_argument("--examples", type=int, default=0)
    parser.add_argument("--latency", action="store_true", help="time lines one at a time instead")
    args = parser.parse_args()
    with open(args.lines, encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f if line.strip()]
    if args.latency:
        latency(args.model, read_terms(args.terms), lines)
        return
    methods = ["placed", "redecode", "force"] if args.method == "all" else [args.method]
    measure(args.model, read_terms(args.terms), lines, methods, args.examples)


if __name__ == "__main__":
    main()
