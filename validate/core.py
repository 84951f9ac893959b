"""The validator contract: what a family checks, and one rejection."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Rejection:
    """One file a real tool refused: where, which tool, and the tool's own words."""

    scenario: str
    file: str
    tool: str
    message: str

    def line(self) -> str:
        """The one line `make validate` prints for it."""
        return f"{self.scenario}  {self.file}  {self.tool}: {self.message}"


@dataclass(frozen=True, slots=True)
class FileProblem:
    """A validator's finding on one file (relative to the scenario's render root)."""

    file: str
    message: str


class Validator(Protocol):
    """A family of rendered files and the real tool that judges them."""

    name: str
    """Short family name (``frr``, ``sonic-yang``, …): the CLI's ``--only`` value."""

    @property
    def tool(self) -> str:
        """The real tool, as the rejection line names it (``vtysh --dryrun``); a property so
        a family may say which of its tools ran (sonic-defaults: SONiC's code or ours)."""
        ...

    def missing(self) -> str | None:
        """Why the tool cannot run here (and what installs it), or None."""
        ...

    def select(self, root: Path) -> list[Path]:
        """The files of this family under a scenario's render root."""
        ...

    def check(self, root: Path, files: Sequence[Path]) -> list[FileProblem]:
        """Run the tool over ``files`` (one batch where the tool allows it)."""
        ...
