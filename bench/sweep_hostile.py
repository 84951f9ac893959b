"""The hostile-input sweep of issue #49: every hostile case through the real CLI.

Each case runs ``fabric-stack`` as a subprocess (the launcher, as the console script
does) under a wall-clock limit and ``RLIMIT_AS`` of 1 GiB (set in ``preexec_fn``),
against the misbehaving loopback servers of :mod:`tests.fault_servers` and the hostile
files of ``tests/unit/test_hostile_bounds.py``, plus the root-safety cases (a proxy on
plain HTTP, an ``--out-dir`` link or directory of another user, HUP/QUIT mid-write,
``PYTHONIOENCODING=ascii``, absurd ``COLUMNS``, escapes in names). It prints one line
per case and the totals: runs, tracebacks, hangs (killed at the limit), runs over 1 GB
(``MemoryError``/killed by the limit), secrets leaked (printed or sent to a proxy),
writes through another user's link or directory, litter (staging files, silent signal
deaths) and raw escapes printed.

``--repo PATH`` runs the CLI of another checkout (``PYTHONPATH=PATH``: e.g. ``main``
through ``git worktree add /tmp/sweep-main main``) with the servers of this one::

    nice python -m bench.sweep_hostile                     # this checkout
    nice python -m bench.sweep_hostile --repo /tmp/sweep-main

Root is needed for the other-user cases (``chown``); without it they are skipped.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from tests.fault_servers import (
    DEVICE_MODES,
    MODES,
    busy_netbox,
    faulty_netbox,
    loopback_proxy,
    silent_postgres,
    stalling_listener,
)

MEMORY_LIMIT = 1 << 30
"""RLIMIT_AS of every run: 1 GiB of address space."""
TOKEN = "nbt_sweepkey.SWEEPSECRET"
SECRET = "SWEEPSECRET"
PASSWORD = "pgSWEEPSECRET"
OTHER_UID = 65534
"""The 'another user' of the ownership cases (nobody)."""


@dataclass
class Case:
    """One run: a name, the arguments, extra environment, and what to prepare/check."""

    name: str
    args: list[str]
    env: dict[str, str] = field(default_factory=dict)
    prepare: Callable[[Path], None] | None = None
    server: Callable[[], contextlib.AbstractContextManager[str]] | None = None
    check: Callable[[Path, str, str], list[str]] | None = None
    signal_after: tuple[float, int] | None = None


@dataclass
class Result:
    """What one run did."""

    name: str
    code: int
    seconds: float
    traceback: bool
    hang: bool
    over_memory: bool
    problems: list[str]


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    os.setsid()


def run_case(case: Case, repo: Path, limit: float) -> Result:
    """Run one case in a fresh directory; kill its process group at ``limit`` seconds."""
    with tempfile.TemporaryDirectory(prefix="sweep-") as tmp:
        cwd = Path(tmp)
        if case.prepare:
            case.prepare(cwd)
        with case.server() if case.server else contextlib.nullcontext("") as base:
            args = [a.replace("{base}", base) for a in case.args]
            env = {**os.environ, "PYTHONPATH": str(repo), "NETBOX_TOKEN": TOKEN}
            env.update({k: v.replace("{base}", base) for k, v in case.env.items()})
            out, err = cwd / ".sweep-out", cwd / ".sweep-err"
            start = time.monotonic()
            with out.open("wb") as o, err.open("wb") as e:
                proc = subprocess.Popen(
                    [sys.executable, "-c", "import fabric_stack_launch as m; m.main()", *args],
                    cwd=cwd,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=o,
                    stderr=e,
                    preexec_fn=_limits,
                )
                hang = False
                signalled = False
                while proc.poll() is None:
                    now = time.monotonic() - start
                    if case.signal_after and not signalled and now >= case.signal_after[0]:
                        proc.send_signal(case.signal_after[1])
                        signalled = True
                    if now > limit:
                        hang = True
                        with contextlib.suppress(ProcessLookupError):
                            os.killpg(proc.pid, signal.SIGKILL)
                        proc.wait()
                        break
                    time.sleep(0.05)
            seconds = time.monotonic() - start
            stdout = out.read_bytes().decode(errors="replace")
            stderr = err.read_bytes().decode(errors="replace")
            out.unlink()
            err.unlink()
            code = proc.returncode
            problems = case.check(cwd, stdout, stderr) if case.check else []
            if SECRET in stdout + stderr:
                problems.append("secret printed")
            over = "MemoryError" in stderr or "Cannot allocate memory" in stderr
            return Result(
                case.name,
                code,
                seconds,
                "Traceback (most recent call last)" in stderr,
                hang,
                over,
                problems,
            )


# -- the cases -----------------------------------------------------------------------------


def _netbox_cases() -> list[Case]:
    commands = {
        "drift": ["drift", "--netbox", "{base}"],
        "adopt": ["adopt", "--netbox", "{base}"],
        "inventory": ["inventory", "--kind", "cable", "--format", "json", "--netbox", "{base}"],
    }
    cases = []
    for mode in (*MODES, *DEVICE_MODES):
        for name, args in commands.items():
            cases.append(
                Case(
                    f"netbox {mode} / {name}",
                    args,
                    env={"FABRIC_STACK_NETBOX_DEADLINE": "20"},
                    server=_faulty(mode),
                )
            )
    cases.append(
        Case("netbox accepts, never answers", commands["inventory"], server=_stalling_http)
    )
    for status in (429, 503):
        cases.append(
            Case(
                f"netbox {status} Retry-After: 2",
                commands["inventory"],
                server=_busy(status),
                check=_must_succeed,
            )
        )
    return cases


def _faulty(mode: str) -> Callable[[], contextlib.AbstractContextManager[str]]:
    @contextlib.contextmanager
    def server() -> Iterator[str]:
        with faulty_netbox(mode) as (base, _):
            yield base

    return server


def _busy(status: int) -> Callable[[], contextlib.AbstractContextManager[str]]:
    @contextlib.contextmanager
    def server() -> Iterator[str]:
        with busy_netbox(status, "2") as (base, _):
            yield base

    return server


@contextlib.contextmanager
def _stalling_http() -> Iterator[str]:
    with stalling_listener() as port:
        yield f"http://127.0.0.1:{port}"


@contextlib.contextmanager
def _silent_pg() -> Iterator[str]:
    with silent_postgres() as port:
        yield f"postgresql://fab:{PASSWORD}@127.0.0.1:{port}/inv"


def _must_succeed(cwd: Path, stdout: str, stderr: str) -> list[str]:
    return [] if "error:" not in stderr else ["did not succeed after Retry-After"]


def _postgres_cases() -> list[Case]:
    uri = "{base}"
    return [
        Case("postgres silent / inventory", ["inventory", "--inventory", uri], server=_silent_pg),
        Case(
            "postgres silent / drift",
            ["drift", "--config", "spec.yaml", "--inventory", uri],
            prepare=_spec(64),
            server=_silent_pg,
        ),
        Case(
            "postgres keyword string with password",
            ["inventory", "--inventory", f"host=127.0.0.1 port=9 user=fab password={PASSWORD}"],
        ),
    ]


def _spec(gpus: int, extra: dict[str, object] | None = None) -> Callable[[Path], None]:
    def prepare(cwd: Path) -> None:
        (cwd / "spec.yaml").write_text(yaml.safe_dump({"gpus": gpus, **(extra or {})}))

    return prepare


def _write(name: str, text: str) -> Callable[[Path], None]:
    def prepare(cwd: Path) -> None:
        (cwd / name).write_text(text)

    return prepare


PROFILE = {
    "name": "x",
    "gpus": 8,
    "rdma_nics": 8,
    "pcie_switches": [{"name": "p0", "numa": 0, "gpus": list(range(8)), "nics": list(range(8))}],
}


def _file_cases() -> list[Case]:
    cases = [
        Case(
            "hostlist bomb",
            ["drift", "--slurm-topology", "topology.conf"],
            prepare=_write("topology.conf", "SwitchName=s1 Nodes=n[0-999999999]\n"),
        ),
        Case(
            "job-hosts one enormous line",
            ["estimate", "--job-hosts", "hosts.txt"],
            prepare=_write("hosts.txt", "a" * 2_000_000 + "\n"),
        ),
    ]
    for fld in ("storage_ports", "inband_ports", "oob_ports", "gpus", "rdma_nics"):
        for cmd in ("size", "cabling", "layout"):
            cases.append(
                Case(
                    f"profile {fld}=10**40 / {cmd}",
                    [cmd, "--config", "spec.yaml"],
                    prepare=_spec(64, {"node_profile": {**PROFILE, fld: 10**40}}),
                )
            )
    for config in (["fabric:gpus", 64], "fabric:gpus=64"):
        cases.append(
            Case(
                f"stack config {type(config).__name__}",
                ["size", "--stack", "dev"],
                prepare=_write("Pulumi.dev.yaml", yaml.safe_dump({"config": config})),
            )
        )
    for value in ("nan", "inf"):
        cases.append(Case(f"--nvlink-gbs {value}", ["estimate", "--nvlink-gbs", value]))
    return cases


# -- root-safety cases ----------------------------------------------------------------------


def _proxy_cases() -> list[Case]:
    seen: list[list[tuple[str, dict[str, str]]]] = []

    @contextlib.contextmanager
    def server() -> Iterator[str]:
        with faulty_netbox("html-200") as (base, _), loopback_proxy() as (port, log):
            seen[:] = [log]  # the proxy's own list: the check reads it while it runs
            os.environ["http_proxy"] = f"http://127.0.0.1:{port}"
            try:
                yield base
            finally:
                del os.environ["http_proxy"]

    def check(cwd: Path, stdout: str, stderr: str) -> list[str]:
        return ["token sent to a plain-HTTP proxy"] if SECRET in repr(seen) else []

    args = ["inventory", "--kind", "cable", "--format", "json", "--netbox", "{base}"]
    return [Case("http NetBox through http_proxy", args, server=server, check=check)]


def _foreign_link(cwd: Path) -> None:
    victim = cwd / "victim"
    victim.mkdir()
    (cwd / "out").symlink_to(victim)
    os.lchown(cwd / "out", OTHER_UID, OTHER_UID)


def _foreign_dir(cwd: Path) -> None:
    (cwd / "out").mkdir()
    os.chown(cwd / "out", OTHER_UID, OTHER_UID)


def _nothing_in(sub: str) -> Callable[[Path, str, str], list[str]]:
    def check(cwd: Path, stdout: str, stderr: str) -> list[str]:
        d = cwd / sub
        return [f"wrote into another user's {sub}"] if d.is_dir() and any(d.iterdir()) else []

    return check


def _litter(cwd: Path, stdout: str, stderr: str) -> list[str]:
    left = [p.name for p in cwd.rglob("*") if p.name.endswith(".tmp")]
    problems = [f"left {len(left)} staging files"] if left else []
    if "interrupted:" not in stderr and "error:" not in stderr:
        problems.append("ended silently")
    return problems


def _no_escape(cwd: Path, stdout: str, stderr: str) -> list[str]:
    # The payloads of IB_ESCAPE that do harm: a window title (OSC), BEL, clearing the screen.
    bad = ("\x1b]", "\x07", "\x1b[2J")
    return ["printed a raw escape"] if any(b in stdout + stderr for b in bad) else []


IB_ESCAPE = """vendid=0x2c9
devid=0xd2f0
sysimgguid=0x1
switchguid=0x1(1)
Switch\t2 "S-0000000000000001"\t\t# "leaf\x1b]2;pwned\x07\x1b[31m" enhanced port 0 lid 1 lmc 0
[1]\t"H-0000000000000002"[1](2)\t\t# "node\x1b[2J" lid 2 4xNDR

