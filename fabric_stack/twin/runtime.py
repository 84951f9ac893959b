"""The twin's adapter to the operating system: namespaces, processes, the state file, waits.

Every object is recorded in the state file *before* it is made (write-ahead),
so ``twin down`` finds it after a crash or a kill of ``up`` half-way. Every
process the twin starts runs inside one of its own network namespaces, so
``ip netns pids`` finds even a daemon whose PID was never written down; PIDs
that are recorded carry their start time and program name, so a reused PID is
never killed. Every wait is bounded in time and in count.

The state file is input like any other (the twin runs as root, so a tampered one must
not steer it): :func:`load_state` reads it through the input layer (size, UTF-8, JSON
depth) and :func:`check_state` refuses, in one line naming the file and the field,
any path that resolves outside the twin directory, a namespace or runtime directory
not of this twin, and a process without a real start time, before anything runs.

The tag (6 hex digits of a path hash) and a start time (readable by anyone from /proc)
prove nothing, so a twin is bound to what it made by a random token (#49): `up` records
it in the state file, in ``RUNTIME_DIR/token`` (root's, 0600) and in the environment of
every process it starts (``FABRIC_STACK_TWIN_TOKEN``, readable only by the process's
owner). `down` signals a recorded PID only when ``/proc/PID/environ`` carries the token,
and deletes namespaces and the runtime directory only when ``RUNTIME_DIR/token`` is the
token. The state file itself must be a regular file owned by the user running the
command and writable by no one else, in a directory likewise; it is written 0600.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import shutil
import signal
import stat
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from pydantic import ValidationError

from fabric_stack.files.inputs import MAX_CONFIG_BYTES, parse_json, read_text
from fabric_stack.files.outputs import write_file
from fabric_stack.twin.model import PREFIX, STATE_FILE, Process, TwinState
from fabric_stack.twin.wiring import TwinError, TwinFailure

UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
"""libumad2sim (Debian ibsim-utils): LD_PRELOAD-ed so umad programs talk to ibsim."""

RUN_ROOT = Path("/run")
"""Where the runtime directory (daemon sockets, PID files) lives: lldpcli is setuid _lldpd and
must reach the sockets, which a private (0700) twin directory would not allow."""


def require_root() -> None:
    """The twin needs root (network namespaces): say so in one line, exit status 2."""
    if os.geteuid() != 0:
        raise TwinError(
            "twin needs root (it creates network namespaces and starts daemons); run it as root"
        )


TOKEN_ENV = "FABRIC_STACK_TWIN_TOKEN"
"""The variable carrying the twin's token in the environment of every process it starts."""

_TOKEN = re.compile(r"[0-9a-f]{32}")


def new_token() -> str:
    """A fresh random token for a twin (128 bits, hex)."""
    return secrets.token_hex(16)


def twin_tag(directory: Path) -> str:
    """Short id of the twin in ``directory``: part of every namespace and runtime path."""
    return hashlib.sha256(str(directory.resolve()).encode()).hexdigest()[:6]


def netns_name(tag: str, device: str) -> str:
    """``fst-<tag>-<device>``: the namespace of one device (or ``ib`` for the IB twin)."""
    return f"{PREFIX}{tag}-{device}"


# --------------------------------------------------------------------------- state file


def state_path(directory: Path) -> Path:
    """``DIR/twin.json``."""
    return directory / STATE_FILE


def load_state(directory: Path) -> TwinState | None:
    """The state file of the twin in ``directory``, or None when there is none."""
    path = state_path(directory)
    if not path.exists() and not path.is_symlink():
        return None
    check_owned(path)
    text = read_text(path, MAX_CONFIG_BYTES)  # the input layer: bounded, UTF-8, one-line errors
    try:
        doc = parse_json(text, path)  # bounded depth and integer length, one-line errors
    except ValueError as exc:  # JSON syntax: parse_json leaves it to the caller
        raise TwinError(f"{path}: not a twin state file ({exc})") from None
    try:
        state = TwinState.model_validate(doc)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(x) for x in err["loc"]) or "$"
        raise TwinError(f"{path}: not a twin state file ({where}: {err['msg']})") from None
    check_state(directory, state)
    return state


