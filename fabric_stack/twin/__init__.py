"""Digital twin of the planned fabric, built from real daemons on one machine.

Pure parts: :mod:`.wiring` (the plan as cables, GUIDs, faults) and :mod:`.ibnet`
(the ibsim net file, the adapted OpenSM config, readers of OpenSM and diag output).
Adapters: :mod:`.runtime` (namespaces, processes, the state file), :mod:`.ops_ib`,
:mod:`.ops_eth` and :mod:`.ops` (the commands). See docs/twin.md.
"""

from __future__ import annotations

from fabric_stack.twin.model import (
    EXPECTED_FINDING,
    FAULT_KINDS,
    Cable,
    End,
    Fault,
    TwinState,
    Wiring,
)
from fabric_stack.twin.wiring import TwinError, TwinFailure, assign_guids, plan_wiring

__all__ = [
    "EXPECTED_FINDING",
    "FAULT_KINDS",
    "Cable",
    "End",
    "Fault",
    "TwinError",
    "TwinFailure",
    "TwinState",
    "Wiring",
    "assign_guids",
    "plan_wiring",
]
