"""``nic-scripts``: the RoCE NIC QoS scripts (``hosts/<server>.roce-qos.sh``) parsed by
``sh -n`` and judged by shellcheck (POSIX sh).

Their commands (``mlnx_qos``, ``cma_roce_tos``, the mlx5 ECN sysfs) need a ConnectX and
MLNX_OFED/DOCA-OFED, which no machine here has: so this family checks the script as a
script, not what the NIC does with it (the file says UNVERIFIED on hardware). shellcheck is
Debian's ``shellcheck`` (scripts/validate-deps.sh); one call judges every script.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from validate.core import FileProblem

NIC_SUFFIX = ".roce-qos.sh"
"""The NIC QoS scripts' file name suffix (``fabric_stack.artifacts.hosts_roce.SUFFIX``)."""


class NicScriptValidator:
    """``sh -n`` and ``shellcheck -s sh`` over every NIC QoS script."""

    name = "nic-scripts"
    tool = "sh -n + shellcheck"

    def missing(self) -> str | None:
        """Why the tools cannot run (and what installs them), or None."""
        if shutil.which("sh") is None:
            return "no sh on PATH"
        if shutil.which("shellcheck") is None:
            return "shellcheck not found: run bash scripts/validate-deps.sh (Debian shellcheck)"
        return None

    def select(self, root: Path) -> list[Path]:
        """Every ``hosts/*.roce-qos.sh`` of the scenario."""
        return sorted((root / "hosts").glob(f"*{NIC_SUFFIX}"))

    def check(self, root: Path, files: Sequence[Path]) -> list[FileProblem]:
        """One problem per script ``sh -n`` refuses, and one per shellcheck finding."""
        out = []
        for f in files:
            r = subprocess.run(["sh", "-n", str(f)], capture_output=True, text=True)
            if r.returncode != 0:
                out.append(FileProblem(str(f.relative_to(root)), r.stderr.strip()))
        if files:
            sc = ["shellcheck", "-s", "sh", "-f", "gcc", *(str(f) for f in files)]
            r = subprocess.run(sc, capture_output=True, text=True)
            for line in r.stdout.splitlines():
                path, _, rest = line.partition(":")
                rel = str(Path(path).relative_to(root)) if path.startswith(str(root)) else path
                out.append(FileProblem(rel, rest.strip()))
        return out