def check_owned(path: Path) -> None:
    """Refuse a state file (or its directory) that is a link, not ours, or writable by others.

    The twin runs as root: a ``twin.json`` another user could write (or plant, in a
    directory they own or can write) would steer what root stops and deletes.
    """
    euid = os.geteuid()
    for p, what in ((path.parent, "directory"), (path, "state file")):
        try:
            st = os.lstat(p)
        except OSError as exc:
            raise TwinError(f"{p}: cannot read the twin {what}: {exc.strerror}") from None
        if stat.S_ISLNK(st.st_mode):
            raise TwinError(f"{p}: the twin {what} is a symbolic link; nothing was done")
        if st.st_uid != euid:
            raise TwinError(
                f"{p}: the twin {what} is owned by uid {st.st_uid}, not by you (uid {euid}); "
                "nothing was done"
            )
        writable = stat.S_IMODE(st.st_mode) & (stat.S_IWGRP | stat.S_IWOTH)
        if writable:
            raise TwinError(
                f"{p}: the twin {what} is writable by others (mode "
                f"{stat.S_IMODE(st.st_mode):04o}); `chmod go-w` it; nothing was done"
            )


_TAG = re.compile(r"[0-9a-f]{6}")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")


def _refuse(directory: Path, field: str, problem: str) -> TwinError:
    return TwinError(
        f"{state_path(directory)}: {field}: {problem} (the state file was edited or is "
        "not this twin's; nothing was done)"
    )


def check_state(directory: Path, state: TwinState) -> None:
    """Refuse a state file that names anything outside this twin (one line: file, field).

    The twin runs as root and ``down`` deletes every path and stops every process
    the file names, so each is checked first: paths resolve strictly inside
    ``directory``; the tag is ``directory``'s; namespaces and the runtime directory
    carry that tag; each process has a real start time (0 matched any process
    before) and runs in one of those namespaces.
    """
    root = directory.resolve()
    if not _TAG.fullmatch(state.tag) or state.tag != twin_tag(root):
        raise _refuse(directory, "tag", f"{state.tag!r} is not the tag of {root}")
    if not _TOKEN.fullmatch(state.token):
        raise _refuse(directory, "token", "missing or not 32 hex digits (made by `twin up`)")
    prefix = f"{PREFIX}{state.tag}-"
    for i, ns in enumerate(state.namespaces):
        if not (_NAME.fullmatch(ns) and ns.startswith(prefix)):
            raise _refuse(directory, f"namespaces[{i}]", f"{ns!r} is not a {prefix}… namespace")
    if state.runtime_dir != str(RUN_ROOT / f"{PREFIX}{state.tag}"):
        raise _refuse(directory, "runtime_dir", f"{state.runtime_dir!r} is not /run/{prefix[:-1]}")
    for i, rel in enumerate(state.paths):
        _check_path(directory, root, f"paths[{i}]", rel)
    for i, p in enumerate(state.processes):
        field = f"processes[{i}]"
        if p.pid <= 1:
            raise _refuse(directory, f"{field}.pid", f"{p.pid} is not a process the twin started")
        if p.start_ticks <= 0:
            raise _refuse(directory, f"{field}.start_ticks", f"{p.start_ticks} is not a start time")
        if p.netns not in state.namespaces:
            raise _refuse(directory, f"{field}.netns", f"{p.netns!r} is not one of its namespaces")


def _check_path(directory: Path, root: Path, field: str, rel: str) -> None:
    """``rel`` names a file or directory strictly inside ``root``, after resolving links."""
    if not rel or "\x00" in rel or Path(rel).is_absolute():
        raise _refuse(directory, field, f"{rel!r} is not a path relative to the twin directory")
    try:
        resolved = (root / rel).resolve()
    except (OSError, RuntimeError):  # a symlink loop
        raise _refuse(directory, field, f"{rel!r} cannot be resolved") from None
    if resolved == root or not resolved.is_relative_to(root):
        raise _refuse(directory, field, f"{rel!r} resolves to {resolved}, outside {root}")


def need_state(directory: Path) -> TwinState:
    """The state of a twin that `up` finished building, or a one-line error."""
    state = load_state(directory)
    if state is None:
        raise TwinError(f"{directory}: no twin here (run `fabric-stack twin up --dir {directory}`)")
    if not state.complete:
        raise TwinError(
            f"{directory}: the twin's `up` did not finish (run `fabric-stack twin down --dir "
            f"{directory}` and `up` again)"
        )
    return state


def save_state(directory: Path, state: TwinState) -> None:
    """Write the state file atomically (a crash leaves the old or the new one, never half)."""
    # The output layer: staged beside it and renamed, never written through a symlink.
    write_file(state_path(directory), state.model_dump_json(indent=2) + "\n", mode=0o600)


