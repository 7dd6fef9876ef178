"""ordo.Translator beyond translate_batch: generate_tokens (the same tokens and text as greedy
or sampled translate_batch, and a loop left early stops the decoding), threads (four Python
threads on one Translator give one thread's results; the GIL is released while ordo computes),
Ctrl-C (KeyboardInterrupt stops a long batch within a decoding step), documents, sentences,
scores and glossaries against the command line."""
import gc
import json
import os
import signal
import subprocess
import threading
import time

import pytest

import ordo
from cli_reference import HF, ORDO, run_cli

EN = ["A man is riding a bicycle down the street.", "Two young girls are playing in the sand near the water.",
      "A woman in a red dress is playing the guitar on the street.", "A dog runs."]
# Decodes for a long time: the bundled model must write 120 tokens per input.
LONG = {"min_new_tokens": 120, "max_new_tokens": 120}


@pytest.fixture(scope="module")
def en_de():
    return ordo.Translator("en-de")


# ---------------------------------------------------------------- generate_tokens


def test_generate_tokens_gives_greedy_translate_batch(en_de):
    for source in EN:
        steps = list(en_de.generate_tokens(source))
        best = en_de.translate_batch([source], beam_size=1)[0].hypotheses[0]
        assert [s.id for s in steps] == best.ids
        assert [s.token for s in steps if s.token != "</s>"] == best.tokens
        assert [s.step for s in steps] == list(range(len(steps)))
        assert [s.is_last for s in steps] == [False] * (len(steps) - 1) + [True]
        assert steps[-1].text == best.text
        assert abs(sum(s.log_prob for s in steps) - best.score) < 1e-4
        # The text so far only grows, and is always the start of the final text.
        for before, after in zip(steps, steps[1:]):
            assert after.text.startswith(before.text)


def test_generate_tokens_sampling_and_prefix(en_de):
    options = {"sample": True, "seed": 7, "temperature": 2.0}
    steps = list(en_de.generate_tokens(EN[0], **options))
    best = en_de.translate_batch([EN[0]], beam_size=1, **options)[0].hypotheses[0]
    assert [s.id for s in steps] == best.ids and steps[-1].text == best.text
    steps = list(en_de.generate_tokens(EN[0], target_prefix="Ein Mann"))
    best = en_de.translate_batch([EN[0]], beam_size=1, target_prefix="Ein Mann")[0].hypotheses[0]
    assert [s.id for s in steps] == best.ids and steps[-1].text == best.text
    assert steps[0].log_prob == 0  # a prefix token is not scored
    summary = list(ordo.Translator("dialogsum").generate_summary_tokens("#Person1#: Hi! #Person2#: Hello, Tom."))
    assert summary[-1].is_last and summary[-1].text


def test_leaving_the_loop_stops_the_decoding(en_de):
    steps = en_de.generate_tokens(EN[0], **LONG)
    taken = [next(steps) for _ in range(3)]
    assert [s.step for s in taken] == [0, 1, 2]
    steps.close()
    assert steps.produced < 20, "decoding went on after close(): %d tokens" % steps.produced
    with pytest.raises(StopIteration):
        next(steps)

    # A loop left by break: the iterator is dropped, and that stops it too.
    start = time.monotonic()
    for s in en_de.generate_tokens(EN[1], **LONG):
        stream = s  # noqa: F841 (keeps nothing of the iterator)
        break
    steps = en_de.generate_tokens(EN[2], **LONG)
    next(steps)
    inner = steps._stream
    del steps
    gc.collect()
    produced = inner.produced
    time.sleep(0.3)
    assert inner.produced == produced < 20
    assert time.monotonic() - start < 10


def test_generate_tokens_refuses_beam_search(en_de):
    with pytest.raises(ordo.Error, match="beam_size must be 1"):
        en_de.generate_tokens(EN[0], beam_size=4)
    assert list(en_de.generate_tokens("")) == []


# ---------------------------------------------------------------- threads and Ctrl-C


def test_four_threads_on_one_translator_give_the_same_results():
    translator = ordo.Translator("en-de", inter_threads=1)
    inputs = EN
    alone = [[(h.text, h.score) for h in r.hypotheses] for r in translator.translate_batch(inputs)]
    results, errors = {}, []

    def work(k):
        try:
            for _ in range(2):
                got = translator.translate_batch(inputs[k:] + inputs[:k])
                results.setdefault(k, []).append([[(h.text, h.score) for h in r.hypotheses] for r in got])
        except Exception as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors and len(results) == 4
    for k, runs in results.items():
        for run in runs:
            assert run == alone[k:] + alone[:k]


