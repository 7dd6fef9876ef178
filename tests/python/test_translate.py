"""ordo.Translator against the command line (the real build/ordo binary): translate_batch and
summarize_batch give the CLI's texts, tokens and scores on the bundled models and the Hugging
Face fixtures; every decoding option of the table reaches the engine (one test per option,
the same setting as a flag of the CLI); errors raise ordo.Error with the CLI's message."""
import atexit
import os
import re
import shutil
import tempfile

import pytest

import ordo
from cli_reference import HF, SOURCE_DIR, assert_same, run_all, run_cli, run_cli_error

EN = ["A man is riding a bicycle down the street.", "Two young girls are playing in the sand near the water.",
      "", "A dog runs."]
DE = ["Ein Mann fährt mit dem Fahrrad die Straße entlang.", "Eine Frau spielt Gitarre."]
DIALOGUE = ["#Person1#: Hi, are you free tonight? #Person2#: Yes, why? #Person1#: Let's see a movie. "
            "#Person2#: Great, at eight?"]
SHORT = ["The house is small.", "The cat sat on the mat and looked at the birds."]

_translators = {}


def translator(model):
    if model not in _translators:
        _translators[model] = ordo.Translator(model)
    return _translators[model]


def hf(name):
    return os.path.join(HF, name)


# ---------------------------------------------------------------- the CLI's outputs
# (command, model, inputs, python keywords, cli flags): translate_batch / summarize_batch with
# the keywords against `ordo <command>` with the flags.
PARITY = {
    "bundled-en-de": ("translate", "en-de", EN, {}, []),
    "bundled-de-en-greedy": ("translate", "de-en", DE, {"beam_size": 1}, ["-b", "1"]),
    "bundled-dialogsum": ("summarize", "dialogsum", DIALOGUE, {}, []),
    "marian_opus_en_mg": ("translate", hf("marian_opus_en_mg"), SHORT, {"max_new_tokens": 8}, ["--max-length", "8"]),
    "m2m100": ("translate", hf("m2m100"), SHORT, {"target_lang": "de", "max_new_tokens": 8},
               ["--target-lang", "de", "--max-length", "8"]),
    "nllb": ("translate", hf("nllb"), SHORT, {"target_lang": "deu_Latn", "max_new_tokens": 8},
             ["--target-lang", "deu_Latn", "--max-length", "8"]),
    "mbart50": ("translate", hf("mbart50"), SHORT, {"source_lang": "en_XX", "target_lang": "de_DE", "max_new_tokens": 8},
                ["--source-lang", "en_XX", "--target-lang", "de_DE", "--max-length", "8"]),
    "fsmt": ("translate", hf("fsmt"), SHORT, {"max_new_tokens": 8}, ["--max-length", "8"]),
    "pegasus": ("summarize", hf("pegasus"), SHORT, {"max_new_tokens": 8}, ["--max-length", "8"]),
    "bart": ("summarize", hf("bart"), SHORT, {}, []),
    "t5": ("summarize", hf("t5"), SHORT, {"max_new_tokens": 8}, ["--max-length", "8"]),
    "t5_v1": ("summarize", hf("t5_v1"), SHORT, {"max_new_tokens": 8}, ["--max-length", "8"]),
}


def vmap_model():
    """The bundled en-de in a scratch folder (its files linked) with a vmap.txt whose only line
    lists the targets every batch gets: a shortlist small enough to change the output."""
    folder = tempfile.mkdtemp(prefix="ordo-py-vmap-")
    atexit.register(shutil.rmtree, folder, True)
    source = os.path.join(SOURCE_DIR, "models", "en-de")
    for name in os.listdir(source):
        os.symlink(os.path.join(source, name), os.path.join(folder, name))
    with open(os.path.join(folder, "vmap.txt"), "w", encoding="utf-8") as f:
        f.write("\t\u2581Ein \u2581Mann \u2581fährt \u2581auf \u2581eine m \u2581Fahrrad .\n")
    return folder


