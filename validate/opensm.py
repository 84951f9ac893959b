"""``opensm``: OpenSM 3.3.x itself reading every ``opensm-*.conf`` and partitions file.

OpenSM has no offline "check this config" mode: ``opensm -c FILE`` only *writes* its
defaults, and without a local IB port it parses ``-F FILE`` and then exits ("No local
ports detected!") before it reads the partition file, which it parses at the first
sweep (``osm_prtn_make_partitions``). So each run brings up a two-node subnet on ibsim
(a switch and one HCA, as the twin does: ``ibsim-run``'s ``LD_PRELOAD`` of
libumad2sim) and runs ``opensm -o`` (one sweep, then exit, ~0.3 s) with
``-F <the conf> -P <the scenario's partitions file>``. What OpenSM 3.3.23 says, and
how each is read here:

* config file (its stdout): `` Unrecognized token: "key"`` (unknown key, or a line that
  is not ``key value``), ``-E- Parsing error in field …`` (a non-number where it wants
  one), ``Invalid Cached Option Value:…:Using Default`` (out of range) — rejections;
* log (``-f``), level 0x01 lines of the config steps: ``setup_routing_engine: cannot
  find or setup routing engine 'x'`` and the partition parser's ``PARSE ERROR: line N:
  …`` — rejections (``PARSE ERROR`` is the partition file's, the rest the conf's).
  Other errors (``ftree: cannot build lid matrices``) are the toy subnet's, not the
  file's, and are ignored.

Known exceptions, not rejections: files whose header says ``OpenSM build: NVIDIA`` target
NVIDIA's OpenSM (UFM / MLNX_OFED), which has keys upstream 3.3.23 lacks. The renderer
emits ``virt_enabled`` and ``sharp_enabled`` (and ``ar_*`` routing engines) only for that
build (fabric_stack/artifacts/opensm.py, which cites NVIDIA's UFM docs and marks
``virt_enabled`` UNVERIFIED: NVIDIA's OpenSM source is not public); upstream OpenSM's
option table (linux-rdma/opensm ``opensm/osm_subnet.c``, ``opt_tbl``) has none of them.
Each such finding is printed on stderr as a note, not counted as a rejection.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from validate.core import FileProblem

UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
"""libumad2sim (Debian ibsim-utils): the umad library that talks to ibsim instead of a HCA."""

NVIDIA_ONLY_KEYS = ("virt_enabled", "sharp_enabled")
"""NVIDIA OpenSM keys upstream 3.3.23 does not know (see the module doc for sources)."""

NVIDIA_HEADER = "# OpenSM build: NVIDIA"
"""How a rendered conf says it targets NVIDIA's OpenSM (fabric_stack/artifacts/opensm.py)."""

NET = 'Switch\t8 "Switch1"\n[1]\t"Hca1"[1]\n\nHca\t1 "Hca1"\n[1]\t"Switch1"[1]\n'
"""The smallest subnet OpenSM sweeps: one switch, one HCA (ibsim net-file format)."""

CONF_ERRORS = re.compile(
    r"Unrecognized token: .*|-E- Parsing error in field .*|Invalid Cached Option Value:.*"
)
LOG_ERRORS = re.compile(r" 0x01 -> ((?:setup_routing_engine|parse_part_conf): .*)")
_UNKNOWN = re.compile(r'Unrecognized token: "([^"]+)"')
_ENGINE = re.compile(r"routing engine '(ar_[a-z_]+)'")
_COUNTER = itertools.count()


class OpenSMValidator:
    """``opensm -o`` on ibsim with each rendered conf and the scenario's partitions file."""

    name = "opensm"
    tool = "opensm"

    def missing(self) -> str | None:
        """None when opensm, ibsim and libumad2sim are installed."""
        if shutil.which("opensm") is None or shutil.which("ibsim") is None:
            return "opensm and ibsim-utils are needed (scripts/validate-deps.sh)"
        if not os.path.exists(UMAD2SIM):
            return f"{UMAD2SIM} missing (Debian ibsim-utils)"
        return None

    def select(self, root: Path) -> list[Path]:
        """``infiniband/opensm-*.conf``, ``partitions.conf`` and ``partitions.conf.user_ext``."""
        ib = root / "infiniband"
        parts = [ib / n for n in ("partitions.conf", "partitions.conf.user_ext")]
        return [*sorted(ib.glob("opensm-*.conf")), *(p for p in parts if p.exists())]

    def check(self, root: Path, files: Sequence[Path]) -> list[FileProblem]:
        """One ``opensm -o`` per conf (each with the partitions file), under one ibsim."""
        confs = [f for f in files if f.name.startswith("opensm-")]
        parts = [f for f in files if f not in confs]
        runs: list[tuple[Path | None, Path | None]] = [
            (c, parts[0] if parts else None) for c in confs
        ]
        runs += [(None, p) for p in parts[1:]] if confs else [(None, p) for p in parts]
        found: dict[tuple[Path, str], None] = {}  # ordered; OpenSM says some things twice
        with ibsim() as sock:
            for conf, part in runs:
                found.update(dict.fromkeys(run_opensm(sock, conf, part)))
        problems = []
        for path, msg in found:
            if known_exception(path, msg):
                note(root, path, msg)
            else:
                problems.append(FileProblem(str(path.relative_to(root)), msg))
        return problems


