"""ordo: translation and summarization with encoder-decoder transformers (Marian/opus-mt,
Pegasus, M2M100, NLLB, FSMT, BART, mBART, T5), and speech recognition with Whisper, on the
CPU, from Hugging Face folders as downloaded. The API follows CTranslate2's Python package
where the concept is the same, and faster-whisper's for speech:

    import ordo
    translator = ordo.Translator("en-de")          # a bundled model, or a model folder
    results = translator.translate_batch(["A man is riding a bicycle."], beam_size=4)
    print(results[0].hypotheses[0].text)

    model = ordo.Whisper("whisper-small")           # a Whisper model folder
    segments, info = model.transcribe("talk.mp3")
    for segment in segments:
        print("[%.2fs -> %.2fs] %s" % (segment.start, segment.end, segment.text))

Keyword options come from ordo's one table of decoding options (ordo.decode_options(): the
command line's flags, the server's request fields); an option left out or None takes the
model's generation_config.json, as on the command line. See docs/python.md.
"""

import os as _os

# OpenMP's wait policy must be chosen before the OpenMP runtime (libgomp, loaded with libordo
# and LibTorch below) starts: by default its idle threads spin for milliseconds, and on cores
# shared with other work ordo then runs many times slower; a short spin, then sleep, as the
# `ordo` command sets it (src/cli/openmp_wait.h says why). A policy the user chose
# (OMP_WAIT_POLICY or GOMP_SPINCOUNT) is kept; a libgomp some other module loaded first keeps
# the policy it started with.
if "OMP_WAIT_POLICY" not in _os.environ and "GOMP_SPINCOUNT" not in _os.environ:
    _os.environ["GOMP_SPINCOUNT"] = "10000"

from ordo import _ordo  # noqa: E402
from ordo._ordo import (  # noqa: E402,F401
    DocumentTranslation,
    Error,
    Hypothesis,
    ScoreResult,
    Segment,
    SpeechGeneration,
    TranscriptionInfo,
    TranslationResult,
    Whisper,
    Word,
    __version__,
    batch_options,
    decode_audio,
    decode_options,
    model_options,
    parse_option,
    resolve_model_dir,
    split_sentences,
)

__all__ = [
    "DocumentTranslation",
    "Error",
    "GenerationStepResult",
    "Hypothesis",
    "ScoreResult",
    "Segment",
    "SpeechGeneration",
    "TranscriptionInfo",
    "TranslationResult",
    "Translator",
    "Whisper",
    "Word",
    "batch_options",
    "decode_audio",
    "decode_options",
    "model_options",
    "parse_option",
    "resolve_model_dir",
    "split_sentences",
]


class GenerationStepResult:
    """One token of generate_tokens(): CTranslate2's GenerationStepResult, plus the text so far."""

    __slots__ = ("step", "id", "token", "log_prob", "is_last", "text")

    def __init__(self, step, id, token, log_prob, is_last, text):
        self.step = step  # 0, 1, ...: the position of the token in the output
        self.id = id  # the token's id (the end token </s> too)
        self.token = token  # its piece ("▁Haus", "</s>")
        self.log_prob = log_prob  # its log-probability (0 for a target_prefix token)
        self.is_last = is_last  # the last token: `text` is then the whole result
        self.text = text  # the output text so far that later tokens cannot change

    @property
    def token_id(self):
        """CTranslate2's name of `id`."""
        return self.id

    def __repr__(self):
        return "GenerationStepResult(step=%d, id=%d, token=%r, log_prob=%.4f, is_last=%s, text=%r)" % (
            self.step, self.id, self.token, self.log_prob, self.is_last, self.text)


class _TokenSteps:
    """The iterator generate_tokens() returns. Decoding runs on a thread of its own, a few tokens
    ahead of the reader; close() (called when the loop breaks and the iterator is dropped, or by
    `with`) stops it before its next step."""

    def __init__(self, stream):
        self._stream = stream
        self._pending = None
        self._step = 0
        self._done = False

    def __iter__(self):
        return self

    def __next__(self):
        while not self._done:
            raw = self._stream.next()
            if raw is None:  # ended without a final event: stopped
                self._done = True
                break
            id, token, log_prob, text, done = raw
            if done:  # the final event: the last token carries the whole text
                self._done = True
                if self._pending is not None:
                    self._pending.is_last = True
                    self._pending.text = text
                break
            previous, self._pending = self._pending, GenerationStepResult(
                self._step, id, token, log_prob, False, text)
            self._step += 1
            if previous is not None:
                return previous
        if self._pending is not None:
            last, self._pending = self._pending, None
            return last
        self.close()
        raise StopIteration

    def close(self):
        """Stops the decoding and waits for its thread."""
        self._done = True
        self._pending = None
        self._stream.close()

    @property
    def produced(self):
        """How many tokens the decoding generated so far (read or not)."""
        return self._stream.produced

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            self._stream.close()
        except Exception:
            pass


class Translator(_ordo.Translator):
    """A model loaded once: ordo.Translator(model_path, compute_type="float32", threads=0,
    inter_threads=1, weight_cache=True). `model_path` is a Hugging Face model folder or the
    name of a bundled model ("en-de", "de-en", "dialogsum"), as `ordo --model` takes it.
    Its methods may be called from several Python threads at once (the GIL is released while
    ordo computes)."""

    def generate_tokens(self, source, **options):
        """Translates `source` token by token: an iterator of GenerationStepResult, each as it is
        decoded (greedy search, or sampling with sample=True). Leaving the loop early stops the
        decoding."""
        return _TokenSteps(self._token_stream(source, False, **options))

    def generate_summary_tokens(self, document, **options):
        """generate_tokens() with summarize_batch()'s defaults (the summarization preset)."""
        return _TokenSteps(self._token_stream(document, True, **options))
