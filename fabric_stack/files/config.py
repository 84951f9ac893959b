"""Reading a FabricSpec from files: a spec YAML, or a Pulumi stack's ``fabric:`` config.

YAML is read with a loader that keeps ``2:1`` a string (PyYAML's YAML 1.1
would read it as the base-60 integer 121) and reports errors with the line.
Pulumi config keys are camelCase (``fabric:gpusPerNode``); nested structured
config may use either case. Keys that configure the stack rather than the
fabric (``inventory``) are returned separately.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fabric_stack.errors import InputFileError, SpecError
from fabric_stack.files import inputs
from fabric_stack.files.names_file import load_names
from fabric_stack.spec.model import FabricSpec, validate_spec

STACK_ONLY_KEYS = (
    "inventory",
    "granularity",
    "netbox_token",
    "netbox_branch",
    "config_records",
)
"""``fabric:`` config keys that are not part of the spec."""


def load_yaml(path: str | Path) -> Any:
    """Parse a YAML file through the input layer; errors name the file and line."""
    return inputs.load_yaml(path)


_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def snake(key: str) -> str:
    """``gpusPerNode`` → ``gpus_per_node`` (snake keys pass through)."""
    return _CAMEL.sub("_", key).lower()


def snake_keys(value: Any) -> Any:
    """Recursively convert mapping keys to snake_case."""
    if isinstance(value, Mapping):
        return {snake(str(k)): snake_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [snake_keys(v) for v in value]
    return value


STACK_FILE_KEYS = frozenset(
    {"config", "encryptionsalt", "secretsprovider", "encryptedkey", "environment"}
)
"""Top-level keys of a Pulumi.<stack>.yaml: a new stack's file has only its
``encryptionsalt`` (no ``config`` yet) and plans the defaults."""


def spec_from_file(path: str | Path, **overrides: Any) -> FabricSpec:
    """Read a spec YAML (FabricSpec fields at the top level) or a Pulumi stack file.

    A spec YAML's stack keys (:data:`STACK_ONLY_KEYS`: ``inventory``, ``netbox_branch``…)
    are left to ``fabric-stack stack init``: they configure a stack, not the fabric.
    """
    data = load_yaml(path)
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise InputFileError(str(path), "expected a mapping of spec fields at the top level")
    stacked = is_stack_file(data)
    if stacked:
        config = data.get("config")
        if config is not None and not isinstance(config, Mapping):
            raise InputFileError(
                str(path),
                f"expected a mapping of 'fabric:KEY: value' settings, got "
                f"{type(config).__name__} (see Pulumi.example.yaml)",
                "$.config",
            )
        data, _ = split_stack_config(config or {})
    else:  # a spec file may carry the stack's keys too (`stack init --from`): not spec fields
        data = {k: v for k, v in data.items() if snake(str(k)) not in STACK_ONLY_KEYS}
    data = with_names_file(snake_keys(data), Path(path).parent)
    try:
        return validate_spec(data, **overrides)
    except SpecError as exc:
        # A stack file's line names the key as that file spells it (fabric:uplinkGbps).
        flagged = {k for k, v in overrides.items() if v is not None}
        said = stack_config_error(exc) if stacked and field_head(exc) not in flagged else exc
        raise InputFileError(str(path), said.message) from None


def field_head(exc: SpecError) -> str:
    """The top-level spec field an error names (``infiniband`` of ``infiniband.sharp``)."""
    return exc.field.partition(".")[0]


def is_stack_file(data: object) -> bool:
    """Whether loaded YAML ``data`` is a Pulumi.<stack>.yaml (its spec under ``config:`` as
    ``fabric:camelCase`` keys) rather than a spec file (snake_case fields at the top)."""
    if not isinstance(data, Mapping):
        return False
    return isinstance(data.get("config"), Mapping) or bool(data and set(data) <= STACK_FILE_KEYS)


def with_names_file(data: dict[str, Any], base: Path) -> dict[str, Any]:
    """``data`` with a ``names: FILE`` entry read (a relative path is relative to ``base``)."""
    names = data.get("names")
    if isinstance(names, str) and names.strip():
        p = Path(names.strip())
        data = {**data, "names": load_names(p if p.is_absolute() else base / p)}
    return data


def split_stack_config(config: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split Pulumi config (``{"fabric:gpus": 128, ...}``) into (spec data, stack settings).

    Values Pulumi hands a program arrive as strings (structured values as JSON
    text); they are decoded here so the spec sees numbers and mappings.
    """
    spec: dict[str, Any] = {}
    stack: dict[str, Any] = {}
    for full_key, raw in config.items():
        ns, _, key = str(full_key).partition(":")
        if ns != "fabric" or not key:
            continue
        value = _decode(raw)
        if isinstance(value, Mapping) and "secure" in value and len(value) == 1:
            stack[snake(key)] = value  # an encrypted secret: leave it to Pulumi
            continue
        if snake(key) in STACK_ONLY_KEYS:
            stack[snake(key)] = value
        else:
            spec[snake(key)] = snake_keys(value)
    return spec, stack


def _decode(raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    text = raw.strip()
    if text[:1] in "{[":
        try:
            return inputs.parse_json(text, "stack config")
        except (ValueError, InputFileError):
            return raw
    return raw


def spec_from_stack_config(
    config: Mapping[str, Any], source: str = "stack config", base: Path | None = None
) -> FabricSpec:
    """Build the spec from Pulumi config; errors read like ``fabric:gpusPerNode: …``.

    ``fabric:names`` (a names file) is read relative to ``base`` (default: the cwd,
    which is the project directory when Pulumi runs the program).
    """
    data, _ = split_stack_config(config)
    data = with_names_file(data, base or Path.cwd())
    try:
        return validate_spec(data)
    except SpecError as exc:
        raise stack_config_error(exc) from None


def stack_config_error(exc: SpecError) -> SpecError:
    """``exc`` with its field spelled as stack config spells it (``fabric:gpusPerNode…``).

    The Pulumi program reports every spec error this way, from validation and from the
    stages alike, so a line names the key the user set in ``Pulumi.<stack>.yaml``.
    """
    head, _, rest = exc.field.partition(".")
    camel = re.sub(r"_([a-z])", lambda m: m.group(1).upper(), head)
    return SpecError(f"fabric:{camel}{'.' + rest if rest else ''}", exc.problem, exc.valid)
