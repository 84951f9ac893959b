"""Host files (netplan, ip scripts) and OpenSM files: the real tools reject a planted defect
of each kind with their own message (#26); `make validate` judges every rendered file."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.validate.conftest import judge, rendered, require
from validate.hostns import HostScriptValidator
from validate.netplan import NetplanValidator
from validate.opensm import OpenSMValidator

pytestmark = pytest.mark.validate

NETPLAN = NetplanValidator()
SCRIPTS = HostScriptValidator()
OPENSM = OpenSMValidator()


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_netplan_rejects_a_bad_key(tmp_path: Path) -> None:
    require(NETPLAN)
    root = rendered(tmp_path, "roce-128")
    rel = "hosts/su1-node02.netplan.yaml"
    _edit(root / rel, "      mtu: 9000", "      mtux: 9000")
    [problem] = judge(NETPLAN, root, rel)
    assert problem.file == rel
    assert "unknown key 'mtux'" in problem.message


def test_host_script_naming_an_rdma_device_stops(tmp_path: Path) -> None:
    # The defect of #26: an RDMA device name where the host has a netdev.
    require(SCRIPTS)
    root = rendered(tmp_path, "dgx-h100-roce")
    rel = "hosts/su1-node05.sh"  # not a leaf's first or last server: runs by its new shape
    path = root / rel
    path.write_text(path.read_text(encoding="utf-8").replace("enp24s0np0", "mlx5_0"))
    problems = judge(SCRIPTS, root, rel)
    assert [p.file for p in problems] == [rel]
    assert 'Cannot find device "mlx5_0"' in problems[0].message


def test_rendered_opensm_files_are_accepted_nvidia_keys_noted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require(OPENSM)
    root = rendered(tmp_path, "ib-seed")
    assert [p.relative_to(root).as_posix() for p in OPENSM.select(root)] == [
        "infiniband/opensm-ufm-1.conf",
        "infiniband/opensm-ufm-2.conf",
        "infiniband/partitions.conf.user_ext",
    ]
    assert judge(OPENSM, root) == []
    # virt_enabled: NVIDIA's OpenSM key, unknown upstream: a sourced note, not a rejection
    assert 'Unrecognized token: "virt_enabled"' in capsys.readouterr().err


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("sm_priorty 15", 'Unrecognized token: "sm_priorty"'),
        ("sm_priority abc", "-E- Parsing error in field sm_priority"),
        ("routing_engine bogus", "cannot find or setup routing engine 'bogus'"),
    ],
)
def test_opensm_rejects_an_unknown_or_garbled_option(
    tmp_path: Path, line: str, message: str
) -> None:
    require(OPENSM)
    root = rendered(tmp_path, "ib-seed")
    rel = "infiniband/opensm-ufm-1.conf"
    with (root / rel).open("a", encoding="utf-8") as f:
        f.write(f"{line}\n")
    problems = judge(OPENSM, root, rel)
    assert [p.file for p in problems] == [rel]
    assert message in problems[0].message


def test_opensm_rejects_a_partition_syntax_error(tmp_path: Path) -> None:
    require(OPENSM)
    root = rendered(tmp_path, "ib-seed")
    rel = "infiniband/partitions.conf.user_ext"
    with (root / rel).open("a", encoding="utf-8") as f:
        f.write("Storage=0x0010 ipoib : ALL\n")  # no comma before the flag, no ';'
    lineno = len((root / rel).read_text(encoding="utf-8").splitlines())
    problems = judge(OPENSM, root, rel)
    assert [p.file for p in problems] == [rel]
    assert f"PARSE ERROR: line {lineno}: bad partition definition" in problems[0].message
