"""The operator's names: naming templates and a names file, as spec data.

A plan names its devices by position (``su1-node07``, ``su1-r3-leaf``,
``spine-05``: :mod:`fabric_stack.naming.devices`). A real site has its own names
(``dgx0312``, ``ib-leaf-su1-r3``). Two ways to say so, combinable:

* ``naming:`` templates per role, Python format strings over the fields of
  :data:`TEMPLATE_FIELDS` (``server: "dgx{index:04d}"``);
* a names file (``planned,actual[,rack,u,serial,guid,mac]``): one row per
  device the site names itself; its rows win over the templates.

Names are applied once, by :func:`fabric_stack.topology.rename.rename_topology` at the
end of :func:`~fabric_stack.topology.build.build_topology`, so every export,
artifact, drift report and Pulumi record reads the site's names; each device
keeps its ``planned`` name beside.

A name must be a DNS label (RFC 1123: 1-63 lowercase letters, digits and
``-``, starting and ending with a letter or digit): Kubernetes refuses
anything else as a node name, and switch OSes (MLNX-OS, Cumulus, EOS, SONiC)
accept it as a hostname.
"""

from __future__ import annotations

import re
import string
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

LABEL = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")
"""RFC 1123 label, lowercase (Kubernetes node names; every switch OS hostname)."""

LABEL_TEXT = "1-63 lowercase letters, digits and '-', starting and ending with a letter or digit"

TEMPLATE_FIELDS: dict[str, tuple[str, ...]] = {
    "server": ("su", "index", "pod"),
    "leaf": ("su", "rail", "index", "pod", "plane"),
    "spine": ("index", "pod", "plane"),
    "core": ("index", "group", "plane"),
    "access": ("su", "index", "network", "side"),
    "storage": ("su", "index", "side"),
    "inband": ("su", "index", "side"),
    "oob": ("su", "index", "side"),
    "rack": ("su", "index"),
}
"""Fields each template may use. ``index`` is the device's 1-based number among the
devices of its role (and plane) across the whole cluster, in plan order: servers
number 1…N, leaves (SU-major, rail-minor), spines (pod-major), cores; racks number
the server racks. ``access`` is the default of ``storage``, ``inband`` and ``oob``."""

_STRING_FIELDS = frozenset({"network", "side"})
GUID = re.compile(r"^(?:0x)?[0-9a-fA-F]{1,16}$")
MAC = re.compile(r"^[0-9a-fA-F]{2}([:.-]?[0-9a-fA-F]{2}){5}$")


def check_label(name: str) -> str | None:
    """Why ``name`` is not a usable device name, or None when it is."""
    if LABEL.match(name):
        return None
    return f"{name[:70]!r} is not a valid host name ({LABEL_TEXT})"


MAX_TEMPLATE_CHARS = 200
"""Longest template accepted: a name is at most 63 characters, its template a few more."""

MAX_FORMAT_NUMBER = 63
"""Largest width or precision in a template field: more could never give a host name."""


def _check_bounds(role: str, template: str, parts: list[Any]) -> None:
    """Refuse sizes before anything is formatted: ``{index:0999999999d}`` would build a
    gigabyte string just to find it is not a host name (issue 35: 12.7 GB)."""
    if len(template) > MAX_TEMPLATE_CHARS:
        raise ValueError(
            f"{role}: template of {len(template):,} characters (at most {MAX_TEMPLATE_CHARS})"
        )
    for _, field, spec, _conv in parts:
        if field is None or not spec:
            continue
        if "{" in spec or "}" in spec:
            raise ValueError(f"{role}: {{{field}:{spec[:20]}}}: nested fields are not supported")
        for digits in re.findall(r"\d+", spec):
            if len(digits.lstrip("0")) > 2 or int(digits) > MAX_FORMAT_NUMBER:
                raise ValueError(
                    f"{role}: {{{field}:{spec[:20]}}}: {digits[:20]} is too large for a width "
                    f"or precision (at most {MAX_FORMAT_NUMBER}: a host name has at most 63 "
                    "characters)"
                )


def check_template(role: str, template: str) -> None:
    """Raise ValueError ``<role>: …`` for an unknown field, a bad format or a size that
    could never be a host name (checked before formatting)."""
    allowed = TEMPLATE_FIELDS[role]
    if len(template) > MAX_TEMPLATE_CHARS:  # before parsing: parse is linear, but why pay
        _check_bounds(role, template, [])
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise ValueError(f"{role}: {template[:80]!r}: {exc}") from None
    _check_bounds(role, template, parts)
    literal = "".join(p[0] for p in parts)
    if literal != literal.lower() or re.search(r"[^a-z0-9-]", literal):
        raise ValueError(
            f"{role}: {template!r} has characters a switch OS or Kubernetes would "
            f"reject (names are {LABEL_TEXT})"
        )
    sample: dict[str, Any] = {}
    for _, field, _spec, _conv in parts:
        if field is None:
            continue
        if field == "" or field not in allowed:
            raise ValueError(
                f"{role}: unknown field {{{field}}} in {template!r} "
                f"(fields: {', '.join('{' + f + '}' for f in allowed)})"
            )
        sample[field] = "a" if field in _STRING_FIELDS else 1
    try:
        text = template.format(**sample)
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        raise ValueError(f"{role}: {template!r}: {exc}") from None
    if not text or check_label(text) is not None:
        raise ValueError(
            f"{role}: {template!r} gives {text!r}, not a valid host name ({LABEL_TEXT})"
        )


