"""Family ``sonic-defaults``: buffer rows of every config_db.json against SONiC's platform defaults.

Tool: Jinja2 rendering SONiC's own HwSKU templates in place, from
``../shared/schemas/sonic/device/<vendor>/<platform>/<hwsku>/`` (sonic-net/sonic-buildimage@
086b03bd70f9): ``buffers_dynamic.json.j2`` (``buffer_model: dynamic``, else ``buffers.json.j2``),
which sets ``dynamic_mode``/``default_topo`` and includes the generic
``files/build_templates/buffers_config.j2``. That generic template is not in ../shared, so
:data:`DRIVER` stands in for the part of it that picks the defaults file by
``DEVICE_METADATA.type`` (ToRRouter → t0, LeafRouter → t1, SpineRouter → t2) and calls the
SKU's macros for pools, profiles, profile lists, PGs and queue buffers over every port of
the SKU's ``port_config.ini`` (what CONFIG_DB's PORT holds after first boot). The tables it
adds itself (``CABLE_LENGTH``, ``DEFAULT_LOSSLESS_BUFFER_PARAMETER``,
``LOSSLESS_TRAFFIC_PATTERN``) and the QoS defaults of ``qos_config.j2`` cannot be rendered
from ../shared and are not compared (UNVERIFIED; ``tables.json`` lists them).

Per file, with its ``tables.json``:

* a row in a SONiC default table that differs from the rendered default, or is not a
  default row, must be listed as ours;
* every table ``tables.json`` calls SONiC's default must be one the SKU renders;
* every PFC priority of ``PORT_QOS_MAP`` must reach a lossless PG (profile ``NULL`` or a
  profile on ``ingress_lossless_pool``) in the merged view: defaults plus our rows;
* the lossless default PGs ``render sonic`` relies on (``SonicDefaults.lossless_pgs`` in
  ``fabric_stack/nos/sonic.py``) must be what the SKU renders;
* every PORT must be a port of the SKU's ``port_config.ini``, with its lanes and alias;
* a file with ``BREAKOUT_CFG`` (dynamic port breakout) instead: every cage of the platform's
  ``platform.json`` in its BREAKOUT_CFG mode, else the HwSKU's ``hwsku.json`` default, split
  into ports by SONiC's own breakout code (:mod:`validate.sonic_breakout`); each key must be
  a parent port and each mode one the cage offers; every PORT must be one of those ports,
  with its lanes, alias, FEC and a speed of its mode; the buffer templates are rendered over
  that port set; and a ``hwsku.json`` beside the file must give the same ports at first boot.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from validate.core import FileProblem
from validate.sonic_schemas import SONIC_COMMIT, config_dbs, load_json, sonic_dir

DRIVER = """\
{%- set role = DEVICE_METADATA['localhost']['type'] | lower -%}
{%- if 'torrouter' in role -%}{%- set postfix = 't0' -%}
{%- elif 'leafrouter' in role -%}{%- set postfix = 't1' -%}
{%- elif 'spinerouter' in role -%}{%- set postfix = 't2' -%}
{%- else -%}{%- set postfix = default_topo -%}{%- endif -%}
{%- import 'buffers_defaults_%s.j2' % postfix as defs with context -%}
{%- set active = PORT.keys() | join(',') -%}
{
{%- if defs.generate_buffer_pool_and_profiles is defined %}
{{ defs.generate_buffer_pool_and_profiles() }}
{%- else %}
{{ defs.generate_buffer_pool_and_profiles_with_inactive_ports('') }}
{%- endif %}
{%- if defs.generate_profile_lists is defined %}
{{ defs.generate_profile_lists(active) }},
{%- else %}
{{ defs.generate_profile_lists_with_inactive_ports(active, '') }},
{%- endif %}
{%- if defs.generate_pg_profiles_with_inactive_ports is defined %}
{{ defs.generate_pg_profiles_with_inactive_ports(active, '') }},
{%- else %}
{{ defs.generate_pg_profils(active) }}
{%- endif %}
{%- if defs.generate_queue_buffers is defined %}
{{ defs.generate_queue_buffers(active) }}
{%- else %}
{{ defs.generate_queue_buffers_with_inactive_ports(active, '') }}
{%- endif %}
}
"""
"""Our stand-in for buffers_config.j2 (sonic-buildimage files/build_templates/, same commit):
its topology choice and macro calls, with every port active (no DEVICE_NEIGHBOR)."""

BUFFER_TABLES = (
    "BUFFER_POOL",
    "BUFFER_PROFILE",
    "BUFFER_PORT_INGRESS_PROFILE_LIST",
    "BUFFER_PORT_EGRESS_PROFILE_LIST",
    "BUFFER_PG",
    "BUFFER_QUEUE",
)
"""The tables the SKU's buffer templates render (what this family compares)."""