VMAP_MODEL = vmap_model()

# ---------------------------------------------------------------- one case per option
# Each entry of the table of decoding options (ordo.decode_options()) needs a case here: the
# keywords to give translate_batch (the option, and what it needs beside it) and the model. The
# CLI gets the same settings through the table's flags; a new option without a case fails
# test_every_option_has_a_case.
SAMPLING = {"sample": True, "seed": 1, "temperature": 3.0}
OPTION_CASES = {
    "beam_size": ("en-de", {"beam_size": 1}),
    "n_best": ("en-de", {"n_best": 3}),
    "max_new_tokens": ("en-de", {"max_new_tokens": 4}),
    "max_length": ("en-de", {"max_length": 5}),
    "min_length": ("en-de", {"min_length": 18}),
    "min_new_tokens": ("en-de", {"min_new_tokens": 17}),
    "length_penalty": ("en-de", {"length_penalty": -3.0}),
    "early_stopping": ("en-de", {"early_stopping": True, "n_best": 4, "length_penalty": 2.0}),
    "no_repeat_ngram_size": ("en-de", {"no_repeat_ngram_size": 1, "min_new_tokens": 24}),
    "repetition_penalty": ("en-de", {"repetition_penalty": 5.0, "min_new_tokens": 24}),
    "sample": ("en-de", {"sample": True, "seed": 1}),
    "temperature": ("en-de", dict(SAMPLING)),
    "top_k": ("en-de", dict(SAMPLING, top_k=2)),
    "top_p": ("en-de", dict(SAMPLING, top_p=0.3)),
    "seed": ("en-de", dict(SAMPLING, seed=12345)),
    "force_words": ("en-de", {"force_words": "Rad"}),
    "source_lang": (hf("m2m100"), {"source_lang": "fr", "target_lang": "de", "max_new_tokens": 6}),
    "target_lang": (hf("m2m100"), {"target_lang": "fr", "max_new_tokens": 6}),
    "task": (hf("t5_v1"), {"task": "translation_en_to_de", "max_new_tokens": 6}),
    "target_prefix": ("en-de", {"target_prefix": "Ein Mann"}),
    "return_alternatives": ("en-de", {"return_alternatives": True, "n_best": 3}),
    "use_vmap": (VMAP_MODEL, {"use_vmap": True}),
    "global_attention": (hf("led"), {"global_attention": "0,2-4", "max_new_tokens": 6}),
}
# Options without a flag of their own: the CLI flag that says the same.
FLAGLESS = {
    "max_length": lambda v: ["--max-length", str(v - 1)],  # HF max_length counts the start token
    "min_length": lambda v: ["--min-length", str(v - 1)],
    "target_prefix": None,  # --target-prefix-file, written by the test
}
SPECS = {spec["name"]: spec for spec in ordo.decode_options()}


def cli_flags(kwargs, tmp_dir, count):
    flags = []
    for name, value in kwargs.items():
        spec = SPECS[name]
        if name == "target_prefix":
            path = os.path.join(tmp_dir, "prefixes.txt")
            with open(path, "w", encoding="utf-8") as f:
                f.write((value + "\n") * count)
            flags += ["--target-prefix-file", path]
        elif not spec["flag"]:
            flags += FLAGLESS[name](value)
        else:
            text = ("true" if value else "false") if spec["type"] == "bool" else str(value)
            flags += [spec["flag"].split(",")[-1], text]
    return flags


@pytest.fixture(scope="module")
def cli(tmp_path_factory):
    """Every CLI reference of this file, run at once (each start of `ordo` loads LibTorch)."""
    tmp = str(tmp_path_factory.mktemp("cli"))
    calls = {("parity", key): (command, model, inputs, flags)
             for key, (command, model, inputs, _, flags) in PARITY.items()}
    for name, (model, kwargs) in OPTION_CASES.items():
        inputs = SHORT if model.startswith(HF) else EN
        calls[("option", name)] = ("translate", model, inputs, cli_flags(kwargs, tmp, len(inputs)))
    return run_all(calls)


