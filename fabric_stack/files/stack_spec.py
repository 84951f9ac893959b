"""A spec file and a Pulumi stack's ``fabric:`` config, one into the other (issue #48).

A spec YAML spells FabricSpec fields in snake_case at the top level (``gpus_per_node``);
a stack spells them as ``fabric:`` camelCase config keys (``fabric:gpusPerNode``), the
form :func:`fabric_stack.files.config.split_stack_config` reads back. The keys that
configure the stack rather than the fabric (:data:`~fabric_stack.files.config.STACK_ONLY_KEYS`)
may be in a spec file too; the ones that hold credentials become Pulumi secrets.

The config travels in the JSON form ``pulumi config --json`` prints and
``pulumi config set-all --json`` reads: ``{"fabric:gpus": {"value": "128", "secret": false}}``,
a structured value with its ``objectValue`` too. Both directions are pure functions here;
running the CLI is :mod:`fabric_stack.adapters.pulumi.stack_config`'s job.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fabric_stack.errors import InputFileError
from fabric_stack.files.config import STACK_ONLY_KEYS, snake, snake_keys
from fabric_stack.spec.model import FabricSpec
from fabric_stack.text.redact import mask_url

SECRET_KEYS = ("netbox_token",)
"""Stack keys that are always a Pulumi secret."""

STACK_KEYS = STACK_ONLY_KEYS

BOOL_KEYS = ("config_records",)
"""Stack keys whose value is true or false."""
"""Keys a spec file may carry besides the FabricSpec fields: they configure the stack."""


def camel(key: str) -> str:
    """``gpus_per_node`` → ``gpusPerNode``."""
    return re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), key)


def known_keys() -> tuple[str, ...]:
    """Every top-level key a spec file may hold: the spec's fields, then the stack's."""
    return (*FabricSpec.model_fields, *STACK_KEYS)


def check_keys(data: Mapping[str, Any], source: str) -> None:
    """InputFileError naming the first key that is neither a spec field nor a stack key."""
    known = known_keys()
    for key in data:
        if snake(str(key)) not in known:
            raise InputFileError(
                source, f"{key}: not a spec or stack key (expected one of: {', '.join(known)})"
            )


def is_secret(key: str, value: Any) -> bool:
    """Whether ``key`` (snake_case) must be stored encrypted: a token, or a URL with a password."""
    return key in SECRET_KEYS or (isinstance(value, str) and mask_url(value) != value)


def config_of_spec(data: Mapping[str, Any], base: Path | None = None) -> dict[str, dict[str, Any]]:
    """The ``pulumi config --json`` form of spec data (top-level snake_case or camelCase keys).

    A ``names: FILE`` path is made absolute against ``base`` (the spec file's directory):
    the stack reads it from the project directory. Values are kept as given: the stack holds
    exactly what the spec says, and defaults stay defaults.
    """
    out: dict[str, dict[str, Any]] = {}
    for raw_key, value in data.items():
        key = snake(str(raw_key))
        if key == "names" and isinstance(value, str) and base is not None:
            p = Path(value.strip())
            value = str(p if p.is_absolute() else (base / p).resolve())
        entry: dict[str, Any] = {"secret": is_secret(key, value)}
        if isinstance(value, (Mapping, list)):
            entry["value"] = json.dumps(value, separators=(",", ":"))
            entry["objectValue"] = value
        elif isinstance(value, bool):
            entry["value"] = "true" if value else "false"
        elif value is None:
            continue
        else:
            entry["value"] = str(value)
        out[f"fabric:{camel(key)}"] = entry
    return out


def spec_of_config(config: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """(spec data with snake_case keys, the ``fabric:`` keys left out because they are secret).

    ``config`` is the ``pulumi config --json`` answer; scalars are typed back by
    :func:`scalar`, so the spec file reads as one written by hand.
    """
    data: dict[str, Any] = {}
    secrets: list[str] = []
    for full_key, entry in config.items():
        ns, _, key = str(full_key).partition(":")
        if ns != "fabric" or not key or not isinstance(entry, Mapping):
            continue
        if entry.get("secret"):
            secrets.append(str(full_key))
            continue
        if "objectValue" in entry:
            data[snake(key)] = snake_keys(entry["objectValue"])
        else:
            data[snake(key)] = scalar(snake(key), entry.get("value"))
    return data, secrets


def scalar(key: str, text: Any) -> Any:
    """Config text of ``key`` typed as the spec field is (Pulumi keeps every scalar as text):
    ``128`` an int for an int field, ``true`` a bool for a bool; all else stays text, so a
    name ``007`` or a ratio ``2:1`` come back as written."""
    if not isinstance(text, str):
        return text
    field = FabricSpec.model_fields.get(key)
    kind = field.annotation if field is not None else (bool if key in BOOL_KEYS else str)
    if kind is int and re.fullmatch(r"-?[0-9]+", text):
        return int(text)
    if kind is bool and text in ("true", "false"):
        return text == "true"
    return text


def stack_config_values(config: Mapping[str, Any]) -> dict[str, Any]:
    """``pulumi config --json`` reduced to ``{key: value}`` as a program sees it: a secret is
    ``{"secure": …}`` (left to Pulumi by :func:`~fabric_stack.files.config.split_stack_config`),
    a structured value its object."""
    out: dict[str, Any] = {}
    for key, entry in config.items():
        if not isinstance(entry, Mapping):
            continue
        if entry.get("secret"):
            out[str(key)] = {"secure": "[secret]"}
        elif "objectValue" in entry:
            out[str(key)] = entry["objectValue"]
        else:
            out[str(key)] = entry.get("value")
    return out
