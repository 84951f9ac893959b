"""The CrossGuard pack with the real CLI: a good stack previews clean, each bad
config fails preview with its mandatory violation and a non-zero exit."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.pulumi_project import REPO_ROOT, make_project, pulumi

pytestmark = [pytest.mark.pulumi, pytest.mark.slow]

PACK = str(REPO_ROOT / "policies")

SWAPPED_PCIE = {
    "name": "swapped",
    "gpus": 8,
    "rdmaNics": 8,
    "pcieSwitches": [
        {"name": "pcie0", "numa": 0, "gpus": [0, 1], "nics": [0, 2]},
        {"name": "pcie1", "numa": 0, "gpus": [2, 3], "nics": [1, 3]},
        {"name": "pcie2", "numa": 1, "gpus": [4, 5], "nics": [4, 5]},
        {"name": "pcie3", "numa": 1, "gpus": [6, 7], "nics": [6, 7]},
    ],
}

BAD = {
    "oversubscribed": (
        {"fabric:oversubscription": "2:1"},
        "oversubscription-1-to-1",
        "42×400G down, 21×400G up (2:1); 1:1 required",
    ),
    "pcie-locality": (
        {"fabric:nodeProfile": SWAPPED_PCIE},
        "gpudirect-pcie-locality",
        "GPU 1 is on PCIe switch pcie0 but its RDMA NIC mlx5_1 is on pcie1",
    ),
    "storage-on-compute": (
        {"fabric:networks": {"storage": {"attach": "compute"}}},
        "network-separation",
        "storage VLAN 200 is carried by",
    ),
    "vlan-reuse": (
        {"fabric:networks": {"storage": {"vlan": 300}}},
        "network-separation",
        "VLAN 300 is also",
    ),
}


def _project(tmp_path: Path, env: dict[str, str], config: dict[str, object]) -> Path:
    proj = make_project(tmp_path)
    pulumi(proj, env, "stack", "init", "pol")
    stack_file = proj / "Pulumi.pol.yaml"
    data = yaml.safe_load(stack_file.read_text()) or {}
    data.setdefault("config", {}).update(
        {"fabric:gpus": 512, "fabric:inventory": f"sqlite:///{tmp_path / 'inv.db'}", **config}
    )
    stack_file.write_text(yaml.safe_dump(data))
    return proj


def test_good_stack_previews_clean_with_the_pack(
    tmp_path: Path, pulumi_env: dict[str, str]
) -> None:
    proj = _project(tmp_path, pulumi_env, {})
    r = pulumi(proj, pulumi_env, "preview", "--policy-pack", PACK)
    assert "fabric-stack@v" in r.stdout, r.stdout[-3000:]
    assert "mandatory" not in r.stdout


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_config_fails_preview(case: str, tmp_path: Path, pulumi_env: dict[str, str]) -> None:
    config, rule, text = BAD[case]
    proj = _project(tmp_path, pulumi_env, config)
    r = pulumi(proj, pulumi_env, "preview", "--policy-pack", PACK, check=False)
    out = r.stdout + r.stderr
    assert r.returncode != 0, out[-3000:]
    assert rule in out and "mandatory" in out, out[-3000:]
    assert text in out, out[-3000:]


def test_nic_beyond_its_model_is_refused_with_the_config_key(
    tmp_path: Path, pulumi_env: dict[str, str]
) -> None:
    proj = _project(tmp_path, pulumi_env, {"fabric:nodeProfile": "dgx-h100", "fabric:nicGbps": 800})
    r = pulumi(proj, pulumi_env, "preview", "--policy-pack", PACK, check=False)
    out = r.stdout + r.stderr
    assert r.returncode != 0, out[-3000:]
    assert "fabric:nicGbps: 800 Gb/s is more than the ConnectX-7 of node profile 'dgx-h100'" in out
    assert "Traceback" not in out
