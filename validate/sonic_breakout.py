"""The ports SONiC derives from ``platform.json`` for a cage's breakout mode (dynamic port
breakout), for the ``sonic-defaults`` family.

SONiC's own code does it: ``BreakoutCfg`` and ``parse_platform_json_file`` of
``src/sonic-config-engine/portconfig.py`` (sonic-net/sonic-buildimage@086b03bd70f9), the code
``config interface breakout`` (sonic-utilities ``config/main.py``, via ``get_child_ports``)
and sonic-cfggen's first boot (``get_port_config``) use. That file is not in
``../shared/schemas``, so it is run from a sonic-buildimage source named by
``FABRIC_STACK_SONIC_SRC`` (a checkout, or a git directory holding the pinned commit), with
stand-ins for the two modules it imports but the breakout code never calls (``swsscommon``,
``sonic_py_common``). Nothing of it is copied here.

Without that source, :class:`Reimplemented` stands in: a re-implementation of
``BreakoutCfg.get_config`` and ``parse_platform_json_file`` of the same file and commit,
line for line in what they compute (names ``Ethernet<parent + lane offset>``, lanes, the
mode's alias list, default speed, ``fec: rs`` at 50G per lane or more). It is ours, not
SONiC's (UNVERIFIED where SONiC's code is not run; tests/unit/test_sonic_breakout.py compares
the two over every mode of the SN5600 when the source is there).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

from validate.sonic_schemas import SONIC_COMMIT

PORTCONFIG = "src/sonic-config-engine/portconfig.py"
"""SONiC's port-config code inside a sonic-buildimage source."""
PINNED = SONIC_COMMIT.rsplit("@", 1)[1]
"""The commit of ../shared/schemas; a git source is read at it."""

Ports = dict[str, dict[str, str]]
"""Port name → its fields (``alias``, ``lanes``, ``speed``, ``index``, ``subport``, ``fec``)."""


class Deriver(Protocol):
    """What derives ports from platform.json: SONiC's code or our stand-in."""

    name: str
    """Says which, for the output."""

    def child_ports(self, parent: str, mode: str, props: dict[str, Any]) -> tuple[Ports, set[int]]:
        """The ports of cage ``parent`` (its platform.json entry ``props``) in ``mode``, and
        every speed (Mb/s) a port of the mode may run at; RuntimeError on a mode the cage
        does not offer."""
        ...

    def hwsku_ports(self, hwsku_json: Path, platform_json: Path) -> Ports:
        """The ports a ``hwsku.json`` gives at first boot (``parse_platform_json_file``)."""
        ...


class SonicCode:
    """SONiC's own portconfig.py, loaded from a sonic-buildimage source."""

    def __init__(self, module: ModuleType, where: str) -> None:
        self.module = module
        self.name = f"SONiC's portconfig.py BreakoutCfg ({where})"

    def child_ports(self, parent: str, mode: str, props: dict[str, Any]) -> tuple[Ports, set[int]]:
        """``BreakoutCfg(parent, mode, props).get_config()`` and its mode's speeds."""
        cfg = self.module.BreakoutCfg(parent, mode, props)
        speeds = {s for e in cfg._breakout_mode_entry for s in e.supported_speed}
        return dict(cfg.get_config()), speeds

    def hwsku_ports(self, hwsku_json: Path, platform_json: Path) -> Ports:
        """``parse_platform_json_file(hwsku_json, platform_json)[0]``."""
        return dict(self.module.parse_platform_json_file(str(hwsku_json), str(platform_json))[0])


_GROUP = re.compile(r"(\d{1,6})x(\d{1,6}G?)(\[(\d{1,6}G?,?)*\])?(\((\d{1,6})\))?")
"""``BRKOUT_PATTERN`` of portconfig.py (same commit)."""


def _mb(speed: str) -> int:
    return int(speed.removesuffix("G")) * 1000 if speed.endswith("G") else int(speed)


