"""Root-safe state and paths (issue #49): each check of the second round, at unit level.

No root and no namespaces are needed: "another user" is simulated by telling the code
our uid is someone else's (``os.geteuid`` patched), or by ``chown`` when the suite runs
as root; twin processes are children of the test (``sleep``) with or without the token.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabric_stack.cli import console, signals
from fabric_stack.errors import FabricStackError, OutputFileError
from fabric_stack.files import outputs
from fabric_stack.text.printable import escape_controls
from fabric_stack.text.redact import echo_env
from fabric_stack.twin import runtime
from fabric_stack.twin.model import PREFIX, Process, TwinState
from fabric_stack.twin.wiring import TwinError
from tests.contract import run_checked

OTHER_UID = 65534


def _as_someone_else(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make files this test created look owned by another user (we are not their owner)."""
    real = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: real + 1 if real else OTHER_UID)


# -- the output layer: links and directories of another user, writes through dir_fd -------


def test_an_out_dir_link_of_another_user_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (tmp_path / "out").symlink_to(victim)
    real = os.geteuid()
    # The link (and only it) belongs to someone else: lstat answers for it with their uid.
    lstat = os.lstat

    def foreign_link(path: object, *args: object, **kwargs: object) -> os.stat_result:
        st = lstat(path, *args, **kwargs)  # type: ignore[arg-type]
        if Path(str(path)) == tmp_path / "out":
            return os.stat_result((st.st_mode, *st[1:4], real + 1, *st[5:]))
        return st

    monkeypatch.setattr(os, "lstat", foreign_link)
    with pytest.raises(OutputFileError, match=r"out: cannot write: is a symbolic link owned by"):
        outputs.write_files([(tmp_path / "out" / "a.txt", "x"), (tmp_path / "b.txt", "y")])
    assert list(victim.iterdir()) == [] and not (tmp_path / "b.txt").exists()


def test_a_directory_of_another_user_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "shared"
    out.mkdir()
    if os.geteuid() == 0:
        os.chown(out, OTHER_UID, OTHER_UID)
    else:  # the directory is ours; pretend we are someone else and tmp_path is root's
        pytest.skip("needs root to give a directory to another user")
    with pytest.raises(OutputFileError, match=r"is a directory owned by another user \(uid"):
        outputs.write_file(out / "plan.csv", "x")
    assert list(out.iterdir()) == []


