"""Reading the policy config: the ``--policy-config`` file (YAML or JSON).

The file has the shape of Pulumi's ``--policy-pack-config``, so one file serves
``fabric-stack check`` and ``pulumi preview --policy-pack policies``::

    all: mandatory                      # optional: level of every rule without its own
    oversubscription-1-to-1:
      enforcementLevel: mandatory
      max_ratio: "2:1"
    ib-subnet-manager-redundancy: mandatory   # a bare level is fine too

The pack runs the cross-resource half of ``rail-alignment`` and
``link-speed-match`` as stack policies named ``<id>-fabric``; a key with that
suffix configures the same rule here.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from fabric_stack.errors import InputFileError, SpecError
from fabric_stack.files.config import load_yaml
from fabric_stack.policy.registry import PolicyConfig, rule_ids

FABRIC_SUFFIX = "-fabric"
"""Suffix of the pack's stack policies that hold a rule's cross-resource half."""


def _normalise(data: Mapping[str, Any]) -> dict[str, Any]:
    known = set(rule_ids())
    out: dict[str, Any] = {}
    for key, value in data.items():
        k = str(key)
        if k.endswith(FABRIC_SUFFIX) and k.removesuffix(FABRIC_SUFFIX) in known:
            k = k.removesuffix(FABRIC_SUFFIX)
        if k == "all":
            if isinstance(value, Mapping):  # CrossGuard also accepts {enforcementLevel: …}
                value = value.get("enforcementLevel", value.get("enforcement_level"))
            out["all"] = value
            continue
        if isinstance(value, str):
            value = {"enforcementLevel": value}
        elif value is None:
            value = {}
        if k in out and isinstance(out[k], dict) and isinstance(value, Mapping):
            value = {**out[k], **value}
        out[k] = value
    return out


def policy_config_from_data(data: Mapping[str, Any] | None) -> PolicyConfig:
    """Validate plain data into a :class:`PolicyConfig`; errors are one SpecError line."""
    if data is None:
        return PolicyConfig()
    if not isinstance(data, Mapping):
        raise SpecError("policy config", "expected a mapping of rule id → settings")
    try:
        return PolicyConfig.model_validate(_normalise(data))
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        loc = ".".join(str(p) for p in err["loc"])
        msg = str(err["msg"]).removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            parent, _, key = loc.rpartition(".")
            if not parent:
                valid = ", ".join(["all", *rule_ids()])
                raise SpecError(key, "unknown rule", f"rules: {valid}") from None
            model = PolicyConfig.model_fields[_field_of(parent)].annotation
            fields = [str(f.alias or n) for n, f in getattr(model, "model_fields", {}).items()]
            raise SpecError(loc, "unknown setting", f"settings: {', '.join(fields)}") from None
        if err["type"] == "literal_error":
            raise SpecError(
                loc,
                f"{err.get('input')!r} is not a level",
                "mandatory, advisory, disabled or remediate",
            ) from None
        raise SpecError(loc or "policy config", msg) from None


def _field_of(alias: str) -> str:
    for name, f in PolicyConfig.model_fields.items():
        if f.alias == alias or name == alias:
            return name
    raise KeyError(alias)


def load_policy_config(path: str | Path) -> PolicyConfig:
    """Read a policy config file; errors name the file and the offending key (exit 2)."""
    data = load_yaml(path)
    try:
        return policy_config_from_data(data or {})
    except SpecError as exc:
        raise InputFileError(str(path), exc.message) from None
