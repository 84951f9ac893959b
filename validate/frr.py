"""The FRR family: every ``frr/*.conf`` judged by FRR's own parser, twice.

Two tools, both from the Debian packages scripts/validate-deps.sh installs (``frr``,
``frr-pythontools``; FRR 8.4.4 on Debian 12), each run once per file:

* ``vtysh --dryrun --config_dir DIR -f FILE``: vtysh parses the file with the CLI
  grammar of every daemon compiled in, without connecting to any daemon
  (``-C, --dryrun  Check configuration for validity and exit`` in ``vtysh --help``).
  It prints each rejected line on stderr (``line 272: % Unknown command[17]:  mtu
  9000``) and exits non-zero (2 for an unknown command).
* ``frr-reload.py --test --stdout --input EMPTY FILE``: the script every real reload
  path uses (Cumulus, SONiC, ``systemctl reload frr``). ``--test`` only shows the
  deltas, but it reads the running config with ``vtysh -c 'show running-config'``,
  which fails with no daemons ("Exiting: failed to connect to any daemons"). ``--input
  EMPTY`` makes it read the running config from an empty file instead (``--input
  INPUT  Read running config from file instead of "show running"``), so it parses the
  new file alone: ``Config.load_from_file`` runs ``vtysh -m -f FILE`` (mark mode) and,
  when vtysh fails, logs ``ERROR: vtysh failed to process new configuration: ...``
  with vtysh's stderr as a Python bytes literal on the next line, then exits 1 at the
  end (``if not reload_ok: sys.exit(1)``, /usr/lib/frr/frr-reload.py). ``--stdout``
  sends that log to stdout rather than /var/log/frr/frr-reload.log.

Both tools get a private config directory holding only ``vtysh.conf`` (``service
integrated-vtysh-config``, as a switch has) and the empty running config, so neither
reads the host's /etc/frr (mode 0750, group frr) nor needs the ``frrvty`` group or a
running daemon. The files are independent, so they are judged by a small thread pool
(each job is a short subprocess).
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from validate.core import FileProblem

VTYSH = "vtysh"
FRR_RELOAD = Path("/usr/lib/frr/frr-reload.py")
DEPS = "run scripts/validate-deps.sh as root (installs frr and frr-pythontools)"
WORKERS = 4
"""Subprocesses at once: each is short and mostly startup, so a few overlap usefully."""
TIMEOUT_S = 60.0
VTYSH_FAILED = "vtysh failed to process new configuration"
"""frr-reload.py's log line when vtysh rejects the new file (its stderr follows)."""
LINE_MESSAGE = re.compile(r"line \d+: ")
"""vtysh's form for a complaint about one line of the file."""
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def vtysh_problems(out: str, rc: int) -> list[str]:
    """vtysh's own message lines for a rejected file (exit status ``rc``), else []."""
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    if rc == 0:  # an accepted file may still carry a per-line complaint
        return [f"vtysh: {ln}" for ln in lines if LINE_MESSAGE.match(ln)]
    return [f"vtysh: {ln}" for ln in lines] or [f"vtysh: exit {rc} without a message"]


def reload_problems(out: str, rc: int) -> list[str]:
    """frr-reload.py's verdict: vtysh's lines it quotes, its other errors, or its exit."""
    lines = [ANSI.sub("", ln) for ln in out.splitlines()]
    found: list[str] = []
    for i, ln in enumerate(lines):
        if VTYSH_FAILED in ln and i + 1 < len(lines):
            found += _quoted(lines[i + 1])
        elif " ERROR:" in ln:
            found.append(ln.split(" ERROR:", 1)[1].strip())
    if rc != 0 and not found:
        tail = [ln.strip() for ln in lines if ln.strip()][-1:] or ["no output"]
        found.append(f"exit {rc}: {tail[0]}")
    return [f"frr-reload.py: {m}" for m in found]


def _quoted(text: str) -> list[str]:
    """The lines of the ``b'...'`` literal frr-reload.py logs (vtysh's stderr)."""
    try:
        raw = ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        return [text.strip()]
    decoded = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    return [ln.strip() for ln in decoded.splitlines() if ln.strip()]


def _run(argv: Sequence[str]) -> tuple[str, int]:
    """Run a tool; its stdout and stderr together, and its exit status."""
    try:
        res = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return f"did not finish within {TIMEOUT_S:g} s", 124
    return res.stdout + res.stderr, res.returncode


def config_dir(base: Path) -> Path:
    """A private FRR config directory: ``vtysh.conf`` and an empty running config."""
    d = base / "etc-frr"
    d.mkdir()
    (d / "vtysh.conf").write_text("service integrated-vtysh-config\n", encoding="utf-8")
    (d / "running.conf").write_text("", encoding="utf-8")
    return d


def judge_file(conf: Path, d: Path) -> list[str]:
    """Both tools over one file: every message, vtysh's first."""
    out, rc = _run([VTYSH, "--config_dir", str(d), "--dryrun", "--inputfile", str(conf)])
    problems = vtysh_problems(out, rc)
    reload_argv = [
        str(FRR_RELOAD), "--test", "--stdout",
        "--bindir", str(Path(shutil.which(VTYSH) or "/usr/bin/vtysh").parent),
        "--confdir", str(d), "--rundir", str(d),
        "--input", str(d / "running.conf"), str(conf),
    ]  # fmt: skip
    out, rc = _run(reload_argv)
    return problems + reload_problems(out, rc)


class FrrValidator:
    """``frr/*.conf`` by ``vtysh --dryrun`` and ``frr-reload.py --test``."""

    name = "frr"
    tool = "vtysh --dryrun, frr-reload.py --test"

    def missing(self) -> str | None:
        """Why vtysh or frr-reload.py cannot run here, or None."""
        if shutil.which(VTYSH) is None:
            return f"vtysh not found on PATH; {DEPS}"
        if not os.access(FRR_RELOAD, os.X_OK):
            return f"{FRR_RELOAD} not found; {DEPS}"
        return None

    def select(self, root: Path) -> list[Path]:
        """Every rendered FRR integrated config: ``frr/<switch>.conf`` and the SONiC target's
        ``sonic/<switch>/frr.conf`` (the same BGP with SONiC's interface names)."""
        return sorted((root / "frr").glob("*.conf")) + sorted((root / "sonic").glob("*/frr.conf"))

    def check(self, root: Path, files: Sequence[Path]) -> list[FileProblem]:
        """Both tools over every file (a few at once); one problem per message line."""
        with tempfile.TemporaryDirectory(prefix="validate-frr-") as tmp:
            d = config_dir(Path(tmp))
            with ThreadPoolExecutor(max_workers=WORKERS) as pool:
                verdicts = list(pool.map(lambda f: judge_file(f, d), files))
        return [
            FileProblem(_rel(root, f), message)
            for f, messages in zip(files, verdicts, strict=True)
            for message in messages
        ]


def _rel(root: Path, f: Path) -> str:
    """``f`` relative to the scenario root where it lies under it."""
    try:
        return str(f.relative_to(root))
    except ValueError:
        return str(f)


FRR = FrrValidator()
"""The instance the registry and the planted-defect tests share."""
