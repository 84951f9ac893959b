"""The twin judges each rendered frr.conf with FRR's parser before any daemon starts (#26):
a rejected line fails ``twin up`` with vtysh's own words."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from fabric_stack.twin import ops_frr
from fabric_stack.twin.model import TwinState
from fabric_stack.twin.wiring import TwinFailure

BAD_LINE = "line 272: % Unknown command[17]:  mtu 9000"


def twin_state(runtime: Path) -> TwinState:
    """A minimal Ethernet twin state whose runtime directory is ``runtime``."""
    return TwinState(
        tag="t1", fabric="ethernet", spec={}, created_dir=False, runtime_dir=str(runtime)
    )


def write_conf(state: TwinState, name: str, text: str) -> Path:
    """``text`` as ``name``'s frr.conf where the twin keeps it."""
    d = Path(state.runtime_dir) / name / "frr"
    d.mkdir(parents=True)
    (d / "vtysh.conf").write_text("service integrated-vtysh-config\n", encoding="utf-8")
    (d / "frr.conf").write_text(text, encoding="utf-8")
    return d


def fake_run(rc: int, stderr: str, seen: list[list[str]]) -> Any:
    """A stand-in for :func:`fabric_stack.twin.runtime.run` that records each argv."""

    def run(argv: Sequence[str], **_: Any) -> subprocess.CompletedProcess[str]:
        seen.append(list(argv))
        return subprocess.CompletedProcess(list(argv), rc, "", stderr)

    return run


def test_rejected_line_fails_with_vtysh_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Exit status 2 from vtysh → TwinFailure naming the file and vtysh's line."""
    state = twin_state(tmp_path)
    d = write_conf(state, "su1-r1-leaf", "interface vlan101\n mtu 9000\nexit\n")
    seen: list[list[str]] = []
    monkeypatch.setattr(ops_frr, "run", fake_run(2, BAD_LINE + "\n", seen))
    with pytest.raises(TwinFailure, match=r"frr/su1-r1-leaf\.conf.*exit 2.*Unknown command"):
        ops_frr.check_conf(state, "su1-r1-leaf")
    assert seen == [["vtysh", "--config_dir", str(d), "--dryrun", "-f", str(d / "frr.conf")]]


def test_accepted_file_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Exit status 0 → nothing raised."""
    state = twin_state(tmp_path)
    write_conf(state, "spine-01", "hostname spine-01\n")
    monkeypatch.setattr(ops_frr, "run", fake_run(0, "", []))
    ops_frr.check_conf(state, "spine-01")


@pytest.mark.skipif(shutil.which("vtysh") is None, reason="vtysh not installed (FRR)")
def test_real_vtysh_rejects_interface_mtu(tmp_path: Path) -> None:
    """The real parser (no daemon needed): the defect of #26 fails with FRR's own line."""
    state = twin_state(tmp_path)
    write_conf(state, "leaf", "interface vlan101\n ip address 10.64.0.1/26\n mtu 9000\nexit\n")
    with pytest.raises(TwinFailure, match=r"line 3: % Unknown command\[\d+\]:  mtu 9000"):
        ops_frr.check_conf(state, "leaf")
    write_conf(state, "ok", "interface vlan101\n ip address 10.64.0.1/26\nexit\n")
    ops_frr.check_conf(state, "ok")