vendid=0x2c9
devid=0x1021
sysimgguid=0x2
caguid=0x2
Ca\t1 "H-0000000000000002"\t\t# "node\x1b[2J mlx5_0"
[1](2)\t"S-0000000000000001"[1]\t\t# lid 2 lmc 0 "leaf\x1b]2;pwned\x07" lid 1 4xNDR
"""


def _safety_cases() -> list[Case]:
    big = ["--gpus", "32768"]
    cases = [
        *_proxy_cases(),
        Case(
            "escapes in names / adopt",
            ["adopt", "--ibnetdiscover", "ib.txt"],
            prepare=_write("ib.txt", IB_ESCAPE),
            check=_no_escape,
        ),
        Case(
            "escapes in names / drift",
            ["drift", "--config", "spec.yaml", "--ibnetdiscover", "ib.txt"],
            prepare=lambda c: (_spec(64)(c), _write("ib.txt", IB_ESCAPE)(c))[0],
            check=_no_escape,
        ),
        Case("PYTHONIOENCODING=ascii size", ["size", *big], env={"PYTHONIOENCODING": "ascii"}),
        Case("PYTHONIOENCODING=ascii cabling", ["cabling"], env={"PYTHONIOENCODING": "ascii"}),
        Case("COLUMNS=10**12 size", ["size", *big], env={"COLUMNS": str(10**12)}),
        Case("COLUMNS=-3 size", ["size"], env={"COLUMNS": "-3"}),
        Case("COLUMNS=abc whatif", ["whatif", "--fail", "spine-01"], env={"COLUMNS": "abc"}),
    ]
    if os.geteuid() == 0:
        cases += [
            Case(
                "--out-dir: another user's link",
                ["render", "all", "--out-dir", "out"],
                prepare=_foreign_link,
                check=_nothing_in("victim"),
            ),
            Case(
                "--out-dir: another user's directory",
                ["render", "all", "--out-dir", "out"],
                prepare=_foreign_dir,
                check=_nothing_in("out"),
            ),
        ]
    for sig in (signal.SIGHUP, signal.SIGQUIT, signal.SIGTERM, signal.SIGINT):
        cases.append(
            Case(
                f"{sig.name} mid-work / cabling --out",
                ["cabling", "--out", "plan.csv", *big],
                signal_after=(2.5, sig),
                check=_litter,
            )
        )
    return cases


def all_cases() -> list[Case]:
    """Every case of the sweep, in the order it runs them."""
    return [*_netbox_cases(), *_postgres_cases(), *_file_cases(), *_safety_cases()]


def main(argv: list[str] | None = None) -> int:
    """Run the sweep; print a line per case and the totals."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[1])
    ap.add_argument("--limit", type=float, default=45.0, help="seconds before a run is a hang")
    ap.add_argument("-k", default="", help="only cases whose name contains this")
    args = ap.parse_args(argv)
    cases = [c for c in all_cases() if args.k in c.name]
    results: list[Result] = []
    t0 = time.monotonic()
    for case in cases:
        r = run_case(case, args.repo.resolve(), args.limit)
        results.append(r)
        flags = [
            *(["TRACEBACK"] if r.traceback else []),
            *(["HANG"] if r.hang else []),
            *([">1GB"] if r.over_memory else []),
            *r.problems,
        ]
        print(f"{r.code:>4} {r.seconds:6.1f}s  {r.name}  {' '.join(flags)}", flush=True)
    problems = [p for r in results for p in r.problems]
    print(
        f"\n{args.repo}: {len(results)} runs in {time.monotonic() - t0:.0f} s: "
        f"{sum(r.traceback for r in results)} tracebacks, {sum(r.hang for r in results)} hangs, "
        f"{sum(r.over_memory for r in results)} over 1 GB, {len(problems)} other problems"
        + (f" ({'; '.join(sorted(set(problems)))})" if problems else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