def claim_runtime_dir(state: TwinState) -> None:
    """Make the runtime directory and record the token in it (``token``, 0600, O_EXCL).

    A directory that holds another token belongs to a running twin whose tag collides
    with this one: refused in one line, before any namespace is made.
    """
    rt = Path(state.runtime_dir)
    rt.mkdir(mode=0o755, exist_ok=True)
    if runtime_token_matches(rt, state.token):
        return
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(rt / "token", flags, 0o600)
    except FileExistsError:
        raise TwinError(
            f"{rt}: belongs to another twin (its tag {state.tag} collides with this "
            "directory's); take that twin down or use another --dir"
        ) from None
    with os.fdopen(fd, "w") as fh:
        fh.write(state.token + "\n")


def runtime_token_matches(runtime_dir: Path, token: str) -> bool:
    """Whether ``runtime_dir/token`` is a regular file of ours (or root's) holding ``token``."""
    if not _TOKEN.fullmatch(token):
        return False
    try:
        fd = os.open(runtime_dir / "token", os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_uid not in (os.geteuid(), 0):
            return False
        return secrets.compare_digest(fh.read(64).strip(), token.encode())


def carries_token(pid: int, token: str) -> bool:
    """Whether ``pid``'s environment (``/proc/PID/environ``) has this twin's token."""
    if not _TOKEN.fullmatch(token):
        return False
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False
    return f"{TOKEN_ENV}={token}".encode() in environ.split(b"\0")


# --------------------------------------------------------------------------- commands


def ns_cmd(netns: str | None, argv: Sequence[str]) -> list[str]:
    """``argv`` run inside ``netns`` (``ip netns exec`` keeps the PID: it execs the command)."""
    return ["ip", "netns", "exec", netns, *argv] if netns else list(argv)


def run(
    argv: Sequence[str],
    *,
    netns: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 30.0,
    check: bool = True,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a command to completion (bounded by ``timeout``); failures are one line."""
    full = ns_cmd(netns, argv)
    try:
        res = subprocess.run(
            full,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, **(env or {})},
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise TwinFailure(f"`{' '.join(argv)}` did not finish within {timeout:g} s") from None
    except FileNotFoundError:
        raise TwinFailure(
            f"{argv[0]} is not installed (run `make twin-deps` or scripts/twin-deps.sh as root)"
        ) from None
    if check and res.returncode != 0:
        tail = (res.stderr or res.stdout).strip().splitlines()[-1:] or ["no output"]
        raise TwinFailure(f"`{' '.join(argv)}` failed (exit {res.returncode}): {tail[0]}")
    return res


def start_ticks(pid: int) -> int | None:
    """Start time of ``pid`` in clock ticks since boot (/proc/PID/stat field 22), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


def spawn(
    name: str,
    argv: Sequence[str],
    *,
    netns: str,
    log: Path,
    env: Mapping[str, str] | None = None,
    token: str,
) -> Process:
    """Start a long-running process inside ``netns`` (stdin closed, output to ``log``),
    with the twin's ``token`` in its environment (what `down` checks before killing)."""
    with log.open("ab") as out:
        try:
            proc = subprocess.Popen(
                ns_cmd(netns, argv),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**os.environ, **(env or {}), TOKEN_ENV: token},
                start_new_session=True,
            )
        except FileNotFoundError:
            raise TwinFailure(f"{argv[0]} is not installed (run `make twin-deps`)") from None
    ticks = start_ticks(proc.pid)  # a child not yet reaped: /proc/PID exists even if it exited
    if ticks is None:
        raise TwinFailure(f"{name}: exited before its start time could be recorded")
    return Process(
        name=name, pid=proc.pid, start_ticks=ticks, netns=netns, command=program_of(argv)
    )


_ENV_OPTIONS_WITH_ARG = frozenset({"-C", "--chdir", "-u", "--unset", "-S", "--split-string"})


def program_of(argv: Sequence[str]) -> str:
    """The program ``argv`` ends up running: its first word, or, behind ``env [-C DIR]
    [VAR=value]…``, the word ``env`` execs (what /proc/PID/cmdline shows once it has)."""
    words = list(argv)
    if not words or Path(words[0]).name != "env":
        return Path(words[0]).name if words else ""
    i = 1
    while i < len(words) and (words[i].startswith("-") or "=" in words[i]):
        i += 2 if words[i] in _ENV_OPTIONS_WITH_ARG else 1
    return Path(words[i]).name if i < len(words) else "env"


def command_line(pid: int) -> str | None:
    """``pid``'s command line (/proc/PID/cmdline, arguments joined by spaces), or None."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return raw.rstrip(b"\0").replace(b"\0", b" ").decode(errors="replace")


def alive(p: Process) -> bool:
    """Whether the recorded process still runs: same PID, same start time, same program.

    A start time of 0 never matches (it once matched any process, so a tampered state
    file could name any PID); the program name is checked when the state recorded it.
    """
    ticks = start_ticks(p.pid)
    if ticks is None or p.start_ticks <= 0:
        return False
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(p.pid, os.WNOHANG)  # reap it if it is our exited child
    ticks = start_ticks(p.pid)
    if ticks is None or ticks != p.start_ticks:
        return False
    # "in", not "==": daemons retitle themselves (lldpd shows "lldpd: monitor."), and right
    # after spawn the process may still be the `ip netns exec … PROGRAM` that execs it.
    # An empty command line is no answer: /proc/PID/cmdline reads empty while the process
    # is in execve (ip netns exec -> env -> opensm), exactly when spawn's first poll
    # looks; calling it dead there failed `twin up`/`fault` under load (CI).
    line = command_line(p.pid)
    if p.command and line and p.command not in line:
        return False
    try:
        return "Z" not in Path(f"/proc/{p.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False


def wait_until(what: str, done: Callable[[], bool], timeout: float, interval: float = 0.2) -> float:
    """Poll ``done`` until true; seconds it took. Bounded in time and in polls."""
    start = time.monotonic()
    polls = int(timeout / interval) + 2
    for _ in range(polls):
        if done():
            return time.monotonic() - start
        if time.monotonic() - start > timeout:
            break
        time.sleep(interval)
    raise TwinFailure(f"{what}: not reached within {timeout:g} s")


# --------------------------------------------------------------------------- namespaces


def existing_namespaces() -> set[str]:
    """Names of every network namespace ``ip netns`` knows."""
    res = run(["ip", "netns", "list"], check=False)
    return {line.split()[0] for line in res.stdout.splitlines() if line.strip()}


def add_namespaces(names: Iterable[str]) -> None:
    """Create the namespaces (those that already exist are left as they are)."""
    have = existing_namespaces()
    for n in names:
        if n not in have:
            run(["ip", "netns", "add", n])
            run(["ip", "link", "set", "lo", "up"], netns=n)


def netns_pids(name: str) -> list[int]:
    """PIDs of every process inside namespace ``name`` (``ip netns pids``)."""
    res = run(["ip", "netns", "pids", name], check=False)
    return [int(x) for x in res.stdout.split() if x.isdigit()]


def _signal(pids: Iterable[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def stop_processes(
    procs: Sequence[Process],
    namespaces: Sequence[str],
    grace: float = 5.0,
    *,
    token: str | None = None,
) -> int:
    """Stop the recorded processes and everything inside the twin's namespaces.

    SIGTERM first, SIGKILL what is left after ``grace`` seconds. With ``token`` (what
    `down` gives), a recorded PID is signalled only if its environment carries it.
    Returns how many processes were signalled.
    """
    have = existing_namespaces() if namespaces else set()
    ns_list = [n for n in namespaces if n in have and n.startswith(PREFIX)]

    def targets() -> set[int]:
        pids = {p.pid for p in procs if alive(p) and (token is None or carries_token(p.pid, token))}
        for n in ns_list:
            pids.update(netns_pids(n))
        pids.discard(os.getpid())
        return pids

    first = targets()
    _signal(first, signal.SIGTERM)
    with contextlib.suppress(TwinFailure):
        wait_until("processes to stop", lambda: not _reap_and_list(targets), grace, 0.1)
    left = targets()
    _signal(left, signal.SIGKILL)
    with contextlib.suppress(TwinFailure):
        wait_until("processes to die", lambda: not _reap_and_list(targets), 5.0, 0.1)
    return len(first)


def _reap_and_list(targets: Callable[[], set[int]]) -> set[int]:
    with contextlib.suppress(ChildProcessError, OSError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    return targets()


def delete_namespaces(names: Iterable[str]) -> int:
    """Delete the twin's namespaces (their veths go with them). Returns how many existed."""
    have = existing_namespaces()
    count = 0
    for n in names:
        if n in have and n.startswith(PREFIX):
            run(["ip", "netns", "delete", n], check=False)
            count += 1
    return count


def remove_paths(directory: Path, paths: Iterable[str], runtime_dir: str) -> None:
    """Remove the files and directories the twin wrote (and only those)."""
    root = directory.resolve()
    for rel in paths:
        p = directory / rel
        # Checked again here (check_state did it at load): a link swapped in since must not
        # take rmtree outside the twin directory.
        if Path(rel).is_absolute() or not p.resolve().is_relative_to(root) or p.resolve() == root:
            continue
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                p.unlink()
    rt = Path(runtime_dir)
    if runtime_dir and rt.parent == RUN_ROOT and rt.name.startswith(PREFIX):
        shutil.rmtree(rt, ignore_errors=True)