class Reimplemented:
    """Our re-implementation of portconfig.py's breakout code (see the module docstring)."""

    name = (
        f"re-implementation of portconfig.py BreakoutCfg ({SONIC_COMMIT}; SONiC's code not "
        "run: set FABRIC_STACK_SONIC_SRC, UNVERIFIED)"
    )

    def _entries(self, mode: str, lanes: int) -> list[tuple[int, int, set[int], int]]:
        out = []
        for part in mode.split("+"):
            m = _GROUP.match(part)
            if m is None:
                raise RuntimeError(f'Breakout mode "{mode}" validation failed!')
            speeds = {_mb(m.group(2))}
            if m.group(3):
                speeds |= {_mb(s.strip()) for s in m.group(3)[1:-1].split(",")}
            assigned = int(m.group(6)) if m.group(6) else lanes
            out.append((int(m.group(1)), _mb(m.group(2)), speeds, assigned))
        return out

    def child_ports(self, parent: str, mode: str, props: dict[str, Any]) -> tuple[Ports, set[int]]:
        """``BreakoutCfg.__init__`` (the mode must equal one the cage offers, compared as
        (ports, speeds, lanes) per group) and ``get_config``."""
        lanes = props["lanes"].split(",")
        indexes = props["index"].split(",")

        def key(m: str) -> list[tuple[int, frozenset[int], int]]:
            return [(n, frozenset(s), a) for n, _, s, a in self._entries(m, len(lanes))]

        wanted = key(mode)
        aliases = next((v for m, v in props["breakout_modes"].items() if key(m) == wanted), None)
        if not aliases:
            raise RuntimeError(f"Unsupported breakout mode {mode}!")
        entries = self._entries(mode, len(lanes))
        if sum(e[3] for e in entries) > len(lanes):
            raise RuntimeError("Assigned lines count is more that available!")
        total = sum(e[0] for e in entries)
        base = int(parent.replace("Ethernet", ""))
        ports: Ports = {}
        lane = alias = 0
        for num, default, _, assigned in entries:
            width = assigned // num
            for _ in range(num):
                row = {
                    "alias": aliases[alias],
                    "lanes": ",".join(lanes[lane : lane + width]),
                    "speed": str(default),
                    "index": indexes[lane],
                    "subport": "0" if total == 1 else str(alias + 1),
                }
                if default // width >= 50000:
                    row["fec"] = "rs"
                ports[f"Ethernet{base + lane}"] = row
                lane += width
                alias += 1
        return ports, {s for e in entries for s in e[2]}

    def hwsku_ports(self, hwsku_json: Path, platform_json: Path) -> Ports:
        """``parse_platform_json_file``: each platform.json port hwsku.json names, in its
        ``default_brkout_mode``, with hwsku.json's ``fec``/``autoneg``/``role`` of a child."""
        platform = json.loads(platform_json.read_text())["interfaces"]
        sku = json.loads(hwsku_json.read_text())["interfaces"]
        out: Ports = {}
        for parent, props in platform.items():
            if parent not in sku:
                continue
            children, _ = self.child_ports(parent, sku[parent]["default_brkout_mode"], props)
            for child in list(children):
                for k, v in sku.get(child, {}).items():
                    if k in ("fec", "autoneg", "role"):
                        for c in children.values():
                            c[k] = v
            out.update(children)
        return out


def _stubs() -> dict[str, ModuleType]:
    """Stand-ins for the modules portconfig.py imports at its top and its breakout code
    never calls (the switch's redis client, the device-info helpers)."""
    sw, common = ModuleType("swsscommon"), ModuleType("sonic_py_common")
    sw.swsscommon = ModuleType("swsscommon.swsscommon")  # type: ignore[attr-defined]
    info, multi = (
        ModuleType("sonic_py_common.device_info"),
        ModuleType("sonic_py_common.multi_asic"),
    )
    multi.get_asic_id_from_name = lambda name: None  # type: ignore[attr-defined]
    common.device_info, common.multi_asic = info, multi  # type: ignore[attr-defined]
    return {
        "swsscommon": sw,
        "swsscommon.swsscommon": sw.swsscommon,
        "sonic_py_common": common,
        "sonic_py_common.device_info": info,
        "sonic_py_common.multi_asic": multi,
    }


def source_text() -> tuple[str, str] | None:
    """portconfig.py's text and where it was read, from ``FABRIC_STACK_SONIC_SRC`` (a
    checkout's file, else ``git show <pinned commit>:…`` of a git directory), or None."""
    src = os.environ.get("FABRIC_STACK_SONIC_SRC")
    if not src:
        return None
    path = Path(src) / PORTCONFIG
    if path.is_file():
        return path.read_text(), f"{path} (checkout; commit not checked)"
    cmd = ["git", "--git-dir", src, "show", f"{PINNED}:{PORTCONFIG}"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    return (done.stdout, f"{SONIC_COMMIT}:{PORTCONFIG}") if done.returncode == 0 else None


@lru_cache(maxsize=1)
def deriver() -> Deriver:
    """SONiC's code when a source is there, else our re-implementation."""
    found = source_text()
    if found is None:
        return Reimplemented()
    text, where = found
    module = ModuleType("sonic_portconfig")
    module.__file__ = where
    saved = {k: sys.modules.get(k) for k in _stubs()}
    sys.modules.update({k: v for k, v in _stubs().items() if saved[k] is None})
    try:
        exec(compile(text, where, "exec"), module.__dict__)  # SONiC's file, run unchanged
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
    return SonicCode(module, where)
