"""``host-scripts``: each ``hosts/<server>.sh`` run for real in a fresh network namespace.

The namespace gets a dummy interface for every rail netdev the plan says a server has
(:func:`~fabric_stack.artifacts._base.netdev_of`, the lookup the renderer uses: the
profile's names, ``--netdevs`` or the ``railN`` placeholders), then the script runs as
``ip netns exec NS bash -e FILE``: the kernel itself accepts or refuses every address,
route and rule, and a script naming an interface the host does not have stops with
``Cannot find device "mlx5_0"``, as it would on the server.

Sampling: every server's script has the same shape (its lines with the numbers taken
out), so the first and last server of each leaf run, plus any script whose shape differs
from every one that ran; :func:`shape` is computed for all files, which is what makes
the sample a proof rather than a guess.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

from fabric_stack import build_topology, size_fabric, validate_spec
from fabric_stack.artifacts import RenderContext
from fabric_stack.artifacts._base import netdev_of
from validate.core import FileProblem
from validate.matrix import scenario_named
from validate.nicqos import NIC_SUFFIX

WORKERS = 2
"""Namespaces set up at once: the CI box has 2 cores."""

_COUNTER = itertools.count()


class HostScriptValidator:
    """Host scripts executed in a network namespace with the profile's interface names."""

    name = "host-scripts"
    tool = "ip netns exec"

    def missing(self) -> str | None:
        """None when ``ip`` and ``bash`` exist and we may create namespaces (root)."""
        if shutil.which("ip") is None or shutil.which("bash") is None:
            return "iproute2 and bash are needed (scripts/validate-deps.sh)"
        if os.geteuid() != 0:
            return "network namespaces need root (run `make validate` as root, as CI does)"
        return None

    def select(self, root: Path) -> list[Path]:
        """Every ``hosts/*.sh`` of the scenario but the RoCE NIC QoS scripts (their tools need
        a ConnectX: family ``nic-scripts`` judges them)."""
        return sorted(f for f in (root / "hosts").glob("*.sh") if not f.name.endswith(NIC_SUFFIX))

    def check(self, root: Path, files: Sequence[Path]) -> list[FileProblem]:
        """Run the sample (see the module doc) and return each failing script's stderr.

        ``root`` is named after its matrix scenario (``python -m validate`` and the
        tests' ``rendered`` both lay it out so): the plan gives the interface names."""
        devs = rail_netdevs(root.name)
        run = sample(root.name, files)
        print(
            f"host-scripts: {root.name}: ran {len(run)} of {len(files)} script(s); the others "
            "have the shape of one that ran",
            file=sys.stderr,
        )
        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            found = pool.map(lambda f: run_script(root, f, devs), run)
        return [p for p in found if p is not None]


@lru_cache(maxsize=32)  # one plan per scenario, however many scripts
def _context(scenario: str) -> RenderContext:
    topo = build_topology(size_fabric(validate_spec(scenario_named(scenario).spec)))
    return RenderContext.from_topology(topo)


def rail_netdevs(scenario: str) -> tuple[str, ...]:
    """The rail interfaces a server of ``scenario`` has (what the renderer names them)."""
    ctx = _context(scenario)
    return tuple(netdev_of(ctx, nic) for nic in ctx.rail_nics())


def leaf_ends(scenario: str) -> set[str]:
    """The first and last server (plan order) behind each leaf."""
    by_leaf: dict[str, list[str]] = {}
    for h in _context(scenario).underlay.hosts:
        servers = by_leaf.setdefault(h.leaf, [])
        if h.server not in servers:
            servers.append(h.server)
    return {s for servers in by_leaf.values() for s in (servers[0], servers[-1])}


def shape(text: str) -> str:
    """A script with its numbers (addresses, tables, priorities, server names) taken out."""
    return re.sub(r"\d+", "N", text)


def sample(scenario: str, files: Sequence[Path]) -> list[Path]:
    """Each leaf's first and last server, plus every file whose shape none of those has."""
    ends = leaf_ends(scenario)
    chosen = [f for f in files if f.name.removesuffix(".sh") in ends]
    shapes = {shape(f.read_text(encoding="utf-8")) for f in chosen}
    for f in files:
        form = shape(f.read_text(encoding="utf-8"))
        if f not in chosen and form not in shapes:
            chosen.append(f)
            shapes.add(form)
    return chosen


def run_script(root: Path, path: Path, devs: Sequence[str]) -> FileProblem | None:
    """``bash -e`` the script in a new namespace holding dummy ``devs``; always clean up."""
    ns = f"fstval-{os.getpid()}-{next(_COUNTER)}"
    rel = str(path.relative_to(root))
    _ip("netns", "add", ns)
    try:
        add_interfaces(ns, devs)
        res = subprocess.run(
            ["ip", "netns", "exec", ns, "bash", "-e", str(path)],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    finally:
        _ip("netns", "del", ns)
    if res.returncode == 0:
        return None
    lines = [ln.strip() for ln in res.stderr.splitlines() if ln.strip()]
    return FileProblem(rel, " | ".join(lines) or f"exit {res.returncode}")


def add_interfaces(ns: str, devs: Sequence[str]) -> None:
    """The rail interfaces in ``ns``: dummies, or veths (peer up, so they have carrier)
    where the kernel has no dummy driver (some CI containers: "Unknown device type")."""
    try:
        _ip("-n", ns, "-batch", "-", stdin="".join(f"link add {d} type dummy\n" for d in devs))
        return
    except subprocess.CalledProcessError:
        pass
    batch = "".join(
        f"link add {d} type veth peer name fstpeer{i}\nlink set fstpeer{i} up\n"
        for i, d in enumerate(devs)
    )
    _ip("-n", ns, "-batch", "-", stdin=batch)


def _ip(*args: str, stdin: str | None = None) -> None:
    """Run ``ip`` (namespace bookkeeping); a failure here is ours, not the script's."""
    subprocess.run(["ip", *args], input=stdin, capture_output=True, text=True, check=True)
