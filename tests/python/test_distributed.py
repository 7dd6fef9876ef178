# ctest-label: integration
"""python3 -m ordo.distributed (corpus translation on a Dask cluster) against `ordo translate`.

Loopback only: a LocalCluster of 2 worker processes started by the command, one started here
(whose worker is killed by its pid mid-run), and a run interrupted with SIGINT then resumed.
The bundled en-de model on 40 Multi30k lines plus the CLI's edge cases (empty and blank lines,
CR LF, no final newline). Every wait is bounded.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("ORDO_BUILD_DIR", ROOT / "build"))
ORDO = BUILD / "ordo"
MODEL = str(ROOT / "models" / "en-de")
SAMPLE = ROOT / "tests" / "data" / "samples" / "multi30k_val100.en"


def corpus(path, lines=40):
    text = SAMPLE.read_bytes().decode("utf-8").splitlines()[:lines]
    # The CLI's own reading: an empty line, a blank one, CR LF, and no newline at the end.
    data = "\n".join(text[:3]) + "\n\n   \n" + text[3] + "\r\n" + "\n".join(text[4:])
    path.write_bytes(data.encode("utf-8"))
    return path


def cli(input_path, output_path, *options):
    subprocess.run([str(ORDO), "translate", "-q", "-m", MODEL, "-t", "1", "-i", str(input_path), "-o",
                    str(output_path), *options], check=True, timeout=300)
    return output_path.read_bytes()


@pytest.fixture(scope="module")
def translated(tmp_path_factory):
    """The corpus the runs below share, and what `ordo translate` writes for it."""
    folder = tmp_path_factory.mktemp("corpus")
    source = corpus(folder / "in.txt")
    return source, cli(source, folder / "cli.txt")


def command(input_path, output_path, *options):
    return [sys.executable, "-m", "ordo.distributed", "-m", MODEL, "-i", str(input_path), "-o", str(output_path),
            "-t", "1", *options]


def run(input_path, output_path, *options, timeout=300):
    return subprocess.run(command(input_path, output_path, *options), capture_output=True, text=True,
                          timeout=timeout)


def parts_done(output_path):
    parts = Path(str(output_path) + ".parts")
    return len(list(parts.glob("part-*.txt"))) if parts.is_dir() else 0


def wait_for_parts(output_path, count, process, seconds=120):
    deadline = time.monotonic() + seconds
    while parts_done(output_path) < count:
        assert process.poll() is None, "the run ended before %d partitions were done" % count
        assert time.monotonic() < deadline, "no %d partitions after %d s" % (count, seconds)
        time.sleep(0.05)


def test_two_local_workers_write_what_the_cli_writes(tmp_path, translated):
    source, expected = translated
    stats = tmp_path / "stats.json"
    done = run(source, tmp_path / "out.txt", "--local-workers", "2", "--partition-lines", "10", "--stats", str(stats))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out.txt").read_bytes() == expected
    assert not (tmp_path / "out.txt.parts").exists()  # removed once the output is whole
    s = json.loads(stats.read_text())
    assert s["partitions"] == 5 and s["translated"] == 5 and s["kept"] == 0 and s["workers"] == 2
    # Each worker process loaded the model once, however many partitions it ran.
    assert 1 <= len(s["model_loads"]) <= 2 and set(s["model_loads"].values()) == {1}
    assert sum(s["partitions_by_worker"].values()) == 5


def test_nbest_lists_number_lines_across_partitions(tmp_path):
    source = corpus(tmp_path / "in.txt", lines=12)
    expected = cli(source, tmp_path / "cli.txt", "-b", "3", "-n", "2", "--max-length", "20")
    done = run(source, tmp_path / "out.txt", "--local-workers", "1", "--partition-lines", "4", "-b", "3", "-n", "2",
               "--max-length", "20")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out.txt").read_bytes() == expected
    assert b"\n13 ||| " in expected  # line numbers beyond the first partition


def test_a_killed_worker_loses_nothing(tmp_path, translated):
    from distributed import Client, LocalCluster

    source, expected = translated
    output = tmp_path / "out.txt"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster, Client(cluster) as client:
        pids = list(client.run(os.getpid).values())
        assert len(pids) == 2
        process = subprocess.Popen(command(source, output, "--scheduler", cluster.scheduler_address,
                                           "--partition-lines", "2", "-q"), stderr=subprocess.PIPE, text=True)
        try:
            wait_for_parts(output, 3, process)
            os.kill(pids[0], signal.SIGKILL)  # its running task goes to the other worker
            _, errors = process.communicate(timeout=300)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=30)
        assert process.returncode == 0, errors
        new_pids = list(client.run(os.getpid).values())
        assert pids[0] not in new_pids  # it was killed (its nanny started another one)
    assert output.read_bytes() == expected


def test_rerun_after_an_interrupt_translates_only_the_missing_partitions(tmp_path, translated):
    source, expected = translated
    output = tmp_path / "out.txt"
    process = subprocess.Popen(command(source, output, "--local-workers", "1", "--partition-lines", "2", "-q"),
                               stderr=subprocess.PIPE, text=True)
    try:
        wait_for_parts(output, 2, process)
        process.send_signal(signal.SIGINT)  # as Ctrl-C: finished parts are kept
        _, errors = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
    assert process.returncode == 130, errors
    assert "interrupted" in errors
    assert "Traceback" not in errors and "Fatal" not in errors  # the workers too (their stderr is this one)
    assert not output.exists()
    kept = parts_done(output)
    total = 21  # 42 lines in partitions of 2
    assert 2 <= kept < total

    stats = tmp_path / "stats.json"
    done = run(source, output, "--local-workers", "1", "--partition-lines", "2", "--stats", str(stats))
    assert done.returncode == 0, done.stderr
    s = json.loads(stats.read_text())
    assert (s["partitions"], s["kept"], s["translated"]) == (total, kept, total - kept)
    assert output.read_bytes() == expected


def test_another_runs_parts_are_refused_then_restarted(tmp_path):
    source = corpus(tmp_path / "in.txt", lines=6)
    output = tmp_path / "out.txt"
    parts = tmp_path / "out.txt.parts"
    parts.mkdir()
    (parts / "manifest.json").write_text(json.dumps({"version": 1, "input_sha256": "0" * 64}))
    (parts / "part-000000.txt").write_text("stale\n")
    refused = run(source, output, "--local-workers", "1", timeout=60)
    assert refused.returncode == 1
    assert "holds the parts of another run" in refused.stderr and "input_sha256" in refused.stderr
    assert "--restart" in refused.stderr
    done = run(source, output, "--local-workers", "1", "--restart")
    assert done.returncode == 0, done.stderr
    assert output.read_bytes() == cli(source, tmp_path / "cli.txt")


@pytest.mark.parametrize("options, status, message", [
    (["-i", "/nonexistent/in.txt"], 1, "/nonexistent/in.txt: cannot open input file"),
    (["--beam-size", "0"], 2, "--beam-size"),
    (["-o", "/nonexistent/out.txt"], 1, "/nonexistent/out.txt: cannot create output file"),
    (["--temperature", "x"], 2, "--temperature"),
    (["--local-workers", "1", "--scheduler", "tcp://127.0.0.1:1"], 2, "not allowed with"),
])
def test_bad_input_is_a_clear_error(tmp_path, options, status, message):
    source = corpus(tmp_path / "in.txt", lines=6)
    args = command(source, tmp_path / "out.txt") + options
    done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert done.returncode == status, done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out.txt").exists()


# The joined output is renamed over OUTPUT at the end and the parts go to OUTPUT.parts/: an
# output that cannot take that is refused in one line before the cluster starts, and the run
# leaves no part, temporary or probe file behind.
@pytest.mark.parametrize("output, message", [
    ("folder", "is a directory, not a file"),
    ("fifo", "is not a regular file"),
    ("/proc/ordo-distributed-out.txt", "/proc/ordo-distributed-out.txt: cannot create output file"),
])
def test_an_output_that_cannot_be_written_fails_at_once_and_leaves_nothing(tmp_path, output, message):
    source = corpus(tmp_path / "in.txt", lines=6)
    if output == "folder":
        (tmp_path / output).mkdir()
    elif output == "fifo":
        os.mkfifo(tmp_path / output)
    target = tmp_path / output
    before = sorted(p.name for p in tmp_path.iterdir())
    done = subprocess.run(command(source, target, "--local-workers", "1"), capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("python3 -m ordo.distributed: error: ") and message in lines[0], \
        done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert not Path(str(target) + ".parts").exists()


def test_invalid_utf8_names_the_line(tmp_path):
    source = tmp_path / "in.txt"
    source.write_bytes(b"A dog.\nA \xff cat.\n")
    done = run(source, tmp_path / "out.txt", timeout=60)
    assert done.returncode == 1
    assert "in.txt line 2: invalid UTF-8 at byte 3" in done.stderr


def test_a_bad_model_is_one_error(tmp_path):
    source = corpus(tmp_path / "in.txt", lines=6)
    done = subprocess.run([sys.executable, "-m", "ordo.distributed", "-m", str(tmp_path / "no-model"), "-i", str(source),
                           "-o", str(tmp_path / "out.txt"), "--local-workers", "1", "-q"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "no-model" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out.txt").exists()