def test_the_gil_is_released_while_ordo_computes(en_de):
    done = threading.Event()

    def work():
        en_de.translate_batch(EN[:1], **LONG)
        done.set()

    spins = 0
    thread = threading.Thread(target=work)
    thread.start()
    while not done.is_set():  # Python code runs while the other thread is inside ordo
        spins += 1
        time.sleep(0.001)
    thread.join()
    assert spins > 20


def test_ctrl_c_stops_a_long_batch(en_de):
    start = time.monotonic()
    en_de.translate_batch(EN[:1], **LONG)
    one = time.monotonic() - start  # one input of 120 tokens
    count = max(4, int(8 / max(one, 0.05)))  # a batch of at least ~8 s
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            en_de.translate_batch(EN[:1] * count, batch_size=1, **LONG)
    finally:
        timer.cancel()
    elapsed = time.monotonic() - start
    assert elapsed < 0.5 + 2.0, "stopped %.2f s after Ctrl-C (one input takes %.2f s)" % (elapsed - 0.5, one)
    assert en_de.translate("A dog runs.") == "Ein Hund rennt."  # the translator still works


# ---------------------------------------------------------------- documents, scores, glossaries


def test_translate_documents_and_split_sentences(en_de):
    unit = "A man is riding a bicycle. A dog runs.\n\nTwo girls play in the sand."
    done = subprocess.run([ORDO, "translate", "-m", "en-de", "-q", "--document"], input=unit, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    docs = en_de.translate_documents([unit])
    assert docs[0].text + "\n" == done.stdout
    assert len(docs[0].results) == 3 == len(docs[0].sentences)
    assert ordo.split_sentences("Mr. Smith came home. He slept.", "en") == ["Mr. Smith came home.", "He slept."]


def test_translate_html_as_the_cli(en_de):
    page = '<p class="x">A man is riding a <b>red</b> bicycle.</p>'
    done = subprocess.run([ORDO, "translate", "-m", "en-de", "-q", "--format", "html"], input=page,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert en_de.translate_html(page) == done.stdout
    assert en_de.translate_html(page).startswith('<p class="x">')


def test_score_batch_equals_ordo_score(en_de, tmp_path):
    sources, targets = EN[:2], ["Ein Mann fährt Fahrrad.", "Zwei Mädchen spielen."]
    (tmp_path / "src").write_text("\n".join(sources) + "\n")
    (tmp_path / "tgt").write_text("\n".join(targets) + "\n")
    done = subprocess.run([ORDO, "score", "-m", "en-de", "-i", str(tmp_path / "src"), "-r", str(tmp_path / "tgt"),
                           "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    reference = [json.loads(line) for line in done.stdout.splitlines()]
    scores = en_de.score_batch(sources, targets)
    assert [(s.score, s.tokens, s.log_probs) for s in scores] == \
        [(r["score"], r["tokens"], r["log_probs"]) for r in reference]
    with pytest.raises(ordo.Error):
        en_de.score_batch(sources, targets[:1])


def test_glossary_as_the_cli(tmp_path):
    de_en = ordo.Translator("de-en")
    source = ["Ein Mann fährt mit dem Fahrrad die Straße entlang."]
    (tmp_path / "terms.tsv").write_text("Straße\troad\n", encoding="utf-8")
    reference = run_cli("translate", "de-en", source, ["-b", "4", "--glossary", str(tmp_path / "terms.tsv")])
    for glossary in (str(tmp_path / "terms.tsv"), {"Straße": "road"}):
        got = de_en.translate_batch(source, beam_size=4, glossary=glossary)
        assert got[0].hypotheses[0].text == reference[0]["text"]
        assert "road" in got[0].hypotheses[0].text
    with pytest.raises(ordo.Error, match="bad.tsv:1: "):
        (tmp_path / "bad.tsv").write_text("no tab here\n")
        de_en.translate_batch(source, glossary=str(tmp_path / "bad.tsv"))


def test_openmp_threads_spin_briefly_unless_a_policy_is_chosen():
    code = "import os, ordo; print(os.environ.get('GOMP_SPINCOUNT'))"
    env = dict(os.environ)
    env.pop("OMP_WAIT_POLICY", None)
    env.pop("GOMP_SPINCOUNT", None)
    out = subprocess.run([os.sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "10000", out.stderr
    env["OMP_WAIT_POLICY"] = "active"
    out = subprocess.run([os.sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "None", out.stderr
