"""The data-hall layout (spec section ``layout``): where racks stand and how cables run.

Defaults follow NVIDIA's DGX SuperPOD reference architectures where they state a figure,
and every default says where it comes from (``LAYOUT_SOURCES``). What the RAs do not state
(row length, aisle widths, tray height, slack) is a common data-hall figure and is marked
UNVERIFIED: set the site's own values.

Geometry: racks stand in rows; a rack's place is (row, column). The racks of SU *s* fill
rows of their own, counted from the front of the hall, so adding an SU adds rows behind
the existing ones and moves nothing. The spine, core and management racks stand in rows
of their own in front of the SUs (one row per kind and plane), each growing along its row,
so a new spine rack never moves a core rack. A cable runs from its port up to the tray
above the rack, along the row, across rows, and down (in-rack cables stay in the rack).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

_RA_B300 = (
    "NVIDIA DGX SuperPOD RA (DGX B300, XDR), 'DGX SuperPOD Architecture': four DGX B300 "
    "per rack, ~56 kW per rack (docs.nvidia.com/dgx-superpod/reference-architecture/"
    "scalable-infrastructure-b300-xdr)"
)
_RA_B200 = (
    "NVIDIA DGX SuperPOD RA (DGX B200), 'DGX SuperPOD Architecture': SU rack layout, "
    "'power consumption per rack exceeds 25 kW', 'can be adjusted to meet local data center "
    "requirements' (docs.nvidia.com/dgx-superpod/reference-architecture-scalable-"
    "infrastructure-b200)"
)

LAYOUT_SOURCES: dict[str, str] = {
    "servers_per_rack": f"{_RA_B300}; the builder's long-standing 4 per rack. The issue's "
    "'2 DGX per rack, 16 compute racks per SU' (DGX H100 RA) is UNVERIFIED (not found)",
    "rack_power_kw": f"{_RA_B300} (56 kW for four B300); 60 kW leaves headroom: UNVERIFIED "
    "as a site figure",
    "rack_units": "42U EIA-310 rack, the common data-hall rack: UNVERIFIED for the site",
    "rack_width_mm": "600 mm, the common rack width: UNVERIFIED for the site",
    "rack_pitch_mm": "600 mm racks side by side, no gap: UNVERIFIED for the site",
    "row_pitch_mm": "1200 mm rack depth + 1200 mm aisle: UNVERIFIED for the site",
    "racks_per_row": "UNVERIFIED: a site figure (the RAs show one SU per row)",
    "su_network_rack": f"{_RA_B200}: network racks among the SU's racks; 'middle' keeps "
    "server-to-leaf runs short: UNVERIFIED",
    "tray_height_mm": "300 mm above the rack top: UNVERIFIED for the site",
    "slack_per_end_m": "0.5 m service loop per end: UNVERIFIED for the site",
    "cross_rows": "trays cross between rows at any rack ('direct'): UNVERIFIED for the site",
}
"""Where each layout default comes from (UNVERIFIED where no document states it)."""


class LayoutSettings(BaseModel):
    """The data hall: rows of racks, tray routing, slack, and each rack's budget.

    Racks over their power or rack-unit budget are a spec error naming the rack
    (checked when the plant is planned, see :mod:`fabric_stack.plant`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    servers_per_rack: int = Field(
        default=4, ge=1, le=64, description="GPU servers in one compute rack."
    )
    racks_per_row: int = Field(
        default=12, ge=1, le=200, description="Racks in one row before the next row starts."
    )
    rack_units: int = Field(default=42, ge=4, le=60, description="Rack height in rack units.")
    rack_power_kw: float = Field(
        default=60.0,
        gt=0,
        le=1000,
        allow_inf_nan=False,
        description="Power budget of one rack, kW (servers and switches).",
    )
    rack_width_mm: int = Field(default=600, ge=400, le=1200, description="Rack width, mm.")
    rack_pitch_mm: int = Field(
        default=600, ge=400, le=2000, description="Centre-to-centre distance of racks in a row."
    )
    row_pitch_mm: int = Field(
        default=2400, ge=1000, le=10000, description="Centre-to-centre distance of rows, mm."
    )
    su_network_rack: Literal["middle", "end"] = Field(
        default="middle", description="Where an SU's network rack stands among its racks."
    )
    tray_height_mm: int = Field(
        default=300, ge=0, le=3000, description="Cable tray height above the rack top, mm."
    )
    cross_rows: Literal["direct", "row_end"] = Field(
        default="direct",
        description="Where trays cross between rows: at any rack, or only at the row's end.",
    )
    slack_per_end_m: float = Field(
        default=0.5, ge=0, le=10, description="Service loop added at each cable end, m."
    )
    space: str = Field(
        default="DH1",
        pattern=r"^[A-Za-z0-9]{1,8}$",
        description="TIA-606 space identifier of the data hall (floor and room), e.g. DH1.",
    )
    label: str = Field(
        default="{space}.{grid}-U{u:02d}:{port}",
        description=(
            "Label of a cable end (TIA-606-style: space, rack grid, RU, port). Fields: "
            "{space} {grid} {rack} {u} {device} {port}. Must name each end uniquely."
        ),
    )
    server_power_kw: float | None = Field(
        default=None,
        gt=0,
        le=1000,
        allow_inf_nan=False,
        description="Power of one GPU server, kW (default: the server profile's figure).",
    )


__all__ = ["LAYOUT_SOURCES", "LayoutSettings"]
