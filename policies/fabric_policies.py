"""CrossGuard wrappers around the pure rules of :mod:`fabric_stack.policy`.

Kept apart from ``__main__.py`` because ``PolicyPack(...)`` starts a gRPC server
and blocks: tests import this module and call each policy's ``validate`` with
``StackValidationArgs`` / ``ResourceValidationArgs`` built the way the SDK builds
them.

* Stack policies (one per rule, named by the rule id) rebuild the
  :class:`~fabric_stack.intent.model.FabricIntent` from every
  ``pulumi-python:dynamic/fabric:*`` resource with
  :func:`~fabric_stack.intent.model.intent_from_resources` and run the rule, exactly
  as ``fabric-stack check`` does.
* ``port-budget``, ``link-speed-match`` and ``rail-alignment`` judge one
  resource at a time, so they are resource policies (a Switch, a Cable or
  CableBundle, an RdmaNic or RdmaNicGroup); the part of the last two that needs
  two resources runs as the stack policy ``<id>-fabric``.
* Every policy honours the rule's ``applies`` exactly as ``fabric-stack check`` does:
  a stack policy asks it of the rebuilt intent and reports "not applicable" with its
  reason. A resource policy sees one resource, not the fabric it belongs to, so only a
  rule that applies everywhere (:attr:`Applicability.universal
  <fabric_stack.policy.applicability.Applicability.universal>`) runs as one; a rule
  with a record part that applies only somewhere runs whole as a stack policy.

Each violation is reported against the URN of the resource that holds the
record (a cable inside a CableBundle is reported on the bundle).
"""

from __future__ import annotations

import hashlib
import json
import marshal
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Severity,
    StackValidationArgs,
    StackValidationPolicy,
)

from fabric_stack.adapters.pulumi.sdk_policy import (
    UNKNOWN_VALUES,
    DictProxy,
    ListProxy,
    UnknownValueError,
    target,
)
from fabric_stack.intent.model import RESOURCE_KINDS, FabricIntent, intent_from_resources
from fabric_stack.intent.wire import RECORD_KEY, decode_cables, decode_nics, record_of
from fabric_stack.pipeline import paused_gc
from fabric_stack.policy import RULES, Rule, Violation
from fabric_stack.policy.config import FABRIC_SUFFIX

PACK_NAME = "fabric-stack"
"""Policy pack name (what ``pulumi preview`` prints next to each violation)."""

TYPE_PREFIX = "pulumi-python:dynamic/fabric:"
"""Type token prefix of every fabric-stack resource (``…:Switch``, ``…:CableBundle``)."""

GROUPS: dict[str, tuple[str, str]] = {
    "CableBundle": ("Cable", "cables"),
    "RdmaNicGroup": ("RdmaNic", "nics"),
}
"""Grouped kinds: kind → (record kind of the members, props key of the member list)."""


def kind_of(resource_type: str) -> str | None:
    """``Switch`` for ``pulumi-python:dynamic/fabric:Switch``; None for other resources."""
    if not resource_type.startswith(TYPE_PREFIX):
        return None
    return resource_type[len(TYPE_PREFIX) :]


# The SDK wraps props in proxies whose every item access checks for unknown values
# (a Python call per value). Reading their targets directly and checking strings
# against the sentinels ourselves is ~5x faster on a 100k-cable stack; anything
# that is not one of these two proxy classes takes the generic Mapping/Sequence path.
_UNKNOWN = UNKNOWN_VALUES


_SCALARS = frozenset({float, int, bool, type(None)})


