"""The site's shape as adopt inferred it from the wiring: a small typed, versioned file.

``adopt --out names.csv`` writes ``names.shape.json`` beside the names file (as it writes
the port map); ``drift --names names.csv`` reads it from there (or ``--shape FILE``) and
judges the leaf–spine layer against it instead of against a plan the sizing flags
cannot make (see :mod:`~fabric_stack.drift.shape_fold`). Every value carries the
evidence adopt read it from, so a reader can check it against the dump.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from fabric_stack.errors import InputFileError
from fabric_stack.files import inputs

SHAPE_VERSION = 1
"""The shape file format this code writes and reads."""


class SiteShape(BaseModel):
    """What the wiring shows of the fabric's design (the compute fabric's two tiers)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: Literal[1] = Field(default=1, description="Shape file format version.")
    source: str = Field(default="", description="The dump adopt read (file or URL).")
    rails: list[int] = Field(description="Rails with a leaf cabled (the leaves' NICs say).")
    spines: int = Field(ge=0, description="Spines the wiring shows.")
    cables_per_pair: int = Field(
        ge=0, description="Cables per leaf–spine pair: the most common count among cabled pairs."
    )
    spines_per_leaf: int = Field(
        default=0,
        ge=0,
        description="Spines most leaves are cabled to (0: unknown); when it is every spine, "
        "a leaf–spine pair with no cable is a finding, else only short cabled pairs are.",
    )
    leaves_per_rail: dict[int, int] = Field(description="Rail → leaves seen on it.")
    hosts_per_leaf: int = Field(ge=0, description="Most host cables on one leaf.")
    link_rate: str = Field(
        default="", description="The fabric's most common link rate ('4xNDR'; '' unknown)."
    )
    plan: dict[str, str] = Field(
        default_factory=dict,
        description="The plan's value of each field adopt compared (for the reader).",
    )
    evidence: dict[str, str] = Field(
        default_factory=dict, description="Field → what in the dump says so."
    )


def shape_path(names_file: str | Path) -> Path:
    """Where the shape of names file ``names.csv`` lives: ``names.shape.json`` beside it."""
    p = Path(names_file)
    return p.with_name(f"{p.stem}.shape.json")


def write_shape(shape: SiteShape) -> str:
    """The shape file's text (JSON, keys in the model's order)."""
    return json.dumps(shape.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


def load_shape(path: str | Path) -> SiteShape:
    """The shape in ``path``; anything malformed is one InputFileError naming the key."""
    p = str(path)
    try:
        data = json.loads(inputs.read_text(path))
    except json.JSONDecodeError as e:
        raise InputFileError(p, f"not JSON ({e.msg})", e.lineno) from None
    if not isinstance(data, dict):
        raise InputFileError(p, "expected a JSON object (the shape adopt writes)")
    if data.get("version") != SHAPE_VERSION:
        raise InputFileError(
            p, f"version {data.get('version')!r} is not one this fabric-stack reads (valid: 1)"
        )
    try:
        return SiteShape.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        key = "$." + ".".join(str(x) for x in err["loc"])
        raise InputFileError(p, f"{err['msg']} (see adopt --help)", key) from None


__all__ = ["SHAPE_VERSION", "SiteShape", "load_shape", "shape_path", "write_shape"]
