"""Arista EOS, as the drift readers meet it (LLDP and ``show interfaces`` from EOS peers):
``Ethernet<cage>/<lane>``, ``Et<cage>/<lane>``, modular ``Ethernet<slot>/<cage>/<lane>``.

No catalog model runs EOS today; the grammar is declared so every spelling a source may
print is read in one place.
"""

from __future__ import annotations

import re
from typing import cast

from fabric_stack.nos.declare import PlatformDefaults, PortRef, SwitchOs, for_name

_ETH = re.compile(r"^(?:ethernet|et)(\d+)(?:/(\d+))?(?:/(\d+))?$", re.I)


class Eos(SwitchOs):
    """Arista EOS: ``Ethernet<cage>/<lane>`` (``Ethernet<cage>`` unsplit); ``!`` comments."""

    name = "eos"
    comment = "!"
    defaults = PlatformDefaults(source="none used: no render target writes EOS")
    split_template = "Ethernet{cage}/{lane}"
    whole_template = "Ethernet{cage}"

    def parse_port(self, name: str) -> PortRef | None:
        """``EthernetN``, ``EthernetN/M``, ``EthernetS/N/M`` (modular: slot dropped), ``Et…``."""
        m = _ETH.match(name)
        if not m:
            return None
        parts = [int(g) for g in m.groups() if g is not None]
        if len(parts) == 3:  # modular chassis: slot/cage/lane
            parts = parts[1:]
        return PortRef("eos", parts[0], parts[1] if len(parts) > 1 else 1)


EOS = cast(Eos, for_name(Eos.name))
"""The one instance (also registered)."""
