"""Several leaves per rail in a scalable unit, and spines grouped per rail.

Two shapes of NVIDIA's newer SuperPOD reference architectures that a symmetric fat
tree of one leaf per rail per SU cannot express:

* **Leaves per rail.** An SU may hold more servers than one leaf has downlinks; each
  rail then has ``ceil(su_nodes / down)`` leaves in the SU, and server *j* of the SU
  lands on leaf ``(j - 1) div per_leaf + 1`` of each rail at port
  ``(j - 1) mod per_leaf + 1`` (``per_leaf = ceil(su_nodes / leaves_per_rail)``). The
  DGX B300 SuperPOD RA builds SUs of 64 DGX B300 with 16 leaves and 8 spines
  (:data:`B300_SUPERPOD_RA`, Table 3): two leaves per rail on 64-port switches.
* **Rail-grouped spines.** ``spine_grouping: rail`` gives each rail (of each plane)
  its own spine group: the rail-*r* leaves of every SU reach only group *r*, so each
  rail is a two-tier fabric of its own and cross-rail traffic never crosses the
  network: it stays on NVLink inside the server (NCCL's PXN). A rail carries
  ``radix`` leaves, so the fabric stays in two tiers up to ``radix / leaves_per_rail``
  SUs, where a full grouping needs a core past ``radix / (rails × leaves_per_rail)``.
  The B300 RA's 8- and 16-SU rows (128 leaves / 64 spines, 256 / 128) only fit two
  tiers of 64-port switches this way. That the RA groups its spines per rail is the
  issue's reading (#43), UNVERIFIED here: the public RA pages we read give the counts
  and "traffic between rails traverses the spine layer" for the 4-SU design only.
"""

from __future__ import annotations

import math

from fabric_stack.errors import CapacityError

B300_SUPERPOD_RA = (
    "https://docs.nvidia.com/dgx-superpod/reference-architecture/scalable-infrastructure-b300/"
    "latest/dgx-superpod-architecture.html (NVIDIA DGX SuperPOD Reference Architecture, DGX "
    "B300, Spectrum-4 Ethernet and DC busbar; Table 3 'Larger DGX SuperPOD component counts': "
    "1 SU = 64 nodes, 512 GPUs, 16 leaves, 8 spines, 512 node-leaf and 512 leaf-spine cables; "
    "16 SU = 256 leaves, 128 spines, 8,192 + 8,192 cables)"
)
"""Where several leaves per rail (and the rail-grouped sizes) are published."""

GROUPING_MEANING = {
    "full": (
        "full spine grouping: every leaf reaches every spine of its pod; traffic between "
        "rails or SUs crosses the spine layer"
    ),
    "rail": (
        "rail-grouped spines: each rail has its own spine group; cross-rail traffic never "
        "crosses the network, it goes over NVLink inside the server (NCCL PXN)"
    ),
}
"""What each ``spine_grouping`` means for traffic (the card, whatif and the report say it)."""


def leaves_per_rail(su_nodes: int, down: int) -> int:
    """Leaves each rail needs in an SU of ``su_nodes`` servers (``down`` downlinks a leaf)."""
    return max(1, math.ceil(su_nodes / down))


def servers_per_leaf(su_nodes: int, per_rail: int) -> int:
    """Server positions of each leaf of a rail: the SU spread evenly over its leaves."""
    return math.ceil(su_nodes / per_rail)


def leaf_of_server(index: int, per_leaf: int) -> tuple[int, int]:
    """(leaf of the rail, leaf port), both 1-based, of server ``index`` (1-based) of an SU."""
    k, port = divmod(index - 1, per_leaf)
    return k + 1, port + 1


def servers_on_leaves(servers: int, per_leaf: int, per_rail: int) -> list[int]:
    """Servers on each leaf of a rail when the SU holds ``servers`` (filled leaf by leaf)."""
    return [max(0, min(per_leaf, servers - k * per_leaf)) for k in range(per_rail)]


def rail_needs_core(rail_leaves: int, radix: int, gpus_max: int) -> CapacityError:
    """The one line for a rail grouping whose rails no longer fit two tiers."""
    return CapacityError(
        "spine_grouping",
        f"rail grouping keeps each rail in two tiers, but a rail here has {rail_leaves:,} "
        f"leaves and a {radix}-port spine reaches at most {radix} (a core is needed anyway)",
        f"spine_grouping: full (three tiers), or at most {gpus_max:,} GPUs with rail grouping",
    )
