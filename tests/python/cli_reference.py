"""What the command line gives, for the Python tests to compare with: the real `ordo` binary
(ORDO_BINARY, set by tests/python/tests.cmake) run on the same inputs, --json lines parsed."""
import json
import os
import signal
import subprocess
from concurrent.futures import ThreadPoolExecutor

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ORDO = os.environ.get("ORDO_BINARY", os.path.join(SOURCE_DIR, "build", "ordo"))
HF = os.path.join(SOURCE_DIR, "tests", "data", "hf")


def run_cli(command, model, inputs, flags=(), timeout=120):
    """`ordo <command> -m model --json -q flags` on `inputs` (one per line) -> list of dicts
    (text, tokens, score, n_best)."""
    args = [ORDO, command, "-m", model, "--json", "-q"] + list(flags)
    done = subprocess.run(args, input="\n".join(inputs) + "\n", capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        how = "killed by %s" % signal.Signals(-done.returncode).name if done.returncode < 0 else "exit %d" % done.returncode
        raise AssertionError("%s failed (%s): %s" % (" ".join(args), how, done.stderr))
    return [json.loads(line) for line in done.stdout.splitlines()]


def run_cli_error(command, model, inputs, flags=(), timeout=120):
    """The message `ordo` prints after 'ordo: error: ' for a run that must fail."""
    args = [ORDO, command, "-m", model, "-q"] + list(flags)
    done = subprocess.run(args, input="\n".join(inputs) + "\n", capture_output=True, text=True, timeout=timeout)
    assert done.returncode != 0, "%s succeeded" % " ".join(args)
    for line in done.stderr.splitlines():
        if line.startswith("ordo: error: "):
            return line[len("ordo: error: "):]
    return done.stderr.strip()


def run_all(calls, workers=3):
    """Several run_cli calls at once ({key: (command, model, inputs, flags)}): each start of the
    binary loads LibTorch, so they overlap."""
    with ThreadPoolExecutor(workers) as pool:
        futures = {key: pool.submit(run_cli, *call) for key, call in calls.items()}
        return {key: future.result() for key, future in futures.items()}


def assert_same(results, reference, what=""):
    """ordo.TranslationResult list == the command line's --json lines: every hypothesis' text,
    tokens and score (the same engine: bit for bit)."""
    assert len(results) == len(reference), what
    for k, (result, line) in enumerate(zip(results, reference)):
        got = [(h.text, list(h.tokens), h.score) for h in result.hypotheses]
        want = [(h["text"], h["tokens"], h["score"]) for h in line["n_best"]]
        assert got == want, "%s input %d" % (what, k)