class SonicDefaultsValidator:
    """Our buffer rows against the HwSKU's defaults rendered from SONiC's templates."""

    name = "sonic-defaults"

    @property
    def tool(self) -> str:
        """The templates, and what derives a BREAKOUT_CFG file's ports (SONiC's code or ours)."""
        from validate.sonic_breakout import deriver

        return f"SONiC buffer templates (Jinja2) + {deriver().name}"

    def missing(self) -> str | None:
        """Why the check cannot run: no Jinja2 or no SONiC device folder in ../shared."""
        try:
            import jinja2  # noqa: F401  (only probing that it is installed)
        except ImportError:
            return "Jinja2 not installed (pip install jinja2)"
        base = sonic_dir()
        if base is None or not (base / "device").is_dir():
            return "SONiC device files not found under ../shared/schemas/sonic (SOURCES.md)"
        return None

    def select(self, root: Path) -> list[Path]:
        """Every ``sonic/<switch>/config_db.json``."""
        return config_dbs(root)

    def check(self, root: Path, files: Sequence[Path]) -> list[FileProblem]:
        """Each file against the defaults of the HwSKU its DEVICE_METADATA names."""
        problems: list[FileProblem] = []
        for path in files:
            rel = str(path.relative_to(root))
            problems += [FileProblem(rel, m) for m in judge_file(path)]
        return problems


def judge_file(path: Path) -> list[str]:
    """What is wrong with one config_db.json against its platform defaults."""
    db = load_json(path)
    decl_path = path.with_name("tables.json")
    if not decl_path.is_file():
        return ["no tables.json beside it: nothing says which rows are ours"]
    decl = load_json(decl_path)
    meta = db.get("DEVICE_METADATA", {}).get("localhost", {})
    sku = sku_dir(str(meta.get("platform", "")), str(meta.get("hwsku", "")))
    if sku is None:
        return [f"no SONiC device folder for {meta.get('platform')}/{meta.get('hwsku')}"]
    if "BREAKOUT_CFG" in db:
        derived, problems = breakout_ports(db, sku)
        problems += check_hwsku_json(path, sku, derived)
        problems += check_breakout_ports(db, derived, sku)
        names = tuple(derived)
    else:
        ini = port_config(sku)
        problems = check_ports(db, ini, sku)
        names = tuple(ini)
    try:
        defaults = render_defaults(sku, tuple(sorted(meta.items())), names)
    except Exception as e:  # Jinja2's own error (a missing defaults file, a bad template)
        return [*problems, f"{sku.name}: SONiC's buffer templates do not render: {e}"]
    where = f"{sku.name}/{template_of(meta)} ({SONIC_COMMIT})"
    problems += check_rows(db, decl, defaults, where)
    problems += check_declaration(decl, defaults, where)
    problems += check_lossless(db, defaults, where)
    return problems


def sku_dir(platform: str, hwsku: str) -> Path | None:
    """``device/<vendor>/<platform>/<hwsku>/`` in ../shared, or None."""
    base = sonic_dir()
    if base is None or not platform or not hwsku:
        return None
    found = sorted((base / "device").glob(f"*/{platform}/{hwsku}"))
    return found[0] if found and found[0].is_dir() else None


def template_of(meta: dict[str, Any]) -> str:
    """The HwSKU template sonic-cfggen renders for this buffer model."""
    dynamic = meta.get("buffer_model") == "dynamic"
    return "buffers_dynamic.json.j2" if dynamic else "buffers.json.j2"


def breakout_ports(db: dict[str, Any], sku: Path) -> tuple[dict[str, Port], list[str]]:
    """The ports SONiC runs for a file with BREAKOUT_CFG, and what is wrong with its rows:
    every cage of ``platform.json`` in its BREAKOUT_CFG mode, else in the HwSKU's
    ``hwsku.json`` default (what first boot made of it), split by SONiC's breakout code
    (:mod:`validate.sonic_breakout`). DPB needs hwsku.json (SONiC DPB HLD, sonic-net/SONiC
    doc/dynamic-port-breakout/sonic-dynamic-port-breakout-HLD.md: "In case they are
    missing, DPB changes would fail at CLI phase")."""
    from validate.sonic_breakout import deriver

    platform = json.loads((sku.parent / "platform.json").read_text())["interfaces"]
    cfg = {k: str(v.get("brkout_mode", "")) for k, v in db["BREAKOUT_CFG"].items()}
    problems = [
        f"BREAKOUT_CFG|{k}: not a parent port of {sku.parent.name}/platform.json"
        for k in cfg
        if k not in platform
    ]
    default_file = sku / "hwsku.json"
    if not default_file.is_file():
        return {}, [*problems, f"{sku.name} has no hwsku.json: SONiC cannot break its ports out"]
    defaults = json.loads(default_file.read_text())["interfaces"]
    ports: dict[str, Port] = {}
    for parent, props in platform.items():
        mode = cfg.get(parent) or defaults.get(parent, {}).get("default_brkout_mode")
        if mode is None:
            continue
        if parent in cfg and mode not in props["breakout_modes"]:
            # sonic-utilities config/main.py _validate_interface_mode: the exact key, or
            # "[ERROR] Target mode … is not available for the port".
            problems.append(
                f"BREAKOUT_CFG|{parent}: {mode!r} is not one of the cage's modes as "
                f"{sku.parent.name}/platform.json spells them (`config interface breakout` "
                "takes only those)"
            )
        try:
            children, speeds = deriver().child_ports(parent, mode, props)
        except RuntimeError as e:  # SONiC's own refusal of a mode the cage does not offer
            problems.append(f"BREAKOUT_CFG|{parent}: {e} ({sku.parent.name}/platform.json)")
            continue
        for name, row in children.items():
            ports[name] = Port(row, frozenset(str(s) for s in speeds), parent, mode)
    return ports, problems


