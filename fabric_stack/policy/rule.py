"""What a policy rule is: its metadata and its check functions (:class:`Rule`).

Each rule is ``check_<name>(intent, config=None) -> Iterator[Violation]`` plus a
:class:`Rule` entry with its id, title, description, default level, remediation hint
and config model; one module per rule lives in :mod:`fabric_stack.policy.rules`.

Three rules can judge one resource at a time (``port-budget``,
``link-speed-match``, ``rail-alignment``): their :class:`Rule` also has a
``check_record`` part that the pack runs as a resource policy, plus a
``check_cross`` part for what needs two resources. ``Rule.run`` is always
record part + cross part, so ``check`` and the pack report the same set.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from fabric_stack.hardware.switches import FABRIC_KINDS, FabricKind
from fabric_stack.intent.model import FabricIntent
from fabric_stack.policy._common import level_of
from fabric_stack.policy.applicability import Applicability
from fabric_stack.policy.models import Level, RuleConfig, Violation, ViolationLevel

RecordCheck = Callable[[str, Iterable[Any], Any], Iterator[Violation]]
"""``(kind, records, config)``: judge records of one kind, each on its own."""

FabricCheck = Callable[[FabricIntent, Any], Iterator[Violation]]
"""``(intent, config)``: judge what needs several resources together."""


def compute_fabric(intent: FabricIntent) -> str:
    """The compute fabric of ``intent`` (what a rule's applicability looks at)."""
    return intent.summary.fabric


def on_fabrics(*fabrics: FabricKind, otherwise: str = "") -> Applicability[FabricIntent]:
    """A rule's applicability: ``fabrics``, and the reason on any other (``{fabric}``)."""
    return Applicability(fabrics=fabrics, fabric_of=compute_fabric, otherwise=otherwise)


EVERY_FABRIC: Applicability[FabricIntent] = on_fabrics(*FABRIC_KINDS)
"""The applicability of a rule that judges every fabric (still stated: there is no default)."""


ALL_KINDS = ("Fabric", "Switch", "Rail", "Vlan", "RdmaNic", "Cable")
"""Record kinds of an intent (resource kinds, grouped kinds aside)."""


@dataclass(frozen=True)
class Rule:
    """A policy rule: metadata plus its check functions.

    ``check_record(kind, records, config)`` judges records of a kind in
    ``record_kinds`` one at a time (the pack runs it as a resource policy);
    ``check_cross(intent, config)`` judges what needs several resources.
    :meth:`run` does both over a whole intent. ``reads`` lists the record kinds
    the cross part reads, so the pack rebuilds only those from a large stack.
    ``applies`` (required: no default) says where the rule runs; ``check`` and the pack
    both skip it, with its reason, wherever it does not apply.
    """

    id: str
    title: str
    description: str
    default_level: ViolationLevel
    remediation: str
    config_model: type[RuleConfig]
    applies: Applicability[FabricIntent]
    check_cross: FabricCheck | None = None
    record_kinds: tuple[str, ...] = ()
    check_record: RecordCheck | None = None
    reads: tuple[str, ...] = ALL_KINDS
    config_field: str = ""
    """Attribute of :class:`~fabric_stack.policy.registry.PolicyConfig` holding the settings."""
    config_description: str = ""
    """What the rule's entry in the policy config file is about."""

    @property
    def resource_policy(self) -> bool:
        """True when the pack runs the single-resource part as a resource policy."""
        return self.check_record is not None

    def config(self, data: Any = None) -> RuleConfig:
        """Validate ``data`` (mapping, model or None) into this rule's config model."""
        if isinstance(data, self.config_model):
            return data
        if isinstance(data, RuleConfig):
            return self.config_model.model_validate(data.model_dump(exclude_unset=True))
        return self.config_model.model_validate(dict(data or {}))

    def level(self, cfg: RuleConfig) -> Level:
        """Effective level: mandatory, advisory or disabled."""
        return level_of(cfg, self.default_level) or "disabled"

    def run(self, intent: FabricIntent, config: Any = None) -> Iterator[Violation]:
        """Every violation of this rule in ``intent`` (record part, then cross part)."""
        cfg = self.config(config)
        if self.check_record is not None:
            for kind in self.record_kinds:
                yield from self.check_record(kind, records_of(intent, kind), cfg)
        if self.check_cross is not None:
            yield from self.check_cross(intent, cfg)

    def config_schema(self) -> dict[str, dict[str, Any]]:
        """JSON-schema properties of the rule's settings (enforcementLevel left to CrossGuard)."""
        props = self.config_model.model_json_schema(by_alias=True).get("properties", {})
        return {k: v for k, v in props.items() if k != "enforcementLevel"}


def records_of(intent: FabricIntent, kind: str) -> Iterable[Any]:
    """The intent's records of one resource kind: Switch, RdmaNic, Cable, Vlan, Rail, Fabric."""
    table: dict[str, Iterable[Any]] = {
        "Switch": intent.switches,
        "RdmaNic": intent.nics,
        "Cable": intent.cables,
        "Vlan": intent.vlans,
        "Rail": intent.rails,
        "Fabric": (intent.summary,),
    }
    return table[kind]
