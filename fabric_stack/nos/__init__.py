"""One module per switch OS: its port-name grammar both ways, comment syntax and defaults.

``nos.for_family(model.os_family)`` is the OS that names a catalog model's ports;
``nos.for_name("sonic")`` any declared OS. Each module declares one
:class:`~fabric_stack.nos.declare.SwitchOs` subclass (checked at declaration, see
``docs/dev/add-a-switch-os.md``):

==============  ======================================================================
``mlnx_os``     MLNX-OS / Onyx InfiniBand (``1/4/2``) and the ibnetdiscover / UFM names
``nvos``        NVOS (``sw4p2``), Quantum-X800 and NVLink switches
``cumulus``     Cumulus Linux / NVUE (``swp4s1``), PFC cable lengths, AR ASICs
``sonic``       SONiC (``Ethernet8``, ``etp2b``), the SN5600 buffer and QoS defaults
``frr``         FRR, the routing suite on the Ethernet switches (netdev names, ``!``)
``eos``         Arista EOS (``Ethernet4/2``), as the drift readers meet it
``generic``     a generic "radix × speed" switch (``p7``)
==============  ======================================================================
"""

from __future__ import annotations

from fabric_stack.nos import cumulus, eos, frr, generic, mlnx_os, nvos, sonic
from fabric_stack.nos.declare import (
    NosDeclarationError,
    PlatformDefaults,
    PortLayout,
    PortRef,
    SwitchOs,
    declared,
    families,
    for_family,
    for_name,
)

__all__ = [
    "NosDeclarationError",
    "PlatformDefaults",
    "PortLayout",
    "PortRef",
    "SwitchOs",
    "cumulus",
    "declared",
    "eos",
    "families",
    "for_family",
    "for_name",
    "frr",
    "generic",
    "mlnx_os",
    "nvos",
    "sonic",
]