@dataclass(frozen=True)
class Port:
    """A port SONiC derives for a cage's breakout mode."""

    fields: dict[str, str]
    """What SONiC's code gives it (alias, lanes, default speed, fec…)."""
    speeds: frozenset[str]
    """Every speed (Mb/s, as PORT writes it) the mode lets it run at."""
    parent: str
    """The cage's parent port."""
    mode: str
    """The cage's breakout mode."""


def check_breakout_ports(db: dict[str, Any], ports: dict[str, Port], sku: Path) -> list[str]:
    """Every PORT row is a port SONiC derives for its cage's mode, with its lanes, alias, a
    speed of the mode and SONiC's FEC where it sets one."""
    out = []
    where = f"{sku.parent.name}/platform.json"
    for name, row in db.get("PORT", {}).items():
        port = ports.get(name)
        if port is None:
            out.append(
                f"PORT|{name}: SONiC derives no such port from {where} in BREAKOUT_CFG's modes"
            )
            continue
        for field in ("lanes", "alias", "fec"):
            want = port.fields.get(field)
            if field in row and want is not None and row[field] != want:
                out.append(
                    f"PORT|{name}: {field} {row[field]!r} is not {want!r}, what SONiC derives "
                    f"for {port.parent} in {port.mode} ({where})"
                )
        if "speed" in row and row["speed"] not in port.speeds:
            out.append(
                f"PORT|{name}: speed {row['speed']} is not one of {port.mode}'s "
                f"({', '.join(sorted(port.speeds, key=int))}; {where})"
            )
    return out


def check_hwsku_json(path: Path, sku: Path, ports: dict[str, Port]) -> list[str]:
    """A ``hwsku.json`` beside the file gives, at first boot, the ports BREAKOUT_CFG does."""
    from validate.sonic_breakout import deriver

    mine = path.with_name("hwsku.json")
    if not mine.is_file():
        return []
    try:
        booted = deriver().hwsku_ports(mine, sku.parent / "platform.json")
    except (RuntimeError, KeyError) as e:
        return [f"hwsku.json: SONiC's parse_platform_json_file refuses it: {e!r}"]
    wrong = sorted(
        n
        for n in set(booted) | {n for n, p in ports.items() if p.parent in _parents(mine)}
        if n not in ports or n not in booted or booted[n]["lanes"] != ports[n].fields["lanes"]
    )
    if not wrong:
        return []
    return [f"hwsku.json: first boot gives other ports than BREAKOUT_CFG: {', '.join(wrong[:4])}…"]


def _parents(hwsku_json: Path) -> set[str]:
    return set(json.loads(hwsku_json.read_text()).get("interfaces", {}))


def port_config(sku: Path) -> dict[str, tuple[str, str]]:
    """Port name → (lanes, alias) of the SKU's ``port_config.ini``."""
    out: dict[str, tuple[str, str]] = {}
    for line in (sku / "port_config.ini").read_text().splitlines():
        cols = line.split()
        if cols and not cols[0].startswith("#") and len(cols) >= 3:
            out[cols[0]] = (cols[1], cols[2])
    return out


def check_ports(db: dict[str, Any], ports: dict[str, tuple[str, str]], sku: Path) -> list[str]:
    """Every PORT row names a port of ``port_config.ini`` with its lanes and alias."""
    out = []
    for name, row in db.get("PORT", {}).items():
        if name not in ports:
            out.append(f"PORT|{name}: not a port of {sku.name}/port_config.ini")
            continue
        lanes, alias = ports[name]
        for field, want in (("lanes", lanes), ("alias", alias)):
            if field in row and row[field] != want:
                out.append(
                    f"PORT|{name}: {field} {row[field]!r} is not {sku.name}/port_config.ini's "
                    f"{want!r}"
                )
    return out


