"""SONiC families: a planted defect in roce-128's config_db.json of each kind rejected by
SONiC's YANG (libyang) or its SN5600 buffer defaults, with the tool's own words
(`make validate` judges every rendered file)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.integration.validate.conftest import judge, rendered, require
from validate.registry import VALIDATORS

pytestmark = pytest.mark.validate

LEAF = "sonic/su1-r1-leaf/config_db.json"
YANG = VALIDATORS["sonic-yang"]
DEFAULTS = VALIDATORS["sonic-defaults"]


@pytest.fixture(scope="module")
def roce128(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """roce-128 rendered once for the module."""
    return rendered(tmp_path_factory.mktemp("sonic"), "roce-128")


def _plant(root: Path, change: Any) -> Path:
    """A copy of the leaf's config_db.json (with its tables.json) changed by ``change``."""
    src = root / LEAF
    dst = root.parent / "planted" / LEAF
    dst.parent.mkdir(parents=True, exist_ok=True)
    db = json.loads(src.read_text())
    change(db)
    dst.write_text(json.dumps(db))
    dst.with_name("tables.json").write_text(src.with_name("tables.json").read_text())
    return dst.parents[2]


def test_every_switch_selected(roce128: Path) -> None:
    """`make validate` judges every switch's config_db.json (both families select all 12)."""
    assert len(YANG.select(roce128)) == len(DEFAULTS.select(roce128)) == 12


def test_port_speed_banana_rejected_by_libyang(roce128: Path) -> None:
    require(YANG)
    root = _plant(roce128, lambda db: db["PORT"]["Ethernet0"].update(speed="banana"))
    problems = judge(YANG, root, LEAF)
    assert [p.file for p in problems] == [LEAF]
    assert problems[0].message.startswith('Invalid type uint32 value "banana".')
    assert "PORT_LIST[name='Ethernet0']/speed" in problems[0].message


def test_vlan_member_of_a_missing_port_rejected_by_libyang(roce128: Path) -> None:
    require(YANG)
    row = {"tagging_mode": "untagged"}
    root = _plant(roce128, lambda db: db["VLAN_MEMBER"].update({"Vlan101|Ethernet999": row}))
    (problem,) = judge(YANG, root, LEAF)
    assert 'Invalid union value "Ethernet999"' in problem.message


def test_unknown_table_rejected(roce128: Path) -> None:
    require(YANG)
    root = _plant(roce128, lambda db: db.update(ROCE_MAGIC={"x": {"a": "b"}}))
    problems = judge(YANG, root, LEAF)
    assert [p.message for p in problems] == [
        "table ROCE_MAGIC: no SONiC YANG model defines it (sonic_yang crops it)"
    ]


def test_buffer_pool_size_changed_rejected_by_the_defaults(roce128: Path) -> None:
    require(DEFAULTS)
    pool = {"egress_lossless_pool": {"size": "1000", "type": "egress", "mode": "dynamic"}}
    root = _plant(roce128, lambda db: db.update(BUFFER_POOL=pool))
    (problem,) = judge(DEFAULTS, root, LEAF)
    assert problem.message.startswith(
        "BUFFER_POOL|egress_lossless_pool: size '1000' differs from SONiC's default "
        "'158229504' (Mellanox-SN5600-O128/buffers_dynamic.json.j2"
    )


def test_pfc_without_lossless_pg_rejected_by_the_defaults(roce128: Path) -> None:
    require(DEFAULTS)

    def pfc_on_5(db: dict[str, Any]) -> None:
        db["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] = "3,5"

    root = _plant(roce128, pfc_on_5)
    (problem,) = judge(DEFAULTS, root, LEAF)
    assert problem.message.startswith(
        "PORT_QOS_MAP|Ethernet0: PFC on priority 5 (PG 0) but no lossless BUFFER_PG for PG 0"
    )


def test_port_outside_port_config_rejected_by_the_defaults(roce128: Path) -> None:
    require(DEFAULTS)

    def rename(db: dict[str, Any]) -> None:
        db["PORT"]["Ethernet2"] = db["PORT"].pop("Ethernet0")

    root = _plant(roce128, rename)
    problems = [p.message for p in judge(DEFAULTS, root, LEAF)]
    assert problems == ["PORT|Ethernet2: not a port of Mellanox-SN5600-O128/port_config.ini"]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """roce-800g-uplinks (400G host ports, 800G uplinks: BREAKOUT_CFG) rendered once."""
    return rendered(tmp_path_factory.mktemp("sonic-dpb"), "roce-800g-uplinks")


def test_a_breakout_mode_the_cage_lacks_rejected_by_sonics_breakout_code(mixed: Path) -> None:
    require(DEFAULTS)
    bad = {"brkout_mode": "8x100G"}
    root = _plant(mixed, lambda db: db["BREAKOUT_CFG"].update(Ethernet8=bad))
    problems = [p.message for p in judge(DEFAULTS, root, LEAF)]
    assert any(
        m.startswith("BREAKOUT_CFG|Ethernet8: Unsupported breakout mode 8x100G! ") for m in problems
    )
    assert any(m.startswith("BREAKOUT_CFG|Ethernet8: '8x100G' is not one of") for m in problems)
    # Its two 400G ports are then no port SONiC derives.
    assert any(m.startswith("PORT|Ethernet12: SONiC derives no such port") for m in problems)


def test_a_port_named_for_the_wrong_mode_rejected_by_sonics_breakout_code(mixed: Path) -> None:
    require(DEFAULTS)
    mode = "1x800G[400G,200G,100G,50G,40G,25G,10G]"
    root = _plant(mixed, lambda db: db["BREAKOUT_CFG"].update(Ethernet0={"brkout_mode": mode}))
    problems = [p.message for p in judge(DEFAULTS, root, LEAF)]
    want = (
        f"PORT|Ethernet0: alias 'etp1a' is not 'etp1', what SONiC derives for Ethernet0 in {mode}"
    )
    assert any(m.startswith(want) for m in problems)
    assert any(m.startswith("PORT|Ethernet4: SONiC derives no such port") for m in problems)


def test_an_overlong_breakout_mode_rejected_by_libyang(mixed: Path) -> None:
    require(YANG)
    root = _plant(mixed, lambda db: db["BREAKOUT_CFG"].update(Ethernet0={"brkout_mode": "x" * 65}))
    (problem,) = judge(YANG, root, LEAF)
    assert "BREAKOUT_CFG_LIST[port='Ethernet0']/brkout_mode" in problem.message