def test_our_own_link_is_still_followed_as_a_parent(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    outputs.write_file(tmp_path / "link" / "a.txt", "x")
    assert (real / "a.txt").read_text() == "x"


def test_a_directory_swapped_for_a_link_mid_write_cannot_redirect_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, victim = tmp_path / "out", tmp_path / "victim"
    out.mkdir()
    victim.mkdir()
    real_stage = outputs._stage
    swapped: list[bool] = []

    def swap_then_stage(target: Path, dir_fd: int, *args: object) -> None:
        if not swapped:  # after the directory was opened: swap it for a link to the victim
            out.rename(tmp_path / "moved")
            out.symlink_to(victim)
            swapped.append(True)
        real_stage(target, dir_fd, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(outputs, "_stage", swap_then_stage)
    outputs.write_files([(out / "a.txt", "A"), (out / "b.txt", "B")])
    assert swapped and list(victim.iterdir()) == []  # nothing went through the link
    assert sorted(p.name for p in (tmp_path / "moved").iterdir()) == ["a.txt", "b.txt"]


def test_a_forced_mode_is_used_for_new_and_replaced_files(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    target.write_text("old")
    target.chmod(0o644)
    outputs.write_file(target, "new", mode=0o600)
    assert target.stat().st_mode & 0o777 == 0o600 and target.read_text() == "new"


# -- twin state: owned, not writable by others, bound by a token ------------------------


def _state(directory: Path, token: str = "ab" * 16) -> TwinState:
    tag = runtime.twin_tag(directory)
    ns = f"{PREFIX}{tag}-ib"
    return TwinState(
        tag=tag,
        token=token,
        fabric="infiniband",
        spec={},
        created_dir=True,
        runtime_dir=str(runtime.RUN_ROOT / f"{PREFIX}{tag}"),
        namespaces=(ns,),
    )


def _write_state(directory: Path, state: TwinState) -> Path:
    path = directory / "twin.json"
    path.write_text(state.model_dump_json())
    path.chmod(0o600)
    return path


def test_a_state_file_of_another_user_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_state(tmp_path, _state(tmp_path))
    _as_someone_else(monkeypatch)
    with pytest.raises(TwinError, match=r"is owned by uid \d+, not by you"):
        runtime.load_state(tmp_path)


@pytest.mark.parametrize("mode", [0o666, 0o620, 0o602])
def test_a_state_file_writable_by_others_is_refused(tmp_path: Path, mode: int) -> None:
    _write_state(tmp_path, _state(tmp_path)).chmod(mode)
    with pytest.raises(TwinError, match=rf"writable by others \(mode {mode:04o}\)"):
        runtime.load_state(tmp_path)


def test_a_twin_directory_writable_by_others_is_refused(tmp_path: Path) -> None:
    twin = tmp_path / "twin"
    twin.mkdir()
    _write_state(twin, _state(twin))
    twin.chmod(0o777)
    with pytest.raises(TwinError, match=r"twin directory is writable by others"):
        runtime.load_state(twin)


def test_a_state_file_that_is_a_link_is_refused(tmp_path: Path) -> None:
    twin = tmp_path / "twin"
    twin.mkdir()
    elsewhere = _write_state(tmp_path, _state(twin))
    (twin / "twin.json").symlink_to(elsewhere)
    with pytest.raises(TwinError, match=r"state file is a symbolic link"):
        runtime.load_state(twin)


@pytest.mark.parametrize("token", ["", "x" * 32, "ab" * 15, "AB" * 16])
def test_a_state_without_a_real_token_is_refused(tmp_path: Path, token: str) -> None:
    _write_state(tmp_path, _state(tmp_path, token=token))
    with pytest.raises(FabricStackError, match=r"twin.json: token: missing or not 32 hex"):
        runtime.load_state(tmp_path)


def test_state_is_saved_readable_by_its_owner_only(tmp_path: Path) -> None:
    state = _state(tmp_path, token=runtime.new_token())
    runtime.save_state(tmp_path, state)
    assert (tmp_path / "twin.json").stat().st_mode & 0o777 == 0o600
    assert runtime.load_state(tmp_path) == state


def test_new_tokens_are_random(tmp_path: Path) -> None:
    tokens = {runtime.new_token() for _ in range(50)}
    assert len(tokens) == 50 and all(len(t) == 32 for t in tokens)


@pytest.fixture
def child() -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A ``sleep`` child carrying a twin token in its environment, and that token."""
    token = runtime.new_token()
    proc = subprocess.Popen(
        ["sleep", "30"], env={**os.environ, runtime.TOKEN_ENV: token}, start_new_session=True
    )
    yield proc, token
    proc.kill()
    proc.wait()


def _record(proc: subprocess.Popen[bytes]) -> Process:
    ticks = runtime.start_ticks(proc.pid)
    assert ticks
    return Process(name="sleep", pid=proc.pid, start_ticks=ticks, netns="x", command="sleep")


def test_carries_token_reads_the_environment_of_the_process(
    child: tuple[subprocess.Popen[bytes], str],
) -> None:
    proc, token = child
    time.sleep(0.05)  # exec'd
    assert runtime.carries_token(proc.pid, token)
    assert not runtime.carries_token(proc.pid, runtime.new_token())
    assert not runtime.carries_token(os.getpid(), token)
    assert not runtime.carries_token(proc.pid, "")  # an empty token matches nothing


def test_down_leaves_a_process_without_the_token_alone(
    child: tuple[subprocess.Popen[bytes], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # What a planted twin.json does: the victim's real PID, start time and program.
    proc, _ = child
    time.sleep(0.05)
    planted = _record(proc)
    assert runtime.stop_processes([planted], [], grace=0.2, token=runtime.new_token()) == 0
    assert proc.poll() is None  # still running


def test_down_stops_a_process_that_carries_the_token(
    child: tuple[subprocess.Popen[bytes], str],
) -> None:
    proc, token = child
    time.sleep(0.05)
    assert runtime.stop_processes([_record(proc)], [], grace=2.0, token=token) == 1
    proc.wait(5)  # reaped by stop_processes already: gone
    assert runtime.start_ticks(proc.pid) is None


def test_the_runtime_token_binds_namespaces_to_the_twin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runtime, "RUN_ROOT", tmp_path)
    mine = _state(tmp_path / "a", token=runtime.new_token()).model_copy(
        update={"runtime_dir": str(tmp_path / "fst-same")}
    )
    runtime.claim_runtime_dir(mine)
    rt = Path(mine.runtime_dir)
    assert (rt / "token").stat().st_mode & 0o777 == 0o600
    assert runtime.runtime_token_matches(rt, mine.token)
    runtime.claim_runtime_dir(mine)  # the same twin again: fine
    # A twin whose 6-hex-digit tag collides gets the same runtime directory: refused, and
    # its `down` does not match the token, so it deletes no namespace of the first.
    other = mine.model_copy(update={"token": runtime.new_token()})
    with pytest.raises(TwinError, match=r"belongs to another twin"):
        runtime.claim_runtime_dir(other)
    assert not runtime.runtime_token_matches(rt, other.token)
    (rt / "token").unlink()
    (rt / "token").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "elsewhere").write_text(mine.token)
    assert not runtime.runtime_token_matches(rt, mine.token)  # never through a link


# -- signals, output hygiene, masking -----------------------------------------------------


def test_every_signal_that_ends_a_process_is_handled() -> None:
    assert set(signals.SIGNALS) == {signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT}
    assert set(outputs._HELD) == set(signals.SIGNALS)


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGQUIT])
def test_hup_and_quit_become_interrupted(sig: int) -> None:
    with pytest.raises(signals.Interrupted) as info, signals.handled():
        os.kill(os.getpid(), sig)
        time.sleep(1)  # the handler raises before this ends
    assert info.value.exit_code == 128 + sig


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("leaf\x1b]2;pwned\x07", "leaf\\x1b]2;pwned\\x07"),
        ("a\x1b[2Jb", "a\\x1b[2Jb"),
        ("tab\tand\nnewline\r", "tab\tand\nnewline\r"),
        ("c1\x9bx\x7f", "c1\\x9bx\\x7f"),
        ("plain · ünïcode", "plain · ünïcode"),
    ],
)
def test_control_characters_are_shown_not_sent(text: str, shown: str) -> None:
    assert escape_controls(text) == shown


def test_a_terminal_keeps_our_colours_but_not_other_escapes() -> None:
    text = "\x1b[1mbold\x1b[0m \x1b]52;c;Zm9v\x07 \r\x1b[K"
    assert escape_controls(text, keep_styles=True) == (
        "\x1b[1mbold\x1b[0m \\x1b]52;c;Zm9v\\x07 \r\x1b[K"
    )


def test_a_stream_that_is_not_a_terminal_gets_no_cursor_moves() -> None:
    text = "\x1b[31mred\x1b[0m\r\x1b[K \x1b[1A\x1b[2K"
    assert escape_controls(text, keep_styles=True, terminal=False) == (
        "\x1b[31mred\x1b[0m\r\x1b[K \\x1b[1A\x1b[2K"
    )


def test_escape_controls_is_linear() -> None:
    start = time.process_time()
    escape_controls("\x1b[" * 200_000, keep_styles=True)
    assert time.process_time() - start < 2


@pytest.mark.parametrize(
    ("value", "dropped"),
    [("80", False), ("1000", False), (str(10**12), True), ("-3", True), ("abc", True),
     ("٣٠", True), ("5", True)],
)  # fmt: skip
def test_absurd_columns_are_ignored(value: str, dropped: bool) -> None:
    assert ("COLUMNS" in console.bounded_sizes({"COLUMNS": value})) == dropped


def test_sane_output_escapes_and_restores(monkeypatch: pytest.MonkeyPatch) -> None:
    buf = io.StringIO()
    monkeypatch.setattr(sys, "stdout", buf)
    monkeypatch.setenv("COLUMNS", str(10**12))
    with console.sane_output():
        print("dev\x1b]0;x\x07")
        assert "COLUMNS" not in os.environ
    assert buf.getvalue() == "dev\\x1b]0;x\\x07\n"
    assert sys.stdout is buf and os.environ["COLUMNS"] == str(10**12)


@pytest.mark.parametrize(
    ("env", "args"),
    [
        ({"PYTHONIOENCODING": "ascii"}, ["size", "--gpus", "1024"]),
        ({"COLUMNS": str(10**12)}, ["size"]),
        ({"COLUMNS": "-3", "LINES": "x"}, ["cabling", "--gpus", "64"]),
    ],
    ids=["ascii", "huge-columns", "negative-columns"],
)
def test_odd_terminals_print_without_a_traceback(
    env: dict[str, str], args: list[str], tmp_path: Path
) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "import fabric_stack_launch as m; m.main()", *args],
        cwd=tmp_path,
        env={**os.environ, **env},
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-500:]
    assert b"Traceback" not in proc.stderr and proc.stdout


def test_escapes_in_a_discovered_name_are_shown_not_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    from bench.sweep_hostile import IB_ESCAPE

    (tmp_path / "ib.txt").write_text(IB_ESCAPE)
    run = run_checked(["adopt", "--ibnetdiscover", "ib.txt"], tmp_path)
    printed = run.stdout + run.stderr
    assert "\x1b]" not in printed and "\x07" not in printed and "\x1b[2J" not in printed
    assert "leaf\\x1b]2;pwned\\x07" in printed


@pytest.mark.parametrize(
    ("name", "value", "shown"),
    [
        ("FABRIC_STACK_NETBOX_TIMEOUT", "abc", "FABRIC_STACK_NETBOX_TIMEOUT='abc'"),
        ("FABRIC_STACK_NETBOX_TIMEOUT", "nbt_abc.DEF123", "FABRIC_STACK_NETBOX_TIMEOUT=***"),
        ("FABRIC_STACK_PG_QUERY_TIMEOUT", "0123456789abcdef" * 2,
         "FABRIC_STACK_PG_QUERY_TIMEOUT=***"),
        ("NETBOX_TOKEN", "x", "NETBOX_TOKEN=***"),
        ("PGPASSWORD", "x", "PGPASSWORD=***"),
        ("X", "postgresql://u:pw@h/db", "X='postgresql://u:***@h/db'"),
    ],
)  # fmt: skip
def test_environment_values_echoed_back_are_masked(name: str, value: str, shown: str) -> None:
    assert echo_env(name, value) == shown


def test_a_secret_in_a_timeout_variable_is_not_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from fabric_stack.adapters.inventory.netbox import http as netbox_http
    from fabric_stack.errors import InventoryError

    monkeypatch.setenv(netbox_http.DEADLINE_ENV, "nbt_k3y.S3CRETS3CRET")
    with pytest.raises(InventoryError) as info:
        netbox_http.deadline_seconds()
    assert "S3CRET" not in str(info.value) and f"{netbox_http.DEADLINE_ENV}=***" in str(info.value)