@pytest.mark.parametrize("key", sorted(PARITY))
def test_same_as_the_cli(cli, key):
    command, model, inputs, kwargs, _ = PARITY[key]
    t = translator(model)
    call = t.summarize_batch if command == "summarize" else t.translate_batch
    assert_same(call(inputs, **kwargs), cli[("parity", key)], key)


def test_every_option_has_a_case():
    assert sorted(SPECS) == sorted(OPTION_CASES), "each entry of ordo.decode_options() needs a case in OPTION_CASES"


@pytest.mark.parametrize("name", sorted(SPECS))
def test_option_reaches_the_engine(cli, name):
    if name not in OPTION_CASES:
        pytest.fail("option %s of ordo.decode_options() has no case in OPTION_CASES (tests/python/test_translate.py)" % name)
    model, kwargs = OPTION_CASES[name]
    inputs = SHORT if model.startswith(HF) else EN
    t = translator(model)
    results = t.translate_batch(inputs, **kwargs)
    assert_same(results, cli[("option", name)], name)
    # ... and it changes something: the same call without it differs.
    without = {k: v for k, v in kwargs.items() if k != name}
    plain = t.translate_batch(inputs, **without)
    assert [[(h.text, h.score) for h in r.hypotheses] for r in results] != \
        [[(h.text, h.score) for h in r.hypotheses] for r in plain], name + " changed nothing"


def test_per_input_target_prefixes_as_ctranslate2():
    t = translator("en-de")
    prefixes = ["Ein Mann", None, "", "Ein Hund"]
    results = t.translate_batch(EN, target_prefix=prefixes, beam_size=1)
    for source, prefix, result in zip(EN, prefixes, results):
        alone = t.translate_batch([source], target_prefix=prefix or None, beam_size=1)[0]
        assert result.hypotheses[0].text == alone.hypotheses[0].text
    assert results[0].hypotheses[0].text.startswith("Ein Mann")
    assert results[3].hypotheses[0].text.startswith("Ein Hund")


def test_translate_and_summarize_give_the_best_text(cli):
    t = translator("en-de")
    assert t.translate(EN[0]) == cli[("parity", "bundled-en-de")][0]["text"]
    assert translator("dialogsum").summarize(DIALOGUE[0]) == cli[("parity", "bundled-dialogsum")][0]["text"]


def test_bundled_names_and_languages():
    t = translator("en-de")
    assert os.path.samefile(t.model_path, os.path.join(SOURCE_DIR, "models", "en-de"))
    assert t.languages == []
    assert "de" in translator(hf("m2m100")).languages
    assert translator(hf("t5_v1")).tasks == ["summarization", "translation_en_to_de"]


def test_greedy_without_scores_gives_the_same_tokens_with_score_zero():
    t = translator("en-de")
    want = t.translate_batch(EN, beam_size=1)
    got = t.translate_batch(EN, beam_size=1, return_scores=False, batch_size=1)
    assert [r.hypotheses[0].ids for r in got] == [r.hypotheses[0].ids for r in want]
    assert all(r.hypotheses[0].score == 0 for r in got)
    assert any(r.hypotheses[0].score != 0 for r in want)


def test_attention_and_source_tokens():
    t = translator("en-de")
    result = t.translate_batch(EN[:1], return_attention=True)[0]
    h = result.hypotheses[0]
    assert result.source_tokens[-1] == "</s>" and "▁man" in result.source_tokens
    assert len(h.attention) == len(h.ids)
    assert all(len(row) == len(result.source_tokens) for row in h.attention)
    assert all(abs(sum(row) - 1) < 1e-3 for row in h.attention)
    assert t.translate_batch(EN[:1])[0].hypotheses[0].attention is None


