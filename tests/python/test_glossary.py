"""The glossary measure (tools/glossary/measure.py) on the bundled translators: over the lines
of tests/data/glossary/ that hold a term, at least 90 % get the target term where the model's
own word stood and otherwise keep the plain translation; every line without a term is
translated exactly as without the glossary."""
import io
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools", "glossary"))

import measure  # noqa: E402


@pytest.mark.parametrize("model", ["en-de", "de-en"])
def test_nine_in_ten_lines_get_their_terms_in_place_and_the_others_stay_unchanged(model):
    data = os.path.join(ROOT, "tests", "data", "glossary", model)
    with open(data + ".lines", encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f if line.strip()]
    report = io.StringIO()
    shares = measure.measure(model, measure.read_terms(data + ".terms"), lines, ["placed"], examples=10, out=report)
    placed, unchanged = shares["placed"]
    assert placed >= 0.9, report.getvalue()
    assert unchanged == 1.0, report.getvalue()


def test_the_measure_fails_a_translation_that_keeps_the_models_word():
    found = [("bicycle", "Velo", ["Fahrrad"])]
    plain = "Ein Mann fährt auf einem Fahrrad die Straße entlang."
    assert measure.judge(plain, "Ein Mann fährt auf einem Velo die Straße entlang.", found) == (True, "")
    assert not measure.judge(plain, plain + " Velo.", found)[0]
    assert not measure.judge(plain, "Ein Velo.", found)[0]
    assert not measure.judge(plain, "Ein Mann fährt auf einem Velo die Straße entlang nach Hause zu seiner Frau.",
                             found)[0]
