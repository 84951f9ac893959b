"""Helpers the rule modules share: levels, number formatting, leaf-name parsing."""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import TypeVar

from fabric_stack.intent.model import FabricIntent, SwitchIntent
from fabric_stack.policy.models import RuleConfig, ViolationLevel
from fabric_stack.spec.model import FabricSpec

COMPUTE_SWITCH_ROLES = frozenset({"leaf", "spine", "core"})
"""Switch roles of the compute fabric."""

NETWORK_ORDER = ("compute", "storage", "inband", "oob")
"""Networks in the order messages list them."""

C = TypeVar("C", bound=RuleConfig)


def level_of(cfg: RuleConfig, default: ViolationLevel) -> ViolationLevel | None:
    """Level stamped on violations; None when the rule is disabled."""
    lvl = cfg.enforcement_level
    if lvl is None:
        return default
    if lvl == "disabled":
        return None
    return "mandatory" if lvl in ("mandatory", "remediate") else "advisory"


def plural(n: int, word: str, plural: str = "") -> str:
    """'1 spine', '2 spines' (``plural`` for irregular words: 'switches')."""
    return f"{n} {word}" if n == 1 else f"{n} {plural or word + 's'}"


def ratio_text(down: int, up: int) -> str:
    """Reduced down:up ratio, '2:1'; 'no uplinks' when up is 0."""
    if up == 0:
        return "no uplinks"
    g = math.gcd(down, up)
    return f"{down // g}:{up // g}"


def some(names: list[str], limit: int = 3) -> str:
    """The first few names and how many more: 'a, b, c, … 9 more'."""
    head = ", ".join(names[:limit])
    return head + (f", … {len(names) - limit} more" if len(names) > limit else "")


def is_compute_switch(sw: SwitchIntent) -> bool:
    """True for leaves, spines and cores of the compute fabric."""
    return sw.network == "compute" or sw.role in COMPUTE_SWITCH_ROLES


_LEAF_NAME = re.compile(r"^(?:p(\d+)-)?su(\d+)-r(\d+)-leaf(?:\d+)?$")


@lru_cache(maxsize=65536)
def parse_leaf_name(name: str) -> tuple[int, int, int] | None:
    """(plane, su, rail) of a standard leaf name (``su1-r3-leaf``, ``p2-su1-r3-leaf``,
    ``su1-r3-leaf2`` for the second rail-3 leaf of an SU larger than one leaf).

    Names come from :func:`fabric_stack.naming.devices.leaf_name`, so a single resource
    tells its rail; ``None`` for any other name.
    """
    m = _LEAF_NAME.match(name)
    if not m:
        return None
    return int(m.group(1) or 1), int(m.group(2)), int(m.group(3))


class SpecOnce:
    """The intent's spec, validated at most once per rule run (only if a rule needs it)."""

    def __init__(self, intent: FabricIntent) -> None:
        self._intent = intent
        self._spec: FabricSpec | None = None

    def get(self) -> FabricSpec:
        if self._spec is None:
            self._spec = self._intent.spec
        return self._spec


def cfg_or_default(config: C | None, model: type[C]) -> C:
    """``config``, or the model's defaults when None."""
    return config if config is not None else model()