def test_presets_and_batching_do_not_change_results(cli):
    t = translator("en-de")
    reference = cli[("parity", "bundled-en-de")]
    assert_same(t.translate_batch(EN, batch_size=1), reference, "batch_size=1")
    assert_same(t.translate_batch(EN, batch_tokens=8), reference, "batch_tokens=8")
    assert_same(t.translate_batch(EN, preset="translation"), reference, "preset=translation")
    # The summarization preset sets no_repeat_ngram_size 3 and min_new_tokens 5 below the model's.
    summarizing = t.translate_batch(["A dog runs."], preset="summarization")[0].hypotheses[0]
    assert len(summarizing.tokens) >= 5


# ---------------------------------------------------------------- errors


def test_errors_raise_ordo_error_with_the_cli_message(tmp_path):
    assert issubclass(ordo.Error, Exception)
    missing = str(tmp_path / "no-such-folder")
    with pytest.raises(ordo.Error) as error:
        ordo.Translator(missing)
    assert str(error.value) == run_cli_error("translate", missing, ["x"])

    with pytest.raises(ordo.Error) as error:
        ordo.Translator("no-such-bundled-model")
    assert "'no-such-bundled-model' is not a folder, and a bundled model of that name was not found" in str(error.value)

    t = translator("en-de")
    # The CLI names the input line of an error that concerns inputs ("stdin line 1: ...").
    with pytest.raises(ordo.Error) as error:
        t.translate_batch(EN, beam_size=2, n_best=3)
    assert run_cli_error("translate", "en-de", EN, ["-b", "2", "-n", "3"]).endswith(str(error.value))
    with pytest.raises(ordo.Error) as error:
        t.translate_batch(EN, beam_size=1, force_words="Rad")
    # An option wrong for every input fails the CLI once, before any line: no line named.
    assert run_cli_error("translate", "en-de", EN, ["-b", "1", "--force-words", "Rad"]) == str(error.value)
    with pytest.raises(ordo.Error) as error:
        translator(hf("m2m100")).translate_batch(SHORT, target_lang="xx")
    assert run_cli_error("translate", hf("m2m100"), SHORT, ["--target-lang", "xx"]).endswith(str(error.value))

    with pytest.raises(ordo.Error, match="beam_size must be an integer from 1 to 1024"):
        t.translate_batch(EN, beam_size=0)
    with pytest.raises(ordo.Error, match="CPU only"):
        ordo.Translator("en-de", device="cuda")
    with pytest.raises(ordo.Error, match="compute_type must be one of float32, bfloat16, int8"):
        ordo.Translator("en-de", compute_type="float8")
    with pytest.raises(ordo.Error, match="preset 'no-such-preset.json' was not found"):
        t.translate_batch(EN, preset="no-such-preset")
    with pytest.raises(TypeError, match="unexpected keyword argument 'beam'"):
        t.translate_batch(EN, beam=2)
    with pytest.raises(TypeError, match="beam_size must be an int"):
        t.translate_batch(EN, beam_size="2")
    with pytest.raises(TypeError, match="list of str"):
        t.translate_batch("A single string.")
    with pytest.raises(UnicodeEncodeError):
        t.translate_batch(["a lone surrogate \udc80"])
    with pytest.raises(ordo.Error, match="target_prefix has 2 entries for 1 inputs"):
        t.translate_batch(["A dog runs."], target_prefix=["Ein", "Zwei"])