@contextmanager
def ibsim() -> Iterator[str]:
    """A private ibsim (its own socket name) serving the two-node subnet; stopped after."""
    sock = f"fstval-{os.getpid()}-{next(_COUNTER)}"
    with tempfile.TemporaryDirectory(prefix="fst-ibsim-") as tmp:
        Path(tmp, "net").write_text(NET, encoding="utf-8")
        log = Path(tmp, "ibsim.log")
        with log.open("w") as out:
            proc = subprocess.Popen(
                ["ibsim", "-s", "-n", "net"], cwd=tmp, stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, env={**os.environ, "IBSIM_SOCKNAME": sock},
            )  # fmt: skip
        try:
            _wait_ready(log)
            yield sock
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_ready(log: Path) -> None:
    """Until ibsim has read its net file (it prints its limits, then serves)."""
    deadline = time.monotonic() + 10
    while "MaxMcastCap" not in log.read_text(errors="replace"):
        if time.monotonic() > deadline:
            raise RuntimeError(f"ibsim did not start: {log.read_text(errors='replace')[-300:]}")
        time.sleep(0.05)
    time.sleep(0.2)  # its socket is bound right after the banner


def run_opensm(sock: str, conf: Path | None, part: Path | None) -> list[tuple[Path, str]]:
    """One sweep; (file, OpenSM's message) for each config or partition complaint."""
    with tempfile.TemporaryDirectory(prefix="fst-opensm-") as tmp:
        argv = ["opensm", "-o", "-f", str(Path(tmp, "opensm.log"))]
        if conf is not None:
            # A copy with OpenSM's writable paths added after the file's own lines (line
            # numbers unchanged): it otherwise writes dumps and caches under /var.
            copy = Path(tmp, conf.name)
            extra = f"\ndump_files_dir {tmp}\n"
            copy.write_text(conf.read_text(encoding="utf-8") + extra, encoding="utf-8")
            argv += ["-F", str(copy)]
        if part is not None:
            argv += ["-P", str(part)]
        env = {**os.environ, "IBSIM_SOCKNAME": sock, "LD_PRELOAD": UMAD2SIM}
        try:
            res = subprocess.run(
                argv, cwd=tmp, env=env, capture_output=True, text=True, timeout=30, check=False
            )
            out = res.stdout + res.stderr
        except subprocess.TimeoutExpired as exc:  # parsing happens first: judge what it said
            out = _text(exc.stdout) + _text(exc.stderr)
        log = Path(tmp, "opensm.log")
        logged = log.read_text(errors="replace") if log.exists() else ""
    found: list[tuple[Path, str]] = []
    if conf is not None:
        found += [(conf, m.group(0).strip()) for m in CONF_ERRORS.finditer(out)]
    for m in LOG_ERRORS.finditer(logged):
        msg = m.group(1).strip()
        owner = part if "PARSE ERROR" in msg else conf
        if owner is not None:
            found.append((owner, msg))
    return found


def _text(data: bytes | str | None) -> str:
    if isinstance(data, bytes):
        return data.decode(errors="replace")
    return data or ""


def known_exception(path: Path, msg: str) -> bool:
    """An NVIDIA-only key or engine in a file that targets NVIDIA's OpenSM (not a defect)."""
    try:
        nvidia = NVIDIA_HEADER in path.read_text(encoding="utf-8")
    except OSError:
        return False
    unknown = _UNKNOWN.search(msg)
    engine = _ENGINE.search(msg)
    return nvidia and bool(
        (unknown and unknown.group(1) in NVIDIA_ONLY_KEYS) or (engine and "setup_routing" in msg)
    )


def note(root: Path, path: Path, msg: str) -> None:
    """Say, on stderr, which NVIDIA-only finding was not counted (and why)."""
    print(
        f"opensm: note: {root.name}  {path.relative_to(root)}: {msg} — NVIDIA OpenSM key, "
        "unknown to upstream 3.3.23; the file targets NVIDIA's build (known exception, "
        "not a rejection)",
        file=sys.stderr,
    )
