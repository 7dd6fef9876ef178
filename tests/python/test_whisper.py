"""Speech through `import ordo` (ordo.Whisper, faster-whisper's shape) on the tiny random
Whisper fixture: its outputs are nonsense words, so the bar is agreement with transformers'
ids (speech.json) and with the command line (`ordo transcribe`), and the shape faster-whisper's
callers read (segments, info, words)."""
import io
import json
import os
import subprocess
import threading

import numpy
import pytest

import ordo
from cli_reference import HF, ORDO

MODEL = os.path.join(HF, "whisper")
AUDIO = os.path.join(MODEL, "audio")
GOLDEN = json.load(open(os.path.join(MODEL, "speech.json"), encoding="utf-8"))
EN = os.path.join(AUDIO, "en_16k.wav")
# Greedy with one temperature and no thresholds: transformers' generate() on one window.
EXACT = dict(beam_size=1, temperature=0.0, max_new_tokens=32, compression_ratio_threshold=None,
             log_prob_threshold=None, no_speech_threshold=None)
EXACT_FLAGS = ["--beam-size", "1", "--temperature", "0", "--max-length", "32", "--compression-ratio-threshold",
               "off", "--logprob-threshold", "off", "--no-speech-threshold", "off"]


@pytest.fixture(scope="module")
def model():
    return ordo.Whisper(MODEL)