# Every argument a caller gives, of a wrong type: the call (given the en-de translator) and the
# argument's name. Each raises TypeError naming the argument, never pybind11's "Unable to cast"
# or its list of signatures.
WRONG_TYPES = {
    "model_path=1": (lambda t: ordo.Translator(1), "model_path"),
    "compute_type=None": (lambda t: ordo.Translator("en-de", compute_type=None), "compute_type"),
    "threads='2'": (lambda t: ordo.Translator("en-de", threads="2"), "threads"),
    "threads=1.5": (lambda t: ordo.Translator("en-de", threads=1.5), "threads"),
    "threads=True": (lambda t: ordo.Translator("en-de", threads=True), "threads"),
    "inter_threads=None": (lambda t: ordo.Translator("en-de", inter_threads=None), "inter_threads"),
    "weight_cache=None": (lambda t: ordo.Translator("en-de", weight_cache=None), "weight_cache"),
    "weight_cache=0": (lambda t: ordo.Translator("en-de", weight_cache=0), "weight_cache"),
    "device=1": (lambda t: ordo.Translator("en-de", device=1), "device"),
    "sources=None": (lambda t: t.translate_batch(None), "sources"),
    "sources=dict": (lambda t: t.translate_batch({"A dog runs.": 1}), "sources"),
    "targets=[1]": (lambda t: t.score_batch(["A dog."], [1]), "targets"),
    "beam_size=[2]": (lambda t: t.translate_batch(EN, beam_size=[2]), "beam_size"),
    "temperature='x'": (lambda t: t.translate_batch(EN, temperature="x"), "temperature"),
    "sample=1": (lambda t: t.translate_batch(EN, sample=1), "sample"),
    "target_lang=1": (lambda t: t.translate_batch(EN, target_lang=1), "target_lang"),
    "batch_size=1.5": (lambda t: t.translate_batch(EN, batch_size=1.5), "batch_size"),
    "glossary={1: 'x'}": (lambda t: t.translate_batch(EN, glossary={1: "x"}), "glossary"),
    "glossary={'x': 2}": (lambda t: t.translate_batch(EN, glossary={"x": 2}), "glossary"),
    "preset=[]": (lambda t: t.translate_batch(EN, preset=[]), "preset"),
    "translate(1)": (lambda t: t.translate(1), "text"),
    "summarize(None)": (lambda t: t.summarize(None), "document"),
    "generate_tokens(1)": (lambda t: t.generate_tokens(1), "source"),
    "language=None": (lambda t: t.translate_documents(EN, language=None), "language"),
    "translate_html(1)": (lambda t: t.translate_html(1), "html"),
    "split_sentences(1)": (lambda t: ordo.split_sentences(1), "text"),
    "resolve_model_dir(None)": (lambda t: ordo.resolve_model_dir(None), "name_or_path"),
}


@pytest.mark.parametrize("case", sorted(WRONG_TYPES))
def test_a_wrong_type_raises_type_error_naming_the_argument(case):
    call, name = WRONG_TYPES[case]
    with pytest.raises(TypeError) as error:
        call(translator("en-de"))
    assert re.match(re.escape(name) + r"\b", str(error.value)), str(error.value)
    assert "Unable to cast" not in str(error.value) and "incompatible" not in str(error.value)


# Values of the right type beyond what the argument takes, as far as an int too large for
# int64 or a float: ordo.Error naming the argument and its range.
@pytest.mark.parametrize("keywords, message", [
    ({"threads": 2 ** 70}, "threads must be an integer from 0 to 1024"),
    ({"threads": -1}, "threads must be an integer from 0 to 1024"),
    ({"inter_threads": 2 ** 64}, "inter_threads must be an integer from 1 to"),
])
def test_a_translator_argument_out_of_range_raises_ordo_error_naming_it(keywords, message):
    with pytest.raises(ordo.Error, match=message):
        ordo.Translator("en-de", **keywords)


@pytest.mark.parametrize("keywords, message", [
    ({"batch_size": 2 ** 70}, "batch_size must be an integer from 1 to 65536"),
    ({"temperature": 10 ** 400, "sample": True}, "temperature must be a number from"),
    ({"seed": 2 ** 64, "sample": True}, "seed must be an integer from 0 to"),
])
def test_an_option_out_of_range_raises_ordo_error_naming_it(keywords, message):
    with pytest.raises(ordo.Error, match=message):
        translator("en-de").translate_batch(EN, **keywords)


