"""SONiC dynamic port breakout on a mixed leaf (issue #43): ports derived from the SN5600's
``platform.json`` (../shared/schemas, sonic-net/sonic-buildimage@086b03bd70f9) for each
cage's mode, and what ``render sonic`` writes for them."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from click.testing import CliRunner

from fabric_stack.artifacts import sonic
from fabric_stack.cli import main
from fabric_stack.hardware.switches import CATALOG, SN5600_SONIC
from fabric_stack.nos.sonic import breakout_mode, parse_breakout_mode, sonic_parent, sonic_port
from tests.golden_artifacts import context
from validate.schemas import shared_schemas
from validate.sonic_breakout import Reimplemented, SonicCode, deriver, source_text

SN5600 = shared_schemas() / "sonic" / "device" / "mellanox" / "x86_64-nvidia_sn5600-r0"
MIXED = {"fabric": "roce", "switch": "sn5600", "gpus": 128, "uplink_gbps": 800}
"""A small mixed RoCE plan: 400G host ports two per cage, 800G uplinks one per cage."""
M800, M400, M200 = SN5600_SONIC.breakout_modes

needs_platform = pytest.mark.skipif(
    not (SN5600 / "platform.json").is_file(), reason="no SN5600 platform.json in ../shared"
)


@cache
def _platform() -> dict[str, Any]:
    data = json.loads((SN5600 / "platform.json").read_text())["interfaces"]
    assert isinstance(data, dict)
    return data


@needs_platform
def test_a_cage_in_2x400g_gives_two_ports_and_in_1x800g_one() -> None:
    cage = _platform()["Ethernet184"]  # cage 24
    two, speeds = Reimplemented().child_ports("Ethernet184", M400, cage)
    assert {n: (r["lanes"], r["alias"], r["speed"]) for n, r in two.items()} == {
        "Ethernet184": ("184,185,186,187", "etp24a", "400000"),
        "Ethernet188": ("188,189,190,191", "etp24b", "400000"),
    }
    assert "100000" not in speeds and {400000, 200000, 100000} <= speeds
    one, _ = Reimplemented().child_ports("Ethernet184", M800, cage)
    assert {n: (r["lanes"], r["alias"], r["fec"]) for n, r in one.items()} == {
        "Ethernet184": ("184,185,186,187,188,189,190,191", "etp24", "rs")
    }
    with pytest.raises(RuntimeError, match="Unsupported breakout mode 8x100G"):
        Reimplemented().child_ports("Ethernet184", "8x100G", cage)


@needs_platform
def test_the_catalogs_modes_and_names_are_platform_jsons() -> None:
    """Every OSFP cage offers exactly the catalog's modes, and :func:`sonic_port` names,
    lanes and aliases every port of every mode as SONiC's breakout code derives it."""
    cages = {k: v for k, v in _platform().items() if len(v["lanes"].split(",")) == 8}
    assert len(cages) == CATALOG["sn5600"].cages == 64
    for cage, (parent, props) in enumerate(cages.items(), start=1):
        assert parent == sonic_parent(SN5600_SONIC.lanes_per_cage, cage)
        assert tuple(props["breakout_modes"]) == SN5600_SONIC.breakout_modes
        for mode in SN5600_SONIC.breakout_modes:
            parsed = parse_breakout_mode(mode)
            assert parsed is not None
            ours = [
                sonic_port(8, (cage - 1) * parsed.ports + i, parsed.ports)
                for i in range(1, parsed.ports + 1)
            ]
            derived, _ = deriver().child_ports(parent, mode, props)
            assert ours == [(n, r["lanes"], r["alias"]) for n, r in derived.items()]


@needs_platform
def test_the_reimplementation_equals_sonics_own_code() -> None:
    """Skipped unless FABRIC_STACK_SONIC_SRC names a sonic-buildimage source."""
    if source_text() is None:
        pytest.skip("FABRIC_STACK_SONIC_SRC not set: SONiC's portconfig.py not reachable")
    own = deriver()
    assert isinstance(own, SonicCode)
    ours = Reimplemented()
    for parent, props in _platform().items():
        for mode in props["breakout_modes"]:
            assert ours.child_ports(parent, mode, props) == own.child_ports(parent, mode, props)
    for sku in sorted(SN5600.glob("*/hwsku.json")):
        platform = SN5600 / "platform.json"
        assert ours.hwsku_ports(sku, platform) == own.hwsku_ports(sku, platform)


def test_a_mode_is_picked_by_ports_per_cage_and_speed() -> None:
    modes = SN5600_SONIC.breakout_modes
    assert breakout_mode(modes, 2, 400) == M400 and breakout_mode(modes, 1, 800) == M800
    assert breakout_mode(modes, 4, 100) == M200  # 100G ports are a 4x200G cage run slower
    assert breakout_mode(modes, 8, 100) is None and breakout_mode((), 2, 400) is None
    assert parse_breakout_mode("2x200G(4)+1x400G(4)") is None  # not a single-group mode


@cache
def _mixed() -> dict[str, str]:
    return {a.path: a.content for a in sonic.render(context(MIXED))}


@needs_platform
def test_a_mixed_leaf_breaks_each_cage_out_as_sonic_derives_it() -> None:
    out = _mixed()
    leaf = json.loads(out["sonic/su1-r1-leaf/config_db.json"])
    cfg = leaf["BREAKOUT_CFG"]
    assert list(cfg) == [f"Ethernet{8 * c}" for c in range(64)]
    up = {p for p, r in leaf["PORT"].items() if r["speed"] == "800000"}
    assert up and {cfg[p]["brkout_mode"] for p in up} == {M800}
    assert {r["brkout_mode"] for p, r in cfg.items() if p not in up} == {M400}
    derived = {}
    for parent, row in cfg.items():
        derived.update(deriver().child_ports(parent, row["brkout_mode"], _platform()[parent])[0])
    for name, row in leaf["PORT"].items():
        want = derived[name]
        assert (row["lanes"], row["alias"], row["speed"]) == (
            want["lanes"],
            want["alias"],
            want["speed"],
        )
    sku = json.loads(out["sonic/su1-r1-leaf/hwsku.json"])["interfaces"]
    assert {p: r["default_brkout_mode"] for p, r in sku.items()} == {
        p: r["brkout_mode"] for p, r in cfg.items()
    }
    spine = json.loads(out["sonic/spine-01/config_db.json"])
    assert "BREAKOUT_CFG" not in spine and "sonic/spine-01/hwsku.json" not in out
    assert set(sonic.files(context(MIXED))) == set(out)


def test_render_sonic_serves_a_mixed_leaf_and_still_refuses_what_it_cannot(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    flags = ["render", "sonic", "--gpus", "128", "--fabric", "roce", "--switch", "sn5600"]
    r = CliRunner().invoke(main, [*flags, "--uplink-gbps", "800", "--out-dir", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "sonic" / "su1-r1-leaf" / "hwsku.json").is_file()
    # A platform without a breakout mode for a split is refused with one line, nothing written.
    bare = SN5600_SONIC.model_copy(update={"breakout_modes": (M800,)})
    monkeypatch.setitem(CATALOG, "sn5600", CATALOG["sn5600"].model_copy(update={"sonic": bare}))
    out = tmp_path / "refused"
    r = CliRunner().invoke(main, [*flags, "--uplink-gbps", "800", "--out-dir", str(out)])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "no SN5600 breakout mode in x86_64-nvidia_sn5600-r0/platform.json gives 2 × 400G" in (
        r.output
    )
    assert not out.exists()
