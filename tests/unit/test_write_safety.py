"""Issue 35, the writers: never through a symlink, no mkdir race, no staging file left.

Symlink cases run every writing command in-process (the bad-input contract: one
line, exit 2, nothing changed); the signal cases start a real process on a
32,768-GPU plan and interrupt it (bounded: each run is killed after a cap).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fabric_stack.adapters.inventory import open_store
from fabric_stack.errors import OutputFileError
from fabric_stack.files import outputs
from tests.adopt_fixtures import site_snapshot, write_ibnetdiscover
from tests.contract import invoke, run_checked

REPO = Path(__file__).resolve().parents[2]

WRITERS = [
    ("plan.csv", ("cabling",)),
    ("bom.json", ("bom", "--format", "json")),
    ("fabric.svg", ("diagram",)),
    ("est.json", ("estimate", "--format", "json")),
    ("env.sh", ("env",)),
    ("names.csv", ("adopt",)),
]
"""One writing command per --out spelling (render's --out-dir and inventory export below)."""


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def refused(cwd: Path, *args: str) -> str:
    run = run_checked(args, cwd)
    assert run.code == 2, run.stderr or run.stdout[:300]
    return run.stderr.strip()


# -- symlinks ---------------------------------------------------------------------------


def test_write_file_refuses_a_link_to_a_file(tmp_path: Path) -> None:
    (tmp_path / "real").write_text("keep\n")
    (tmp_path / "link").symlink_to("real")
    with pytest.raises(OutputFileError, match="is a symbolic link"):
        outputs.write_file(tmp_path / "link", "new\n")
    assert (tmp_path / "real").read_text() == "keep\n"
    assert (tmp_path / "link").is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real"]


def test_write_file_refuses_a_dangling_link_and_creates_nothing(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(tmp_path / "victim")
    with pytest.raises(OutputFileError, match="is a symbolic link"):
        outputs.write_files([(tmp_path / "ok.txt", "a"), (tmp_path / "link", "b")])
    assert not (tmp_path / "victim").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link"]


@pytest.mark.parametrize(("name", "cmd"), WRITERS, ids=[w[1][0] for w in WRITERS])
@pytest.mark.parametrize("dangling", [False, True], ids=["to-file", "dangling"])
def test_every_out_refuses_a_symlink(
    cwd: Path, name: str, cmd: tuple[str, ...], dangling: bool
) -> None:
    args = [*cmd, "--out", name]
    if cmd[0] == "adopt":
        args += ["--ibnetdiscover", str(_dump(cwd))]
    if cmd[0] == "env":  # env makes its state directory before it writes (not under test)
        (cwd / ".state" / "pulumi").mkdir(parents=True)
    if not dangling:
        (cwd / "victim").write_text("keep\n")
    (cwd / name).symlink_to("victim")
    line = refused(cwd, *args)
    assert line.startswith(f"error: {name}: cannot write: is a symbolic link"), line
    assert (cwd / "victim").exists() is not dangling
    if not dangling:
        assert (cwd / "victim").read_text() == "keep\n"


def test_render_out_dir_refuses_a_symlink_inside(cwd: Path) -> None:
    (cwd / "build" / "nccl").mkdir(parents=True)
    (cwd / "build" / "nccl" / "infiniband.env").symlink_to(cwd / "victim")
    line = refused(cwd, "render", "nccl", "--out-dir", "build")
    assert "build/nccl/infiniband.env: cannot write: is a symbolic link" in line, line
    assert not (cwd / "victim").exists()


def test_inventory_export_refuses_a_symlink(cwd: Path) -> None:
    open_store("sqlite:///inv.db").put("s", "Switch", "spine-01", {"role": "spine"})
    (cwd / "out.json").symlink_to("victim")
    # invoke, not run_checked: reading the database makes its -wal/-shm files (not the point)
    run = invoke(["inventory", "export", "--inventory", "sqlite:///inv.db", "--out", "out.json"])
    line = run.stderr.strip()
    assert run.code == 2 and run.exception is None, line
    assert "out.json: cannot write: is a symbolic link" in line, line
    assert not (cwd / "victim").exists()


def _dump(cwd: Path) -> Path:
    """A small site's ibnetdiscover dump (what `adopt` reads)."""
    topo, names, wires, _ = site_snapshot({}, 3, 2)
    return write_ibnetdiscover(cwd / "ib.txt", topo, names, wires, hca_form=False)


# -- concurrency ------------------------------------------------------------------------


def test_concurrent_writers_share_new_parents(tmp_path: Path) -> None:
    """Threads creating the same new directories: none sees "a parent is a file"."""
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def write(i: int) -> None:
        start.wait()
        try:
            outputs.write_file(tmp_path / "a" / "b" / "c" / f"f{i}.txt", str(i))
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    for _ in range(20):
        threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        assert not errors, errors
    assert len(list((tmp_path / "a" / "b" / "c").iterdir())) == 8


# -- signals ----------------------------------------------------------------------------

SIGNAL_CAP_S = 60
"""A run that has not ended this long after its signal is a hang."""

BIG = ["--gpus", "32768"]

SIGNALLED = [
    ("cabling", "--out", "plan.csv"),
    ("bom", "--format", "json", "--out", "bom.json"),
    ("diagram", "--out", "fabric.svg"),
    ("render", "report", "--out-dir", "build"),
]


def _start(cwd: Path, args: list[str]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    code = "from fabric_stack.cli import main; main()"
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_handlers(proc: subprocess.Popen[str]) -> None:
    """Wait until the command runs: its SIGTERM handler is installed (SigCgt in /proc).

    Python catches SIGINT from start-up but SIGTERM only once cli/signals.py installed
    the handlers, so that bit says the command itself has begun (imports took seconds).
    """
    deadline = time.monotonic() + SIGNAL_CAP_S
    while time.monotonic() < deadline and proc.poll() is None:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                if (
                    line.startswith("SigCgt:")
                    and int(line.split()[1], 16) >> (signal.SIGTERM - 1) & 1
                ):
                    return
        time.sleep(0.01)
    pytest.fail("the command never installed its signal handlers")


def _finish(proc: subprocess.Popen[str]) -> tuple[int, list[str]]:
    try:
        _, err = proc.communicate(timeout=SIGNAL_CAP_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"no exit within {SIGNAL_CAP_S} s of the signal")
    return proc.returncode, err.splitlines()


def _leftovers(root: Path) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.name.endswith(".tmp") or p.name.startswith(".")]


ENDING = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT]
"""Every signal whose default ends the process (#49: HUP and QUIT exited silently and left
staging files): each ends a command with the one line and 128 + its number."""
ENDING_IDS = ["INT", "TERM", "HUP", "QUIT"]


@pytest.mark.slow
@pytest.mark.parametrize("args", SIGNALLED, ids=lambda a: a[0])
@pytest.mark.parametrize("sig", ENDING, ids=ENDING_IDS)
def test_signal_while_working_writes_nothing(cwd: Path, args: tuple[str, ...], sig: int) -> None:
    proc = _start(cwd, [*args, *BIG])
    _wait_handlers(proc)
    time.sleep(0.5)  # sizing/rendering (each takes seconds at 32,768 GPUs), not writing yet
    if proc.poll() is not None:
        pytest.skip("finished before the signal (a very fast machine)")
    proc.send_signal(sig)
    code, lines = _finish(proc)
    assert code == 128 + sig, lines
    assert lines == ["interrupted: nothing written"], lines
    assert _leftovers(cwd) == []
    assert not any(p.is_file() for p in cwd.rglob("*")), list(cwd.rglob("*"))


@pytest.mark.slow
@pytest.mark.parametrize("sig", ENDING, ids=ENDING_IDS)
def test_signal_while_staging_completes_or_removes(cwd: Path, sig: int) -> None:
    """The signal lands while the 23 MB plan is being staged: the file is whole, no .tmp."""
    proc = _start(cwd, ["cabling", "--out", "plan.csv", *BIG])
    deadline = time.monotonic() + SIGNAL_CAP_S
    while time.monotonic() < deadline and proc.poll() is None:
        if any(n.endswith(".tmp") for n in os.listdir(cwd)):
            proc.send_signal(sig)
            break
        time.sleep(0.001)
    else:
        pytest.skip("the staging file was never seen (the write was too fast to catch)")
    code, lines = _finish(proc)
    assert _leftovers(cwd) == []
    if code == 0:  # the signal arrived after the command had finished writing and exited
        return
    assert code == 128 + sig, lines
    assert len(lines) == 1 and lines[0].startswith("interrupted: "), lines
    if lines[0] != "interrupted: nothing written":
        assert lines[0].startswith("interrupted: wrote plan.csv"), lines
        assert (cwd / "plan.csv").read_text().count("\n") > 30_000


# -- signals at any moment, through the console script's launcher ------------------------

LAUNCH = "import fabric_stack_launch as launch; launch.main()"
"""What the `fabric-stack` console script runs (pyproject's [project.scripts])."""


def _launch(cwd: Path, args: list[str]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    return subprocess.Popen(
        [sys.executable, "-c", LAUNCH, *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _caught(pid: int, sig: int) -> bool:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("SigCgt:"):
                return bool(int(line.split()[1], 16) >> (sig - 1) & 1)
    return False


def _wait_launcher(proc: subprocess.Popen[str]) -> None:
    """Wait until the launcher has installed its handlers (its first statement)."""
    deadline = time.monotonic() + SIGNAL_CAP_S
    while time.monotonic() < deadline and proc.poll() is None:
        if _caught(proc.pid, signal.SIGTERM):
            return
        time.sleep(0.005)
    pytest.fail("the launcher never installed its signal handlers")


@pytest.mark.parametrize("sig", ENDING, ids=ENDING_IDS)
def test_a_signal_during_start_up_is_one_line(cwd: Path, sig: int) -> None:
    # The package's imports take about a second after the launcher's first line: before
    # the launcher, SIGINT here printed a KeyboardInterrupt traceback, SIGTERM nothing.
    proc = _launch(cwd, ["size"])
    _wait_launcher(proc)
    proc.send_signal(sig)
    code, lines = _finish(proc)
    assert (code, lines) == (128 + sig, ["interrupted: nothing written"])


FAST_WRITERS: list[tuple[int, tuple[str, ...]]] = [
    (0, ("estimate", "--gpus", "1024", "--format", "json", "--out", "out.json")),
    (0, ("env", "--out", "out.sh")),
    # 1: the small site's dump has leaves that contradict the plan (adopt reports them).
    (1, ("adopt", "--ibnetdiscover", "ib.txt", "--out", "out.csv")),
    (0, ("inventory", "export", "--inventory", "sqlite:///inv.db", "--out", "out.json")),
]
"""The writers that finish within a second or two (with their exit status when nothing
interrupts them): signalled at several moments each."""

MOMENTS_S = (0.2, 0.9, 1.6, 2.4)
"""When the signal is sent after the launcher started: in the imports, in the command,
while writing, or after the command ended (then it simply completes)."""


def _prepare(cwd: Path, args: tuple[str, ...]) -> None:
    if args[0] == "adopt":
        _dump(cwd)
    if args[0] == "inventory":
        open_store("sqlite:///inv.db").put("s", "Switch", "spine-01", {"role": "spine"})


@pytest.mark.slow
@pytest.mark.parametrize(("ok", "args"), FAST_WRITERS, ids=[a[0] for _, a in FAST_WRITERS])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["INT", "TERM"])
def test_a_fast_writer_signalled_at_any_moment_completes_or_says_what_it_wrote(
    cwd: Path, ok: int, args: tuple[str, ...], sig: int
) -> None:
    _prepare(cwd, args)
    out = cwd / args[-1]
    for moment in MOMENTS_S:
        out.unlink(missing_ok=True)
        proc = _launch(cwd, list(args))
        _wait_launcher(proc)
        time.sleep(moment)
        signalled = proc.poll() is None
        if signalled:
            proc.send_signal(sig)
        code, lines = _finish(proc)
        assert not any("Traceback" in ln for ln in lines), (moment, lines)
        # Staging files are files (``.name.….tmp``); ``.state/`` is env's own directory.
        assert [p for p in _leftovers(cwd) if Path(p).is_file()] == [], moment
        if code == 128 + sig:
            assert signalled and len(lines) == 1 and lines[0].startswith("interrupted: ")
            # All or nothing: a file it names is whole, and none is there if it names none.
            assert out.exists() == (lines[0] != "interrupted: nothing written"), lines
        else:
            assert code == ok, (moment, code, lines)
            assert out.stat().st_size > 0
