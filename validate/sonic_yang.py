"""Family ``sonic-yang``: every ``sonic/*/config_db.json`` against SONiC's own YANG models.

Tool: libyang's ``yanglint`` (Debian ``libyang2-tools``, scripts/validate-deps.sh) over the
142 modules of ``../shared/schemas/sonic/src/sonic-yang-models/yang-models/`` plus the four
``yang-templates/*.yang.j2`` rendered with ``yang_model_type="py"`` (what the sonic-yang-models
build renders for the Python ``sonic_yang``; the ``cvl`` branch is for the management
framework) into a temporary folder.

The config_db → YANG instance mapping is ours and follows ``sonic_yang_ext.py`` of
sonic-net/sonic-buildimage@086b03bd70f9 (``src/sonic-yang-mgmt``): a table is the container
of that name under a module's top-level container; a ``a|b`` key fills the keys of the first
list whose key count matches and that has every field as a leaf (``_xlateContainer`` with
several lists); a keyless table holds inner containers (``DEVICE_METADATA|localhost``);
the "type 1" maps (``DSCP_TO_TC_MAP_LIST`` …) turn each field into an inner list entry;
leaf-lists stored as comma strings are split (``LEAF_LIST_WITH_STRING_VALUE_DICT``). List
keys and leaves come from the models themselves (``yanglint -f tree``). The instance is
written as XML so libyang types every value from the schema (no JSON number encoding).

A table no model covers is a rejection: SONiC's ``sonic_yang`` would crop it
(``tablesWithOutYangModels``) and ``config apply-patch`` could never touch it, so a renderer
writing it is writing something SONiC does not define.
"""

from __future__ import annotations

import atexit
import re
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from validate.core import FileProblem
from validate.sonic_schemas import config_dbs, load_json, sonic_dir

YANG_MODELS = "src/sonic-yang-models/yang-models"
YANG_TEMPLATES = "src/sonic-yang-models/yang-templates"

TYPE1_MAPS = frozenset(
    {
        "DSCP_TO_TC_MAP_LIST",
        "DOT1P_TO_TC_MAP_LIST",
        "TC_TO_PRIORITY_GROUP_MAP_LIST",
        "TC_TO_QUEUE_MAP_LIST",
        "MAP_PFC_PRIORITY_TO_QUEUE_LIST",
        "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP_LIST",
        "DSCP_TO_FC_MAP_LIST",
        "EXP_TO_FC_MAP_LIST",
        "CABLE_LENGTH_LIST",
        "MPLS_TC_TO_TC_MAP_LIST",
        "TC_TO_DSCP_MAP_LIST",
    }
)
"""``Type_1_list_maps_model`` of sonic_yang_ext.py: rows whose fields are inner list entries."""

STRING_LEAF_LISTS = {
    ("MIRROR_SESSION", "src_ip"): ",",
    ("NTP", "src_intf"): ";",
    ("BGP_ALLOWED_PREFIXES", "prefixes_v4"): ",",
    ("BGP_ALLOWED_PREFIXES", "prefixes_v6"): ",",
    ("BUFFER_PORT_EGRESS_PROFILE_LIST", "profile_list"): ",",
    ("BUFFER_PORT_INGRESS_PROFILE_LIST", "profile_list"): ",",
    ("PORT", "adv_speeds"): ",",
    ("PORT", "adv_interface_types"): ",",
}
"""``LEAF_LIST_WITH_STRING_VALUE_DICT`` of sonic_yang_ext.py: leaf-lists stored as one string."""


@dataclass
class Node:
    """One schema node of ``yanglint -f tree``: a container, list, leaf or leaf-list."""

    name: str
    kind: str  # container | list | leaf | leaf-list
    keys: tuple[str, ...] = ()
    children: dict[str, Node] = field(default_factory=dict)

    def of_kind(self, kind: str) -> list[Node]:
        """The children of one kind, in schema order."""
        return [c for c in self.children.values() if c.kind == kind]


@dataclass(frozen=True)
class Table:
    """Where a CONFIG_DB table lives: module, its XML namespace, and the table's container."""

    module: str
    namespace: str
    container: Node


_TREE_LINE = re.compile(r"^(?P<pad>[ |]*)\+--(?P<flags>rw|ro|x|n|-[nw]|:) ?(?P<rest>.*)$")


