"""Applicability: which fabrics (and conditions) a registry entry applies to, and why not.

Policy rules (:class:`~fabric_stack.policy.rule.Rule`) and render targets
(:class:`fabric_stack.artifacts.Target`) both carry one as a required field: there is
no default, so a new entry says where it applies instead of silently applying
everywhere. It is declarative: the fabrics it applies to, the reason given when the
plan's fabric is another one, and any further conditions, each with what it needs
(for help text and tables) and a function giving the problem when it is not met.

Everything that decides whether an entry runs asks the same object: ``fabric-stack
check`` and the CrossGuard pack for rules, ``render all`` and the design report for
targets; ``render --help``, ``check --help`` and the registry tables
(:mod:`fabric_stack.views.registry_tables`) print :meth:`Applicability.describe`.

    >>> ib_only = Applicability(
    ...     fabrics=("infiniband",),
    ...     fabric_of=lambda fabric: fabric,
    ...     otherwise="the compute fabric is {fabric}, not InfiniBand",
    ... )
    >>> ib_only("roce"), ib_only("infiniband"), ib_only.describe()
    ('the compute fabric is roce, not InfiniBand', None, 'InfiniBand')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from fabric_stack.hardware.switches import FABRIC_KINDS, FabricKind

C = TypeVar("C")
"""What the entry is judged on: a FabricIntent (rules) or a RenderContext (targets)."""

FABRIC_NAMES: dict[str, str] = {
    "infiniband": "InfiniBand",
    "roce": "RoCEv2",
    "ethernet": "Ethernet",
}
"""How help text and tables spell each fabric."""


@dataclass(frozen=True, slots=True)
class Condition(Generic[C]):
    """A requirement beyond the fabric: what it needs, and the problem when it is not met."""

    needs: str
    """What the entry needs, as help and tables print it ("compute switches run Cumulus")."""
    problem: Callable[[C], str | None]
    """The reason the entry does not apply (None: the condition holds)."""


@dataclass(frozen=True, slots=True)
class Applicability(Generic[C]):
    """Where an entry applies: a set of fabrics plus conditions; calling it gives the reason
    it does not apply to ``ctx`` (None: it applies)."""

    fabrics: tuple[FabricKind, ...]
    """Compute fabrics the entry applies to (all three: every fabric)."""
    fabric_of: Callable[[C], str]
    """The fabric of what is judged (``intent.summary.fabric``, ``ctx.fabric``)."""
    otherwise: str = ""
    """Reason when the fabric is not one of :attr:`fabrics` (``{fabric}`` is replaced);
    required unless the entry applies to every fabric."""
    conditions: tuple[Condition[C], ...] = ()
    """Further requirements, checked in order once the fabric fits."""

    def __post_init__(self) -> None:
        unknown = [f for f in self.fabrics if f not in FABRIC_KINDS]
        if not self.fabrics or unknown:
            raise ValueError(f"fabrics {self.fabrics!r}: name some of {', '.join(FABRIC_KINDS)}")
        if not self.every_fabric and not self.otherwise:
            raise ValueError(f"fabrics {self.fabrics!r}: say why not elsewhere (otherwise=)")

    @property
    def every_fabric(self) -> bool:
        """True when the entry applies to every fabric (conditions aside)."""
        return set(self.fabrics) == set(FABRIC_KINDS)

    @property
    def universal(self) -> bool:
        """True when nothing can make the entry not apply."""
        return self.every_fabric and not self.conditions

    def __call__(self, ctx: C) -> str | None:
        """Why the entry does not apply to ``ctx``; None when it does."""
        fabric = self.fabric_of(ctx)
        if fabric not in self.fabrics:
            return self.otherwise.format(fabric=fabric)
        for condition in self.conditions:
            problem = condition.problem(ctx)
            if problem:
                return problem
        return None

    def describe(self) -> str:
        """Where the entry applies, for help text and tables: ``RoCEv2, Ethernet; …``."""
        fabrics = (
            "all fabrics"
            if self.every_fabric
            else ", ".join(FABRIC_NAMES[f] for f in FABRIC_KINDS if f in self.fabrics)
        )
        return "; ".join([fabrics, *(c.needs for c in self.conditions)])
