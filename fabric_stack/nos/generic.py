"""The generic switch OS: a "radix × speed" switch whose ports are plain ``p<n>``.

What the catalog's generic entries (and any ``os_family`` no OS declares) are labelled
with: the logical port number, readable as ``p7``, ``port 7`` or ``port7``.
"""

from __future__ import annotations

import re
from typing import cast

from fabric_stack.nos.declare import PlatformDefaults, PortRef, SwitchOs, for_name

_GENERIC = re.compile(r"^(?:p|port)\s*(\d+)$", re.I)


class Generic(SwitchOs):
    """Generic: ``p<n>`` whatever the cage; ``#`` comments; no platform defaults."""

    name = "generic"
    families = ("generic",)
    comment = "#"
    defaults = PlatformDefaults(source="none: a generic switch has no OS facts")
    split_template = "p{number}"
    whole_template = "p{number}"

    def parse_port(self, name: str) -> PortRef | None:
        """``pN`` / ``portN`` / ``port N``: the logical number itself."""
        if m := _GENERIC.match(name):
            return PortRef("generic", number=int(m.group(1)))
        return None


GENERIC = cast(Generic, for_name(Generic.name))
"""The one instance (also registered)."""
