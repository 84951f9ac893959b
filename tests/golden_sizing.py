"""Golden sizing JSON and Markdown cards for tests/scenarios/sizing/*.yaml."""

from __future__ import annotations

import json
from pathlib import Path

from fabric_stack.files.config import spec_from_file
from fabric_stack.sizing.size import size_fabric
from fabric_stack.views.card import card_json, card_markdown

SCENARIOS = Path(__file__).parent / "scenarios" / "sizing"


def generate() -> dict[str, str]:
    """One JSON and one Markdown card per scenario."""
    out: dict[str, str] = {}
    for path in sorted(SCENARIOS.glob("*.yaml")):
        plan = size_fabric(spec_from_file(path))
        out[f"{path.stem}.json"] = json.dumps(card_json(plan), indent=2, ensure_ascii=False) + "\n"
        out[f"{path.stem}.md"] = card_markdown(plan)
    return out
