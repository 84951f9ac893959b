"""Intra-node GPU interconnect (NVLink) figures per server profile, with their sources.

The collective estimate (:mod:`fabric_stack.analysis.estimate`) needs the bandwidth a
GPU has to the other GPUs of its server, which the node profiles
(:mod:`fabric_stack.hardware.nodes`) do not carry. The figures live here, keyed by
profile name, each with the published source it comes from. A profile that is
not listed (a custom or generic server) gets an *assumed* H100-class figure
marked unverified, and the estimate says so in its assumptions.

NVIDIA quotes NVLink bandwidth per GPU as the bidirectional total; a
collective moves data one way per link at a time, so the model uses half of
it (:attr:`NvlinkFigure.per_direction_gbs`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from fabric_stack.hardware.nodes import NodeProfile


class NvlinkFigure(BaseModel):
    """NVLink bandwidth of one GPU and whether its NVSwitch reduces in the switch (NVLS)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    gpu: str = Field(description="GPU model the figure is for.")
    generation: str = Field(description="NVLink generation.")
    bidirectional_gbs: float = Field(gt=0, description="Total NVLink bandwidth per GPU, GB/s.")
    nvls: bool = Field(
        description="NVLink SHARP (in-switch reduction, NCCL's NVLS algorithms) available."
    )
    source: str = Field(description="Where the figure is published.")
    verified: bool = Field(description="False when the figure is assumed, not confirmed.")

    @property
    def per_direction_gbs(self) -> float:
        """Bandwidth one way, GB/s: half the bidirectional figure."""
        return self.bidirectional_gbs / 2


H100_NVLINK = NvlinkFigure(
    gpu="H100 SXM",
    generation="NVLink 4 (third-generation NVSwitch)",
    bidirectional_gbs=900,
    nvls=True,
    source=(
        "NVIDIA H100 Tensor Core GPU datasheet: 'NVLink: 900GB/s' (SXM); NVLink SHARP "
        "in the third-generation NVSwitch: NVIDIA Hopper architecture in-depth (developer blog)"
    ),
    verified=True,
)
"""DGX/HGX H100 (and H200, same NVLink)."""

B200_NVLINK = NvlinkFigure(
    gpu="B200",
    generation="NVLink 5",
    bidirectional_gbs=1800,
    nvls=True,
    source="NVIDIA DGX B200 datasheet: '1.8 TB/s' NVLink bandwidth per GPU (14.4 TB/s total)",
    verified=True,
)
"""DGX/HGX B200."""

B300_NVLINK = NvlinkFigure(
    gpu="B300",
    generation="NVLink 5",
    bidirectional_gbs=1800,
    nvls=True,
    source="assumed equal to B200 (NVLink 5, 1.8 TB/s per GPU); HGX B300 sheet not checked",
    verified=False,
)
"""HGX B300: unverified (assumed as B200)."""

ASSUMED_NVLINK = NvlinkFigure(
    gpu="unknown",
    generation="assumed NVLink 4",
    bidirectional_gbs=900,
    nvls=False,
    source="no published figure for this profile: H100-class NVLink assumed, without NVLS",
    verified=False,
)
"""Fallback for custom and generic profiles."""

NVLINK_BY_PROFILE: dict[str, NvlinkFigure] = {
    # The generic 8-GPU HGX stands for an H100/H200-class board (see server_profiles).
    "hgx-8gpu": H100_NVLINK,
    "hgx-8gpu-cx8": H100_NVLINK,
    "dgx-h100": H100_NVLINK,
    "dgx-h200": H100_NVLINK,
    "dgx-b200": B200_NVLINK,
    "hgx-b300": B300_NVLINK,
}
"""NVLink figure per built-in node profile name."""


def nvlink_for(profile: NodeProfile) -> NvlinkFigure:
    """The NVLink figure of ``profile`` (the unverified fallback when it is not listed)."""
    return NVLINK_BY_PROFILE.get(profile.name, ASSUMED_NVLINK)


__all__ = ["NVLINK_BY_PROFILE", "NvlinkFigure", "nvlink_for"]