def plain(value: Any, key: Any = "") -> Any:
    """Unwrap the SDK's unknown-checking proxies into dicts and lists.

    An unknown value raises the SDK's ``UnknownValueError``, which the SDK turns
    into an advisory "can't run policy during preview" note.
    """
    t = type(value)
    if t is str:
        if value in _UNKNOWN:
            raise UnknownValueError(value, [str(key)])
        return value
    if t in _SCALARS:
        return value
    if t is DictProxy:
        return {k: plain(v, k) for k, v in target(value).items()}
    if t is ListProxy:
        return [plain(v, key) for v in target(value)]
    if isinstance(value, bytes) or not isinstance(value, Mapping | Sequence):
        return value
    if isinstance(value, Mapping):
        return {str(k): plain(value[k], k) for k in value}
    return [plain(value[i], key) for i in range(len(value))]


_FIELDS: dict[str, frozenset[str]] = {
    kind: frozenset(cls.model_fields) for kind, cls in RESOURCE_KINDS.items()
}


def _record(props: Any) -> dict[str, Any]:
    """The record fields of a resource's props (its ``record`` JSON text, decoded)."""
    src = target(props) if type(props) is DictProxy else props
    if RECORD_KEY in src:
        return record_of({RECORD_KEY: plain(src[RECORD_KEY], RECORD_KEY)})
    # Not our wire format (e.g. hand-built args): the props are the fields.
    return {k: plain(src[k], k) for k in src if k != "inventory"}


def _decode(kind: str, props: Any) -> list[tuple[str, dict[str, Any]]]:
    """(record kind, record fields) of one resource; a group gives one pair per member."""
    fields = _record(props)
    if kind in GROUPS or (kind == "Cable" and "cables" in fields):
        # Groups list their members compactly (shared fields + one line each).
        member, _ = GROUPS.get(kind, ("Cable", "cables"))
        decode = decode_cables if member == "Cable" else decode_nics
        names = _FIELDS[member]
        return [(member, {k: v for k, v in rec.items() if k in names}) for rec in decode(fields)]
    names = _FIELDS[kind]
    return [(kind, {k: v for k, v in fields.items() if k in names})]


_LOCK = threading.Lock()
"""Guards the caches below (the SDK's gRPC server runs requests on four threads)."""

_DECODED_MAX = 50_000
_decoded: dict[tuple[str, str], list[tuple[str, dict[str, Any]]]] = {}
"""Decoded records by (kind, record text): every policy of a preview reads the same texts."""


def _record_text(props: Any) -> str | None:
    """The ``record`` JSON text of wire-format props (None: not our wire format)."""
    src = target(props) if type(props) is DictProxy else props
    text = src.get(RECORD_KEY) if isinstance(src, Mapping) else None
    return text if type(text) is str else None


def record_props(kind: str, props: Any) -> list[tuple[str, dict[str, Any]]]:
    """(record kind, record fields) of one resource; a group gives one pair per member.

    Decoded once per record text and kind (the pack's policies all read the same
    records); callers must not change what they get.
    """
    if kind not in RESOURCE_KINDS and kind not in GROUPS:
        return []
    text = _record_text(props)
    if text is None or text in _UNKNOWN:
        return _decode(kind, props)  # hand-built props, or raises the SDK's unknown error
    key = (kind, text)
    pairs = _decoded.get(key)
    if pairs is None:
        pairs = _decode(kind, props)
        with _LOCK:
            if len(_decoded) >= _DECODED_MAX:
                _decoded.clear()
            _decoded[key] = pairs
    return pairs


class FabricView:
    """The intent rebuilt from a stack's resources, and the URN that holds each record."""

    def __init__(self, intent: FabricIntent, urns: dict[tuple[str, str], str]) -> None:
        self.intent = intent
        self.urns = urns

    def urn(self, v: Violation) -> str | None:
        """URN of the resource holding ``v``'s record (None: report on the stack)."""
        return self.urns.get((v.kind, v.resource))


_views: dict[bytes, FabricView | None] = {}
"""Recently rebuilt views by content hash (every stack policy of a preview sees one stack)."""

_ALL_KINDS = frozenset(RESOURCE_KINDS)