@lru_cache(maxsize=32)
def render_defaults(
    sku: Path, meta_items: tuple[tuple[str, Any], ...], ports: tuple[str, ...]
) -> dict[str, dict[str, dict[str, str]]]:
    """SONiC's buffer defaults for the SKU, DEVICE_METADATA (as items: cached) and ports,
    rendered from its templates."""
    import jinja2

    meta = dict(meta_items)
    loader = jinja2.ChoiceLoader(
        [jinja2.FileSystemLoader(str(sku)), jinja2.DictLoader({"buffers_config.j2": DRIVER})]
    )
    env = jinja2.Environment(loader=loader, extensions=["jinja2.ext.do"])
    text = env.get_template(template_of(meta)).render(
        DEVICE_METADATA={"localhost": meta}, PORT={p: {} for p in ports}
    )
    data = json.loads(text)
    assert isinstance(data, dict)
    return data


def _ours(decl: dict[str, Any], table: str) -> set[str]:
    rows = decl.get("ours", {}).get(table, [])
    return set(rows) if isinstance(rows, list) else set()


def check_rows(
    db: dict[str, Any], decl: dict[str, Any], defaults: dict[str, Any], where: str
) -> list[str]:
    """A default table's row that is new or differs from SONiC's must be listed as ours."""
    out = []
    for table in BUFFER_TABLES:
        ours = _ours(decl, table)
        default = defaults.get(table, {})
        for key, row in db.get(table, {}).items():
            if key in ours:
                continue
            if key not in default:
                out.append(
                    f"{table}|{key}: not a SONiC default row ({where}) and tables.json does "
                    "not list it as ours"
                )
                continue
            for field in sorted(set(row) | set(default[key])):
                got, want = row.get(field), default[key].get(field)
                if got != want:
                    what = "missing" if got is None else f"{got!r} differs"
                    out.append(
                        f"{table}|{key}: {field} {what} from SONiC's default {want!r} "
                        f"({where}) and tables.json does not list it as ours"
                    )
    return out


def check_declaration(decl: dict[str, Any], defaults: dict[str, Any], where: str) -> list[str]:
    """Every table tables.json calls SONiC's default is one the SKU renders."""
    named = decl.get("sonic_defaults", {}).get("tables", [])
    return [
        f"tables.json: {table} is called a SONiC default but {where} renders no {table}"
        for table in named
        if table not in defaults
    ]


def check_lossless(db: dict[str, Any], defaults: dict[str, Any], where: str) -> list[str]:
    """PFC priorities reach a lossless PG in defaults + ours; the recorded default PGs hold."""
    merged = {**defaults.get("BUFFER_PG", {}), **db.get("BUFFER_PG", {})}
    profiles = {**defaults.get("BUFFER_PROFILE", {}), **db.get("BUFFER_PROFILE", {})}
    lossless: dict[str, set[int]] = {}
    for key, row in merged.items():
        port, _, pgs = key.partition("|")
        prof = row.get("profile", "")
        if prof == "NULL" or profiles.get(prof, {}).get("pool") == "ingress_lossless_pool":
            lossless.setdefault(port, set()).update(_range(pgs))
    out = check_recorded(defaults, where)
    for port, row in db.get("PORT_QOS_MAP", {}).items():
        pg_map = db.get("TC_TO_PRIORITY_GROUP_MAP", {}).get(row.get("tc_to_pg_map", ""), {})
        for prio in (int(p) for p in str(row.get("pfc_enable", "")).split(",") if p):
            pg = int(pg_map.get(str(prio), prio))
            if pg not in lossless.get(port, set()):
                out.append(
                    f"PORT_QOS_MAP|{port}: PFC on priority {prio} (PG {pg}) but no lossless "
                    f"BUFFER_PG for PG {pg} in SONiC's defaults ({where}) or ours"
                )
    return out


def check_recorded(defaults: dict[str, Any], where: str) -> list[str]:
    """The lossless default PGs ``render sonic`` relies on (SONiC's platform defaults in
    :mod:`fabric_stack.nos.sonic`) equal the SKU's."""
    from fabric_stack.nos.sonic import SONIC_DEFAULTS

    recorded = SONIC_DEFAULTS.lossless_pgs
    seen: set[int] = set()
    for key, row in defaults.get("BUFFER_PG", {}).items():
        if row.get("profile") == "NULL":
            seen.update(_range(key.partition("|")[2]))
    if seen == set(recorded):
        return []
    return [
        f"render sonic records lossless default PGs {sorted(recorded)}, "
        f"but {where} renders {sorted(seen)}"
    ]


def _range(text: str) -> range:
    lo, _, hi = text.partition("-")
    return range(int(lo), int(hi or lo) + 1)


VALIDATOR = SonicDefaultsValidator()