class SonicYangValidator:
    """``yanglint`` over each config_db.json, translated to SONiC's YANG instance data."""

    name = "sonic-yang"
    tool = "yanglint (libyang) + SONiC YANG"

    def missing(self) -> str | None:
        """Why the check cannot run: no yanglint or no SONiC models in ../shared/schemas."""
        if shutil.which("yanglint") is None:
            return "yanglint not found: scripts/validate-deps.sh installs libyang2-tools"
        base = sonic_dir()
        if base is None or not (base / YANG_MODELS).is_dir():
            return "SONiC YANG models not found under ../shared/schemas/sonic (SOURCES.md)"
        return None

    def select(self, root: Path) -> list[Path]:
        """Every ``sonic/<switch>/config_db.json``."""
        return config_dbs(root)

    def check(self, root: Path, files: Sequence[Path]) -> list[FileProblem]:
        """Translate every file, then one yanglint run over all of them (re-run past a failure)."""
        models = model_dir()
        tables = schema_index(str(models))
        problems: list[FileProblem] = []
        with tempfile.TemporaryDirectory(prefix="sonic-yang-") as tmp:
            xml_of: dict[Path, Path] = {}
            for i, path in enumerate(files):
                rel = str(path.relative_to(root))
                instance, found = translate(load_json(path), tables)
                problems += [FileProblem(rel, m) for m in found]
                out = Path(tmp) / f"{i}.xml"
                out.write_text(instance)
                xml_of[out] = path
            problems += run_yanglint(
                models, list(xml_of), {x: str(p.relative_to(root)) for x, p in xml_of.items()}
            )
        return problems


def run_yanglint(models: Path, xmls: list[Path], names: dict[Path, str]) -> list[FileProblem]:
    """yanglint stops at the first file it refuses and names it: report that file's libyang
    errors and go on with the files after it (one run when every file is accepted)."""
    modules = sorted(str(p) for p in models.glob("*.yang"))
    problems: list[FileProblem] = []
    pending = xmls
    while pending:
        cmd = ["yanglint", "-Q", "-t", "config", "-p", str(models), *modules, *map(str, pending)]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode == 0:
            break
        failed = re.search(r'input data file "([^"]+)"', done.stderr)
        errors = [ln for ln in done.stderr.splitlines() if ln.startswith("libyang err")]
        if failed is None or Path(failed.group(1)) not in names:
            target = names[pending[0]] if len(pending) == 1 else "(batch)"
            return [
                *problems,
                FileProblem(target, done.stderr.strip() or f"exit {done.returncode}"),
            ]
        bad = Path(failed.group(1))
        msgs = errors or [done.stderr.strip()]
        problems += [FileProblem(names[bad], m.removeprefix("libyang err : ")) for m in msgs]
        pending = pending[pending.index(bad) + 1 :]
    return problems


@lru_cache(maxsize=1)
def model_dir() -> Path:
    """SONiC's models in one folder: the shared ``.yang`` files linked, the ``.yang.j2``
    templates rendered with ``yang_model_type="py"`` (kept for the process's lifetime)."""
    import jinja2  # the venv has it (the project's templates); only this family needs it here

    base = sonic_dir()
    assert base is not None, "missing() guards this"
    out = Path(tempfile.mkdtemp(prefix="sonic-yang-models-"))
    atexit.register(shutil.rmtree, out, True)  # cached for the run; gone when it ends
    for src in (base / YANG_MODELS).glob("*.yang"):
        (out / src.name).symlink_to(src)
    for tpl in (base / YANG_TEMPLATES).glob("*.yang.j2"):
        text = jinja2.Template(tpl.read_text()).render(yang_model_type="py")
        (out / tpl.name.removesuffix(".j2")).write_text(text)
    return out


@lru_cache(maxsize=1)
def schema_index(models: str) -> dict[str, Table]:
    """CONFIG_DB table → its module, namespace and container, from ``yanglint -f tree``."""
    files = sorted(Path(models).glob("*.yang"))
    cmd = ["yanglint", "-Q", "-f", "tree", "-p", models, *map(str, files)]
    tree = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    spaces = {f.stem: _namespace(f) for f in files}
    index: dict[str, Table] = {}
    for module, top in parse_tree(tree).items():
        for table in top.of_kind("container"):
            index[table.name] = Table(module, spaces[module], table)
    return index


def _namespace(path: Path) -> str:
    found = re.search(r'^\s*namespace\s+"([^"]+)"', path.read_text(), re.M)
    return found.group(1) if found else ""


def parse_tree(text: str) -> dict[str, Node]:
    """Module name → its top-level container (only modules that have one), from tree output.
    Choices and cases are transparent, as sonic_yang_ext's leaf lookup sees them."""
    tops: dict[str, Node] = {}
    module = ""
    stack: list[tuple[int, Node]] = []
    in_data = False
    for line in text.splitlines():
        if line.startswith("module: "):
            module, stack, in_data = line.split()[1], [], True
            continue
        if line.startswith("  ") and line.strip().endswith(":") and "+--" not in line:
            in_data = False  # augment / rpcs / notifications sections
            continue
        m = _TREE_LINE.match(line)
        if not in_data or m is None:
            continue
        depth = len(m.group("pad"))
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parent = stack[-1][1] if stack else None
        if m.group("rest").startswith("("):  # a choice or a case
            if parent is not None:
                stack.append((depth, parent))  # children attach to the choice's parent
            continue
        node = _node(m.group("rest"))
        if parent is None:
            if node.kind == "container":
                tops[module] = node
        else:
            parent.children[node.name] = node
        stack.append((depth, node))
    return tops


