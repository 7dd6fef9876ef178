#!/usr/bin/env python3
"""Writes the expected outputs of tests/text/moses_test.cpp: every line of an inputs file (a JSON
list of strings) normalized, tokenized and detokenized by sacremoses itself, for each language
ordo builds Moses rules for. No sacremoses code is kept in ordo; this script imports the
sacremoses release given on the command line:

    python3 tools/codegen/moses/make_test_data.py /path/to/sacremoses-0.1.1 \\
        tests/data/moses/inputs.json > tests/data/moses/sacremoses-0.1.1.json

(`/path/to/sacremoses-0.1.1`: a checkout of https://github.com/hplt-project/sacremoses at tag
0.1.1; Debian's python3 with python3-regex python3-joblib python3-click python3-tqdm.)
"""
import json
import sys

LANGUAGES = ["en", "de", "ru"]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.path.insert(0, sys.argv[1])
    import sacremoses
    from sacremoses import MosesDetokenizer, MosesPunctNormalizer, MosesTokenizer

    lines = json.load(open(sys.argv[2], encoding="utf-8"))
    cases = []
    for lang in LANGUAGES:
        norm, tok, detok = MosesPunctNormalizer(lang=lang), MosesTokenizer(lang=lang), MosesDetokenizer(lang=lang)
        for line in lines:
            tokens = tok.tokenize(line, aggressive_dash_splits=True, return_str=False, escape=True)
            unescaped = tok.tokenize(line, aggressive_dash_splits=True, return_str=False, escape=False)
            normalized = norm.normalize(line)
            pipeline = tok.tokenize(normalized, aggressive_dash_splits=True, return_str=False, escape=True)
            cases.append({
                "lang": lang,
                "input": line,
                # MosesPunctNormalizer(lang).normalize(input)
                "normalized": normalized,
                # MosesTokenizer(lang).tokenize(input, aggressive_dash_splits=True, escape=True)
                "tokens": tokens,
                # ... with the defaults: aggressive_dash_splits=False, escape=True
                "tokens_plain": tok.tokenize(line, return_str=False),
                # ... aggressive_dash_splits=True, escape=False
                "tokens_unescaped": unescaped,
                # MosesDetokenizer(lang).detokenize(tokens)
                "detokenized": detok.detokenize(tokens),
                # ... detokenize(tokens_unescaped, unescape=False)
                "detokenized_unescaped": detok.detokenize(unescaped, unescape=False),
                # tokenize(normalized, aggressive_dash_splits=True, escape=True), as FSMT does
                "pipeline_tokens": pipeline,
                "pipeline_detokenized": detok.detokenize(pipeline),
            })
    out = sys.stdout
    out.write('{"generator": "tools/codegen/moses/make_test_data.py", "sacremoses_version": %s, "cases": [\n'
              % json.dumps(sacremoses.__version__))
    out.write(",\n".join(json.dumps(c, ensure_ascii=False) for c in cases))
    out.write("\n]}\n")


if __name__ == "__main__":
    main()