class NamingTemplates(BaseModel):
    """Per-role name templates (empty: the plan's own names)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    server: str = Field(default="", description="Servers, e.g. 'dgx{index:04d}'.")
    leaf: str = Field(default="", description="Leaves, e.g. 'ib-leaf-su{su}-r{rail}'.")
    spine: str = Field(default="", description="Spines, e.g. 'ib-spine-{index:02d}'.")
    core: str = Field(default="", description="Cores, e.g. 'ib-core-g{group}-{index:03d}'.")
    access: str = Field(
        default="", description="Access switches of every network, e.g. '{network}-{side}{index}'."
    )
    storage: str = Field(default="", description="Storage access switches (overrides access).")
    inband: str = Field(default="", description="In-band access switches (overrides access).")
    oob: str = Field(default="", description="OOB access switches (overrides access).")
    rack: str = Field(default="", description="Server racks, e.g. 'r{index:03d}'.")

    @model_validator(mode="after")
    def _check(self) -> NamingTemplates:
        for role in TEMPLATE_FIELDS:
            tpl = getattr(self, role)
            if tpl:
                check_template(role, tpl)
        return self

    def any(self) -> bool:
        """True when at least one template is set."""
        return any(getattr(self, r) for r in TEMPLATE_FIELDS)

    def for_role(self, role: str) -> tuple[str, str]:
        """(template, key naming it in errors) for a device role ('' when none)."""
        own = getattr(self, role, "") if role in TEMPLATE_FIELDS else ""
        if own:
            return own, role
        if role in ("storage", "inband", "oob") and self.access:
            return self.access, "access"
        return "", role


class SiteName(BaseModel):
    """One row of a names file: a planned device and what the site calls it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    planned: str = Field(description="The plan's default name ('su1-node07', 'spine-03').")
    actual: str = Field(description="The site's name for that device.")
    rack: str = Field(default="", description="The site's rack of the device (optional).")
    u: int = Field(default=0, ge=0, le=60, description="Lowest rack unit (0: keep the plan's).")
    serial: str = Field(default="", description="Serial number (optional).")
    guids: tuple[str, ...] = Field(
        default=(), description="InfiniBand node GUIDs (16 hex digits), several for a server."
    )
    macs: tuple[str, ...] = Field(default=(), description="MAC addresses (chassis or ports).")
    line: int = Field(default=0, description="Line of the names file (0: given inline).")

    @field_validator("actual", "rack")
    @classmethod
    def _label(cls, v: str, info: Any) -> str:
        if info.field_name == "rack" and not v:
            return v
        problem = check_label(v)
        if problem:
            raise ValueError(problem)
        return v

    @field_validator("guids")
    @classmethod
    def _guids(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for g in v:
            if not GUID.match(g):
                raise ValueError(f"{g[:40]!r} is not a GUID (up to 16 hex digits, 0x…)")
        return tuple(f"{int(g, 16):016x}" for g in v)

    @field_validator("macs")
    @classmethod
    def _macs(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for m in v:
            if not MAC.match(m):
                raise ValueError(f"{m[:40]!r} is not a MAC address (like 0c:42:a1:00:00:01)")
        out = []
        for m in v:
            h = re.sub(r"[^0-9a-fA-F]", "", m).lower()
            out.append(":".join(h[i : i + 2] for i in range(0, 12, 2)))
        return tuple(out)


class SiteNames(BaseModel):
    """The names file's rows (or inline rows): planned name → the site's name."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str = Field(default="", description="Where the rows came from (for error lines).")
    rows: tuple[SiteName, ...] = Field(default=(), description="One row per renamed device.")

    @model_validator(mode="before")
    @classmethod
    def _shape(cls, data: Any) -> Any:
        if isinstance(data, list | tuple):
            return {"rows": list(data)}
        if isinstance(data, str):
            raise ValueError(
                f"names: {data[:80]!r} is a file name here; give it with --names FILE, "
                "'names:' in a spec file read by fabric-stack, or fabric:names in stack config"
            )
        return data

    @model_validator(mode="after")
    def _unique(self) -> SiteNames:
        planned: dict[str, int] = {}
        actual: dict[str, int] = {}
        for i, row in enumerate(self.rows):
            where = f"line {row.line}" if row.line else f"row {i + 1}"
            for seen, key, what in (
                (planned, row.planned, "planned"),
                (actual, row.actual, "actual"),
            ):
                if key in seen:
                    raise ValueError(
                        f"{where}: {what} name {key!r} is listed twice "
                        f"(first on {'line' if row.line else 'row'} {seen[key]})"
                    )
                seen[key] = row.line or i + 1
        return self

    def where(self, row: SiteName) -> str:
        """``names.csv:12`` (or ``names[3]`` inline) for error messages."""
        if row.line and self.file:
            return f"{self.file}:{row.line}"
        return f"names[{self.rows.index(row)}]"


__all__ = [
    "LABEL",
    "TEMPLATE_FIELDS",
    "NamingTemplates",
    "SiteName",
    "SiteNames",
    "check_label",
    "check_template",
]