def _node(rest: str) -> Node:
    words = rest.split()
    raw = words[0]
    if raw.endswith("*") and len(words) > 1 and words[1].startswith("["):
        keys = " ".join(words[1:]).split("]")[0].strip("[").split()
        return Node(raw[:-1], "list", tuple(keys))
    if len(words) == 1:
        return Node(raw.rstrip("!"), "container")
    if raw.endswith("*"):
        return Node(raw[:-1], "leaf-list")
    return Node(raw.rstrip("?"), "leaf")


def translate(db: dict[str, Any], tables: dict[str, Table]) -> tuple[str, list[str]]:
    """The YANG instance (XML) of a config_db and what could not be mapped."""
    problems: list[str] = []
    roots: dict[str, ET.Element] = {}
    for name, rows in db.items():
        table = tables.get(name)
        if table is None:
            problems.append(f"table {name}: no SONiC YANG model defines it (sonic_yang crops it)")
            continue
        if table.module not in roots:
            roots[table.module] = ET.Element(table.module, xmlns=table.namespace)
        holder = ET.SubElement(roots[table.module], name)
        problems += _fill(name, table.container, rows, holder)
    # libyang reads several top-level elements in one file (one per module), as sonic_yang
    # loads one tree with every module's container.
    return "\n".join(ET.tostring(r, encoding="unicode") for r in roots.values()) + "\n", problems


def _fill(table: str, node: Node, rows: dict[str, Any], holder: ET.Element) -> list[str]:
    lists = node.of_kind("list")
    if not lists:  # keyless table: each row is an inner container (DEVICE_METADATA|localhost)
        out = []
        for key, row in rows.items():
            inner = node.children.get(key)
            if inner is None or inner.kind != "container":
                out.append(f"{table}|{key}: {table} has no container {key}")
                continue
            out += _leaves(table, key, inner, row, ET.SubElement(holder, key))
        return out
    if len(lists) == 1 and lists[0].name != f"{table}_LIST":
        return [
            f"table {table}: its list {lists[0].name} is not {table}_LIST (sonic_yang skips it)"
        ]
    out = []
    for key, row in rows.items():
        why = [_try_list(table, lst, key, row, holder) for lst in lists]
        if all(why):
            out.append(f"{table}|{key}: fits no list of {table}: " + "; ".join(w for w in why if w))
    return out


def _try_list(table: str, lst: Node, key: str, row: dict[str, Any], holder: ET.Element) -> str:
    """Add the row as an entry of ``lst`` and return "", or why it does not fit."""
    parts = key.split("|")
    if len(parts) != len(lst.keys):
        return f"{lst.name} has {len(lst.keys)} key(s) [{' '.join(lst.keys)}], not {len(parts)}"
    if lst.name in TYPE1_MAPS:
        inner = lst.of_kind("list")[0]
        ikey = inner.keys[0]
        ival = next(c for c in inner.of_kind("leaf") if c.name != ikey).name
        entry = _entry(holder, lst, parts)
        for field_name, value in row.items():
            item = ET.SubElement(entry, inner.name)
            ET.SubElement(item, ikey).text = field_name
            ET.SubElement(item, ival).text = str(value)
        return ""
    unknown = [f for f in row if f not in lst.children or lst.children[f].kind == "list"]
    if unknown:
        return f"{lst.name} has no leaf {', '.join(unknown)}"
    _leaves(table, key, lst, row, _entry(holder, lst, parts))
    return ""


def _entry(holder: ET.Element, lst: Node, parts: list[str]) -> ET.Element:
    entry = ET.SubElement(holder, lst.name)
    for k, v in zip(lst.keys, parts, strict=True):
        ET.SubElement(entry, k).text = v.strip()
    return entry


def _leaves(table: str, key: str, node: Node, row: dict[str, Any], el: ET.Element) -> list[str]:
    out = []
    for name, value in row.items():
        child = node.children.get(name)
        if child is None or child.kind not in ("leaf", "leaf-list"):
            out.append(f"{table}|{key}: {node.name} has no leaf {name}")
            continue
        if name in node.keys:
            continue  # already written as the entry's key
        for v in _values(table, name, child, value):
            ET.SubElement(el, name).text = v
    return out


def _values(table: str, name: str, leaf: Node, value: Any) -> list[str]:
    if leaf.kind == "leaf":
        return [str(value)]
    if isinstance(value, list):
        return [str(v) for v in value if v != ""]
    sep = STRING_LEAF_LISTS.get((table, name))
    return [v.strip() for v in str(value).split(sep)] if sep else [str(value)]


VALIDATOR = SonicYangValidator()