def test_more_inter_threads_than_the_library_starts_raise_ordo_error():
    with pytest.raises(ordo.Error, match="inter_threads"):
        ordo.Translator("en-de", inter_threads=100000)


def test_type_stubs_list_every_option():
    import ast
    folder = os.path.dirname(ordo.__file__)
    assert os.path.exists(os.path.join(folder, "py.typed"))
    tree = ast.parse(open(os.path.join(folder, "__init__.pyi"), encoding="utf-8").read())
    translator_class = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Translator")
    methods = {f.name: f for f in translator_class.body if isinstance(f, ast.FunctionDef)}
    for method in ("translate_batch", "translate", "summarize_batch", "generate_tokens", "translate_documents"):
        keywords = {a.arg for a in methods[method].args.kwonlyargs}
        assert set(SPECS) <= keywords, method
    for name in ("translate_batch", "summarize_batch", "score_batch", "translate_documents", "translate_html",
                 "generate_tokens", "generate_summary_tokens", "translate", "summarize"):
        assert hasattr(ordo.Translator, name) and name in methods, name


# ---------------------------------------------------------------- documents longer than the model


def long_document():
    """Eight DialogSum dialogues joined by blank lines: 1,775 tokens for a model of 512."""
    import json
    with open(os.path.join(SOURCE_DIR, "tests", "data", "samples", "dialogsum_dev30.jsonl")) as f:
        rows = [json.loads(line)["dialogue"] for line in f]
    return "\n\n".join(rows[10:18])


def test_summarize_batch_takes_a_long_document_in_parts_as_the_command_line():
    document = long_document()
    reference = run_cli("summarize", "dialogsum", [document], ["--document"])
    results = translator("dialogsum").summarize_batch([document])
    assert_same(results, reference, "long document")
    assert results[0].truncated_tokens == 0
    assert "Sara" in results[0].hypotheses[0].text  # the last dialogue is in the summary


def test_long_input_truncate_and_refuse():
    document = long_document()
    t = translator("dialogsum")
    assert t.summarize_batch([document], long_input="truncate")[0].truncated_tokens > 0
    with pytest.raises(ordo.Error, match="the document has 1775 tokens, more than the 512 the model takes"):
        t.summarize(document, long_input="refuse")
    with pytest.raises(ordo.Error, match="chunk_tokens 5: a chunk holds from 32 to 512 tokens"):
        t.summarize(document, chunk_tokens=5)
    with pytest.raises(ordo.Error, match="long_input is 'cut'"):
        t.summarize(document, long_input="cut")
    with pytest.raises(TypeError, match="an option of summarize"):
        t.translate_batch(["x"], long_input="chunk")
    with pytest.raises(ordo.Error, match="summarized in parts, it does not stream"):
        list(t.generate_summary_tokens(document))
    assert list(t.generate_summary_tokens(document, long_input="truncate", max_new_tokens=3))


def test_global_attention_is_refused_when_malformed_or_without_longformer_attention():
    with pytest.raises(ordo.Error, match="global_attention is for LED models"):
        translator("en-de").translate_batch(["A dog runs."], global_attention="first")
    led = translator(hf("led"))
    with pytest.raises(ordo.Error, match="the range '5-2' ends before it starts"):
        led.translate_batch(["A dog runs."], global_attention="5-2")
    with pytest.raises(ordo.Error, match="'x' is not a token position"):
        led.translate_batch(["A dog runs."], global_attention="0,x")
    # "first" is the default; "none" differs from it.
    default = led.translate_batch(SHORT, max_new_tokens=6)
    first = led.translate_batch(SHORT, max_new_tokens=6, global_attention="first")
    none = led.translate_batch(SHORT, max_new_tokens=6, global_attention="none")
    assert [r.hypotheses[0].ids for r in default] == [r.hypotheses[0].ids for r in first]
    assert [r.hypotheses[0].score for r in default] != [r.hypotheses[0].score for r in none]