def fabric_view(resources: Iterable[Any], kinds: Iterable[str] = _ALL_KINDS) -> FabricView | None:
    """Rebuild the intent from the fabric resources among ``resources``; None if there are none.

    The intent holds every record that decodes, as ``fabric-stack check`` sees it, and
    is built once per stack content: every stack policy of one ``pulumi preview`` sees
    the same resources, and the key is a hash of their record texts, so the second
    and later policies neither decode nor rebuild. ``kinds`` are the record kinds the
    caller reads: a value unknown during preview in one of them raises the SDK's
    ``UnknownValueError`` (the policy "can't run during preview"); a resource of another
    kind with an unknown value is left out of the intent, which that caller does not read.
    """
    # ~10^6 new long-lived objects and no cycles: pause the cyclic collector,
    # which would otherwise rescan them repeatedly (a third of the time here).
    with paused_gc():
        return _fabric_view(resources, kinds)


def _fabric_view(resources: Iterable[Any], kinds: Iterable[str]) -> FabricView | None:
    wanted = set(kinds) | {"Fabric"}
    known: list[tuple[str, Any, str]] = []
    digest = hashlib.blake2b(digest_size=16)
    for r in resources:
        kind = kind_of(r.resource_type)
        if kind is None or (kind not in RESOURCE_KINDS and kind not in GROUPS):
            continue
        text = _record_text(r.props)
        if text is None or text in _UNKNOWN:
            try:
                token = marshal.dumps(_decode(kind, r.props), 2)
            except UnknownValueError:
                if GROUPS.get(kind, (kind, ""))[0] in wanted:
                    raise
                continue
        else:
            token = text.encode()
        digest.update(f"{kind}\0{r.urn}\0{len(token)}\0".encode())
        digest.update(token)
        known.append((kind, r.props, r.urn))
    key = digest.digest()
    view = _views[key] if key in _views else _build_view(known)
    with _LOCK:
        _views.pop(key, None)
        _views[key] = view
        while len(_views) > 4:
            del _views[next(iter(_views))]
    return view


def _build_view(known: Iterable[tuple[str, Any, str]]) -> FabricView | None:
    pairs: list[tuple[str, dict[str, Any]]] = []
    urns: dict[tuple[str, str], str] = {}
    for kind, props, urn in known:
        for rkind, rprops in record_props(kind, props):
            pairs.append((rkind, rprops))
            urns[(rkind, str(rprops.get("name", "")))] = urn
    if not any(k == "Fabric" for k, _ in pairs):
        return None
    return FabricView(intent_from_resources(pairs), urns)


def message(v: Violation) -> str:
    """What CrossGuard prints under the policy description: the one-line message and the fix."""
    return f"{v.message}\nfix: {v.fix}"


_KNOWN: dict[str, frozenset[str]] = {}
"""Rule id → its setting names (generating the JSON schema per resource cost ~0.3 ms)."""


_CONFIGS: dict[tuple[str, str], Any] = {}
"""(rule id, settings as JSON) → the rule's config model (one per preview, not per resource)."""


def _config(rule: Rule, raw: Mapping[str, Any] | None) -> Any:
    # CrossGuard validates against the schema but lets unknown keys through; the
    # rule models forbid extras, so keep only the settings the rule knows.
    known = _KNOWN.get(rule.id)
    if known is None:
        known = _KNOWN[rule.id] = frozenset(rule.config_schema())
    settings = {k: v for k, v in (raw or {}).items() if k in known}
    key = (rule.id, json.dumps(settings, sort_keys=True, default=repr))
    cfg = _CONFIGS.get(key)
    if cfg is None:
        cfg = _CONFIGS[key] = rule.config(settings)
    return cfg


def _level(rule: Rule) -> EnforcementLevel:
    return EnforcementLevel(rule.default_level)


def _severity(rule: Rule) -> Severity:
    return Severity.HIGH if rule.default_level == "mandatory" else Severity.MEDIUM