def cli(audio, *flags):
    done = subprocess.run([ORDO, "transcribe", "-m", MODEL, "-q", audio] + list(flags), capture_output=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode()


def golden_case(audio, task, timestamps):
    for case in GOLDEN["cases"]:
        if case["audio"] == audio and case["task"] == task and case["timestamps"] == timestamps:
            return case
    raise KeyError(audio)


def test_the_text_without_timestamps_is_transformers_greedy_text(model):
    case = golden_case("en_16k.wav", "transcribe", False)
    segments, info = model.transcribe(EN, language="en", without_timestamps=True, **EXACT)
    assert "".join(s.text for s in segments).strip() == case["greedy_text"].strip()
    assert info.language == "en" and info.language_probability == 1.0


def test_generate_gives_transformers_ids_greedy_and_beam(model):
    for case in GOLDEN["cases"][:6]:
        features = model.features(os.path.join(AUDIO, case["audio"]))
        assert features.shape == (80, 3000) and features.dtype == numpy.float32
        for beams, key in ((1, "greedy_ids"), (4, "beam4_ids")):
            result = model.generate(features, language=case["language"], task=case["task"],
                                    timestamps=case["timestamps"], beam_size=beams, max_new_tokens=32)
            assert result.ids[0] == case[key], (case["audio"], case["task"], beams)


def test_segments_have_faster_whispers_attributes(model):
    segments, info = model.transcribe(EN, language="en", word_timestamps=True, **EXACT)
    assert isinstance(segments, list) and segments
    for k, s in enumerate(segments):
        assert s.id == k and s.seek == 0
        assert 0.0 <= s.start <= s.end <= info.duration + 0.02
        assert isinstance(s.text, str) and s.tokens and s.temperature == 0.0
        for name in ("avg_logprob", "compression_ratio", "no_speech_prob"):
            assert isinstance(getattr(s, name), float)
        for w in s.words:
            assert isinstance(w.word, str) and w.start <= w.end and 0.0 <= w.probability <= 1.0
    assert abs(info.duration - GOLDEN["clips"][0]["seconds"]) < 1e-3
    assert info.all_language_probs is None  # the language was given


def test_each_segment_seeks_the_window_it_came_from(model):
    long = os.path.join(AUDIO, "en_long_16k.wav")
    for without_timestamps in (False, True):
        segments, info = model.transcribe(long, language="en", without_timestamps=without_timestamps, **EXACT)
        seeks = [s.seek for s in segments]
        assert seeks == sorted(seeks) and seeks[0] == 0 and seeks[-1] > 0, seeks
        assert all(s.seek * 0.01 <= s.start + 1e-6 and s.seek < info.duration * 100 for s in segments)


def test_transcripts_equal_the_command_lines(model):
    segments, info = model.transcribe(EN, language="en", **EXACT)
    verbose = json.loads(cli(EN, "--language", "en", "--format", "verbose_json", *EXACT_FLAGS))
    assert [s.text for s in segments] == [s["text"] for s in verbose["segments"]]
    assert [s.tokens for s in segments] == [s["tokens"] for s in verbose["segments"]]
    assert [(s.start, s.end) for s in segments] == [(s["start"], s["end"]) for s in verbose["segments"]]
    assert info.duration == verbose["duration"]


def test_the_default_decoding_is_the_command_lines_default(model):
    segments, _ = model.transcribe(EN, language="en", max_new_tokens=32, seed=7)
    expected = cli(EN, "--language", "en", "--max-length", "32", "--seed", "7")
    assert "".join(s.text.strip() + "\n" for s in segments) == expected


def test_a_detected_language_comes_with_every_languages_probability(model):
    segments, info = model.transcribe(os.path.join(AUDIO, "de_16k.wav"), **EXACT)
    language, probability, probabilities = model.detect_language(os.path.join(AUDIO, "de_16k.wav"))
    top3 = GOLDEN["language_detection"]["de"]["top3"]
    assert language == top3[0]["token"][2:-2] == info.language
    assert probability == pytest.approx(numpy.exp(top3[0]["logprob_among_languages"]), abs=1e-4)
    assert info.language_probability == pytest.approx(probability, abs=1e-6)
    assert info.all_language_probs == probabilities
    assert len(probabilities) == len(model.supported_languages) == 99


def test_audio_is_a_path_bytes_a_file_object_or_samples(model):
    expected, _ = model.transcribe(EN, language="en", **EXACT)
    data = open(EN, "rb").read()
    samples = ordo.decode_audio(EN)
    assert samples.dtype == numpy.float32 and samples.ndim == 1 and len(samples) == GOLDEN["clips"][0]["samples_16k"]
    assert numpy.array_equal(samples, ordo.decode_audio(data))
    for audio in (data, bytearray(data), io.BytesIO(data), samples, samples.astype(numpy.float64)):
        segments, _ = model.transcribe(audio, language="en", **EXACT)
        assert [s.text for s in segments] == [s.text for s in expected], type(audio)


def test_task_translate_and_a_temperature_list_are_taken(model):
    segments, _ = model.transcribe(os.path.join(AUDIO, "de_16k.wav"), language="de", task="translate",
                                   temperature=[0.0, 0.5], max_new_tokens=32, seed=1)
    expected = cli(os.path.join(AUDIO, "de_16k.wav"), "--language", "de", "--task", "translate", "--temperature",
                   "0,0.5", "--max-length", "32", "--seed", "1")
    assert "".join(s.text.strip() + "\n" for s in segments) == expected


def test_bad_audio_raises_ordo_error_naming_it(model, tmp_path):
    missing = str(tmp_path / "missing.wav")
    with pytest.raises(ordo.Error, match="missing.wav"):
        model.transcribe(missing)
    with pytest.raises(ordo.Error, match="not audio"):
        model.transcribe(b"These are not audio samples.")
    with pytest.raises(ordo.Error, match="dimensions"):
        model.transcribe(numpy.zeros((2, 16000), dtype=numpy.float32))
    with pytest.raises(TypeError, match="audio must be a path"):
        model.transcribe(42)


def test_options_that_do_not_apply_are_refused(model):
    with pytest.raises(TypeError, match="vad_filter"):
        model.transcribe(EN, vad_filter=True)
    with pytest.raises(ordo.Error, match="source_lang"):
        model.transcribe(EN, source_lang="en")
    with pytest.raises(ordo.Error, match="beam_size"):
        model.transcribe(EN, beam_size=0)
    with pytest.raises(TypeError, match="temperature"):
        model.transcribe(EN, temperature="hot")


def test_a_text_model_is_not_a_speech_model():
    with pytest.raises(ordo.Error, match="not a speech model"):
        ordo.Whisper(os.path.join(HF, "marian_opus_en_mg"))


def test_two_threads_share_one_model(model):
    expected, _ = model.transcribe(EN, language="en", **EXACT)
    results = [None, None]

    def run(k):
        results[k] = [s.text for s in model.transcribe(EN, language="en", **EXACT)[0]]

    threads = [threading.Thread(target=run, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [[s.text for s in expected]] * 2
