"""``netplan``: netplan's own generator over every ``hosts/*.netplan.yaml``.

``netplan generate --root-dir DIR`` reads ``DIR/etc/netplan/*.yaml`` and writes the
systemd-networkd units under ``DIR/run/systemd/network``; the CLI is a thin wrapper
that runs netplan's ``generate`` binary with the same arguments (``netplan --debug
generate`` prints ``running ['/lib/netplan/generate', '--root-dir', …]``, netplan.io
0.106). That binary is run directly: the same parser and messages without a Python
start-up per file (~0.3 s CPU each, a few hundred files per matrix).

Every server's file names the same rail interfaces, and netplan merges files that
share a directory, so each file gets its own root (a small thread pool runs them).
A file is accepted when ``generate`` exits 0 *and* wrote a ``.network`` unit for each
of its interfaces (netplan skips nothing silently here, but a file that parses and
configures no interface would be a defect too).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

from validate.core import FileProblem

GENERATORS = ("/usr/libexec/netplan/generate", "/lib/netplan/generate", "/usr/lib/netplan/generate")
"""Where netplan.io installs the binary ``netplan generate`` runs (Debian 12: the first)."""

WORKERS = 2
"""Parallel ``generate`` runs: the CI box has 2 cores."""


class NetplanValidator:
    """``netplan generate`` on each host's netplan file, one private root per file."""

    name = "netplan"
    tool = "netplan generate"

    def missing(self) -> str | None:
        """None when netplan's generator is installed (scripts/validate-deps.sh: netplan.io)."""
        if generator() is None:
            return "netplan.io is not installed (scripts/validate-deps.sh)"
        return None

    def select(self, root: Path) -> list[Path]:
        """Every ``hosts/*.netplan.yaml`` of the scenario."""
        return sorted((root / "hosts").glob("*.netplan.yaml"))

    def check(self, root: Path, files: Sequence[Path]) -> list[FileProblem]:
        """Each file through ``generate`` in its own root; the problems, in file order."""
        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            found = pool.map(lambda f: judge_file(root, f), files)
        return [p for p in found if p is not None]


def generator() -> str | None:
    """Path of netplan's generate binary, or None."""
    return next((g for g in GENERATORS if os.access(g, os.X_OK)), None)


def judge_file(root: Path, path: Path) -> FileProblem | None:
    """Run ``generate`` on one file; its message, or a missing unit, as a problem."""
    rel = str(path.relative_to(root))
    gen = generator()
    assert gen is not None  # missing() ran first
    with tempfile.TemporaryDirectory(prefix="fst-netplan-") as tmp:
        conf = Path(tmp, "etc/netplan")
        conf.mkdir(parents=True)
        copy = conf / path.name
        shutil.copyfile(path, copy)
        copy.chmod(0o600)  # netplan warns about world-readable configs
        res = subprocess.run(
            [gen, "--root-dir", tmp], capture_output=True, text=True, timeout=60, check=False
        )
        if res.returncode != 0:
            return FileProblem(rel, _message(res.stderr, tmp, path) or f"exit {res.returncode}")
        units = Path(tmp, "run/systemd/network")
        absent = [i for i in interfaces(path) if not (units / f"10-netplan-{i}.network").exists()]
    if absent:
        return FileProblem(rel, f"no networkd unit generated for {', '.join(absent)}")
    return None


def interfaces(path: Path) -> list[str]:
    """The interface names a netplan file configures (``ethernets`` keys)."""
    try:
        # libyaml's loader: the pure-Python one takes ~0.15 s a file and holds the GIL
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        doc = yaml.load(path.read_text(encoding="utf-8"), Loader=loader) or {}
        return [str(k) for k in (doc.get("network", {}).get("ethernets") or {})]
    except (yaml.YAMLError, AttributeError):
        return []  # generate already judged the syntax


def _message(stderr: str, tmp: str, path: Path) -> str:
    """netplan's message on one line, with the temporary path put back to the file's name."""
    lines = [
        ln.strip()
        for ln in stderr.replace(str(Path(tmp, "etc/netplan", path.name)), path.name).splitlines()
    ]
    return " | ".join(ln for ln in lines if ln and ln != "^")