def _schema(rule: Rule) -> PolicyConfigSchema | None:
    props = rule.config_schema()
    return PolicyConfigSchema(properties=props) if props else None


def stack_policy(rule: Rule, cross_only: bool = False) -> StackValidationPolicy:
    """The rule as a stack policy (its cross-resource part only when ``cross_only``)."""
    reads = rule.reads if cross_only else (*rule.reads, *rule.record_kinds)

    def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
        view = fabric_view(args.resources, reads)
        if view is None:
            args.not_applicable(f"no {TYPE_PREFIX}* resources in this stack")
            return
        reason = rule.applies(view.intent)
        if reason:
            args.not_applicable(reason)
            return
        cfg = _config(rule, args.get_config())
        found: Iterator[Violation]
        if cross_only:
            assert rule.check_cross is not None
            found = rule.check_cross(view.intent, cfg)
        else:
            found = rule.run(view.intent, cfg)
        for v in found:
            report_violation(message(v), view.urn(v))

    return StackValidationPolicy(
        name=rule.id + (FABRIC_SUFFIX if cross_only else ""),
        description=rule.description,
        validate=validate,
        enforcement_level=_level(rule),
        config_schema=_schema(rule),
        display_name=rule.title,
        severity=_severity(rule),
        remediation_steps=rule.remediation,
    )


_models: dict[tuple[str, str], dict[str, list[Any]]] = {}
"""The last few resources' validated records by (kind, record text): the resource
policies run one after another on the same resource."""


def resource_records(kind: str, props: Any) -> dict[str, list[Any]]:
    """One resource's records, validated, by record kind (a group: all its members)."""
    text = _record_text(props)
    key = (kind, text) if text is not None and text not in _UNKNOWN else None
    records = _models.get(key) if key is not None else None
    if records is None:
        records = {}
        for rkind, rprops in record_props(kind, props):
            records.setdefault(rkind, []).append(RESOURCE_KINDS[rkind].model_validate(rprops))
        if key is not None:
            with _LOCK:
                _models[key] = records
                while len(_models) > 8:
                    del _models[next(iter(_models))]
    return records


def resource_policy(rule: Rule) -> ResourceValidationPolicy:
    """The rule's single-resource part as a resource policy (a rule that applies everywhere:
    one resource does not say which fabric it belongs to)."""
    assert rule.check_record is not None and rule.applies.universal, rule.id
    check = rule.check_record

    def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
        kind = kind_of(args.resource_type)
        if kind is None:
            return
        member = GROUPS.get(kind, (kind, ""))[0]
        if member not in rule.record_kinds:
            return
        cfg = _config(rule, args.get_config())
        for rkind, recs in resource_records(kind, args.props).items():
            for v in check(rkind, recs, cfg):
                report_violation(message(v), None)

    return ResourceValidationPolicy(
        name=rule.id,
        description=rule.description,
        validate=validate,
        enforcement_level=_level(rule),
        config_schema=_schema(rule),
        display_name=rule.title,
        severity=_severity(rule),
        remediation_steps=rule.remediation,
    )


def build_policies(rules: Iterable[Rule] | None = None) -> list[Policy]:
    """Every policy of the pack (of ``rules``, default every registered rule), in rule order."""
    out: list[Policy] = []
    for rule in RULES.values() if rules is None else rules:
        if rule.resource_policy and rule.applies.universal:
            out.append(resource_policy(rule))
            if rule.check_cross is not None:
                out.append(stack_policy(rule, cross_only=True))
        else:
            out.append(stack_policy(rule))
    return out


POLICIES: list[Policy] = build_policies()
"""What ``__main__.py`` hands to ``PolicyPack``."""

PACK_DESCRIPTION = "Blocks unsafe GPU-fabric designs: " + "; ".join(
    f"{r.title} ({r.applies.describe()})" for r in RULES.values()
)
"""The pack's description, listing every rule from the registry."""
