"""NVOS on NVLink and Quantum-X800 (Q3400) switches: ``sw<cage>p<logical port>``.

NVIDIA's NVOS User Manual for NVLink Switches ("NVLink Interface"): ``sw<x>`` is the
front-panel port, ``p<x>s<x>`` the logical port. That Q3400 InfiniBand switches name
ports the same way (``sw37p1``) is taken from real UFM tooling and is UNVERIFIED.
"""

from __future__ import annotations

import re
from typing import cast

from fabric_stack.nos.declare import PortRef, SwitchOs, for_name
from fabric_stack.nos.mlnx_os import InfinibandDefaults

_NVOS = re.compile(r"^sw(\d+)p(\d+)(?:s(\d+))?$", re.I)


class Nvos(SwitchOs):
    """NVOS: ``sw<cage>p<lane>`` split or not, ``sw<cage>p<lane>s<k>`` read; ``#`` comments."""

    name = "nvos"
    families = ("nvos",)
    comment = "#"
    defaults = InfinibandDefaults(source="NVOS User Manual for NVLink Switches")
    split_template = "sw{cage}p{lane}"
    whole_template = "sw{cage}p{lane}"

    def parse_port(self, name: str) -> PortRef | None:
        """``swNpM`` (spelling ``nvos``) or ``swNpMsK`` (``nvos-split``, K not a lane here)."""
        if m := _NVOS.match(name):
            tag = "nvos-split" if m.group(3) is not None else "nvos"
            return PortRef(tag, int(m.group(1)), int(m.group(2)))
        return None


NVOS = cast(Nvos, for_name(Nvos.name))
"""The one instance (also registered)."""
