"""Drift sources: every reader `drift` and `adopt` take, each described once, in one table.

An entry of :data:`SOURCES` holds everything about one source: its name, its CLI
option (flag, what the value is, help text), the options only it reads
(``--node-name-map``), the networks it sees, and how its reader is built from the
option's value and the shared options. The commands take their options and their
readers from here (:mod:`fabric_stack.cli.sources` adds the click options), so a new
source is one entry: it is offered by the commands in its ``commands``, after the
sources :data:`LAYOUTS` places.

Two steps, because a command checks its options before it loads the spec and builds
its readers after: :func:`select_sources` takes the parsed options and checks them
(an option without its source, the NetBox URL and token, no source at all: one
:class:`SourceOptionError` line each, as the CLI always printed them);
:meth:`Selection.readers` builds the readers once the names file and the progress
bar are known.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from fabric_stack.adapters.discovery._common import Progress, Reader
from fabric_stack.adapters.discovery.eos import EosReader
from fabric_stack.adapters.discovery.ibdiagnet import IbdiagnetReader
from fabric_stack.adapters.discovery.iblinkinfo import IblinkinfoReader
from fabric_stack.adapters.discovery.ibnetdiscover import IbnetdiscoverReader
from fabric_stack.adapters.discovery.inventory import InventoryReader
from fabric_stack.adapters.discovery.k8s_nodes import K8sNodesReader
from fabric_stack.adapters.discovery.lldp import LldpReader
from fabric_stack.adapters.discovery.netbox import NetboxCsvReader, NetboxJsonReader
from fabric_stack.adapters.discovery.netbox_live import NetboxApiReader
from fabric_stack.adapters.discovery.nvue import NvueReader
from fabric_stack.adapters.discovery.slurm_topology import SlurmTopologyReader
from fabric_stack.adapters.discovery.sonic_config import SonicConfigReader
from fabric_stack.adapters.inventory.netbox.branching import check_branch_name, with_branch
from fabric_stack.errors import DeclarationError, FabricStackError
from fabric_stack.files.inputs import read_secret
from fabric_stack.text.redact import mask_url

Takes = Literal["file", "dir", "url", "slug"]
"""What an option's value is: a file, a directory, a URL or a NetBox slug."""

_METAVAR: dict[str, str] = {"file": "FILE", "dir": "DIR", "url": "URL", "slug": "SLUG"}

EVERY_NETWORK = frozenset({"compute", "storage", "inband", "oob"})
"""The networks of a source that reports any device: drift scopes it to the networks of
the devices it reports (the reader's snapshot leaves ``networks`` open)."""


class SourceOptionError(FabricStackError):
    """The drift source options do not fit together (the CLI shows it as a usage error)."""


@dataclass(frozen=True, slots=True)
class SourceOption:
    """One CLI option of a drift source: flag, what its value is, help text."""

    flag: str
    takes: Takes
    help: str
    short_help: str = ""
    """The shorter text a command with a long option list shows (``adopt``); else ``help``."""
    metavar: str = ""
    """Shown in --help; by default FILE, DIR, URL or SLUG after ``takes``."""
    dest: str = ""
    """The parameter name; by default the key in snake case (``node_name_map``)."""

    @property
    def key(self) -> str:
        """The flag without its dashes (``node-name-map``): how the registry names the option."""
        return self.flag.removeprefix("--")

    @property
    def name(self) -> str:
        """The parameter name the command receives the value under."""
        return self.dest or self.key.replace("-", "_")

    @property
    def shown_metavar(self) -> str:
        """The metavar --help shows."""
        return self.metavar or _METAVAR[self.takes]

    @property
    def is_path(self) -> bool:
        """True when the value is a file or a directory."""
        return self.takes in ("file", "dir")

    def help_for(self, short: bool) -> str:
        """The help text, the short one when ``short`` and there is one."""
        return self.short_help if short and self.short_help else self.help

    def __post_init__(self) -> None:
        # Checked where the option is declared (at import), as diffsync checks a model's
        # fields when its class is made: click and the docs table trust every option.
        problems = []
        if not _is_name(self.flag.removeprefix("--")) or not self.flag.startswith("--"):
            problems.append("flag: '--' and a lowercase name ('--node-name-map')")
        if self.takes not in _METAVAR:
            problems.append(f"takes: one of {', '.join(_METAVAR)}")
        if not self.help.strip():
            problems.append("help: the --help text")
        if problems:
            raise DeclarationError(f"option {self.flag!r}", problems)


def _is_name(name: str) -> bool:
    """A registry name: lowercase letters and digits, words joined by '-'."""
    return bool(name) and all(w.isalnum() and w == w.lower() for w in name.split("-"))


@dataclass(frozen=True, slots=True)
class SourceContext:
    """What a reader may need beyond its own option's value (set by the command)."""

    options: Mapping[str, Any]
    """Every source option of the command by parameter name (``node_name_map``, ``mac_table``)."""
    progress: Progress | None = None
    guid_names: Mapping[str, str] | None = None
    """GUID → name from a names file (``drift --names``): wins over the fabric's own names."""
    stack: str | None = None
    """``--stack``: the inventory's records of this stack."""


Build = Callable[[Any, SourceContext], Reader]
"""Builds a source's reader from its (prepared) option value."""


@dataclass(frozen=True, slots=True)
class DriftSource:
    """One source: its option, the options only it reads, the networks it sees, its reader."""

    name: str
    option: SourceOption
    networks: frozenset[str]
    """The networks the source sees (only the compute fabric for an InfiniBand subnet)."""
    build: Build
    extras: tuple[SourceOption, ...] = ()
    """Options only this source reads, shown right after it; one of them alone is an error."""
    uses: tuple[str, ...] = ()
    """Shared options (:data:`SHARED`) its reader reads, by key (``mac-table``)."""
    commands: tuple[str, ...] = ("drift", "adopt")
    """The commands that offer it."""
    orphan: str = "{extras} needs {flag}"
    """The error when an extra is given without the source's own option."""
    prepare: Callable[[Any, Mapping[str, Any]], Any] | None = None
    """Checks the value with the options before anything is read, returns what ``build`` takes."""
    formats: tuple[tuple[str, str], ...] = ()
    """What it accepts: (format, a line of it as an example), for the README table."""
    borrows: tuple[str, ...] = ()
    """Extras of other sources this reader reads too, by key (``node-name-map``): given
    with this source alone, they are no orphan."""

    def __post_init__(self) -> None:
        # At declaration, like SourceOption: the commands, their --help and the docs
        # table (formats) take every entry as complete.
        problems = source_problems(self)
        if problems:
            raise DeclarationError(f"drift source {self.name!r}", problems)

    def orphan_error(self, borrowers: tuple[str, ...] = ()) -> str:
        """The line for an extra option given without this source (nor one that borrows it)."""
        extras = "/".join(e.flag for e in self.extras)
        flags = [self.option.flag, *borrowers]
        flag = flags[0] if len(flags) == 1 else ", ".join(flags[:-1]) + " or " + flags[-1]
        return self.orphan.format(extras=extras, flag=flag)


SOURCE_COMMANDS: tuple[str, ...] = ("drift", "adopt")
"""The commands that read drift sources."""


def source_problems(source: DriftSource) -> list[str]:
    """What a drift source lacks (empty: complete); see docs/dev/add-a-discovery-format.md."""
    problems = []
    if not _is_name(source.name):
        problems.append("name: lowercase letters, digits and '-'")
    if not isinstance(source.option, SourceOption) or source.option.flag != f"--{source.name}":
        problems.append(f"option: a SourceOption whose flag is --{source.name}")
    if not source.networks or not source.networks <= EVERY_NETWORK:
        problems.append(f"networks: some of {', '.join(sorted(EVERY_NETWORK))}")
    if not callable(source.build) or (source.prepare is not None and not callable(source.prepare)):
        problems.append("build (and prepare): functions of the option's value")
    if not source.formats or not all(f and example for f, example in source.formats):
        problems.append("formats: (format, an example line) for each format it reads")
    if not source.commands or not set(source.commands) <= set(SOURCE_COMMANDS):
        problems.append(f"commands: some of {', '.join(SOURCE_COMMANDS)}")
    shared = {o.key for o in SHARED}
    if not set(source.uses) <= shared:
        problems.append(f"uses: shared options by key, some of {', '.join(sorted(shared))}")
    return problems


def check_sources(sources: tuple[DriftSource, ...]) -> None:
    """Across the registry: one source per name, one option per flag, and every option a
    source borrows is another source's extra."""
    flags = [o.flag for s in sources for o in (s.option, *s.extras)] + [o.flag for o in SHARED]
    names = [s.name for s in sources]
    extras = {e.key for s in sources for e in s.extras}
    for source in sources:
        problems = []
        if names.count(source.name) > 1:
            problems.append("name: declared twice")
        twice = [o.flag for o in (source.option, *source.extras) if flags.count(o.flag) > 1]
        if twice:
            problems.append(f"option: {', '.join(twice)} declared twice")
        if not set(source.borrows) <= extras:
            problems.append(
                f"borrows: extras of other sources, some of {', '.join(sorted(extras))}"
            )
        if problems:
            raise DeclarationError(f"drift source {source.name!r}", problems)


# --------------------------------------------------------------------------- NetBox


def netbox_token(token_file: Path | None) -> str:
    """The API token: ``token_file``'s first line, else ``NETBOX_TOKEN``; an error if neither."""
    if token_file is not None:
        # The input layer: a FIFO, /dev/zero, latin-1 or a second line is one line, exit 2.
        return read_secret(token_file, "--netbox-token-file")
    token_env = os.environ.get("NETBOX_TOKEN", "").strip()
    if not token_env:
        raise SourceOptionError(
            "--netbox needs an API token: set NETBOX_TOKEN or --netbox-token-file"
        )
    return token_env


def netbox_source(url: str, token_file: Path | None) -> tuple[str, str]:
    """(URL, token) of ``--netbox`` (and ``--netbox-token-file``): the URL checked, the
    token found. Every command that talks to a live NetBox takes these two options."""
    if not url.startswith(("http://", "https://", "netbox+http://", "netbox+https://")):
        raise SourceOptionError(f"--netbox {mask_url(url)!r}: expected http(s)://HOST[:PORT]")
    return url, netbox_token(token_file)


def _netbox_prepare(url: str, options: Mapping[str, Any]) -> tuple[str, str]:
    return netbox_source(url, options.get("netbox_token_file"))


def _netbox_live(value: tuple[str, str], ctx: SourceContext) -> Reader:
    url, token = value
    site, tag = ctx.options.get("netbox_site"), ctx.options.get("netbox_tag")
    branch = ctx.options.get("netbox_branch")
    if branch:
        check_branch_name(branch, "--netbox-branch")
    return NetboxApiReader(with_branch(url, branch), token, site=site, tag=tag)


# --------------------------------------------------------------------------- the table

MAC_TABLE = SourceOption(
    "--mac-table",
    "file",
    "CSV device,port,mac[,ifname]: maps MAC port ids and host interface names.",
    short_help="CSV device,port,mac[,ifname].",
)

NETBOX = SourceOption(
    "--netbox",
    "url",
    "A live NetBox (http(s)://HOST), through its REST API "
    "(token: NETBOX_TOKEN or --netbox-token-file; all requests of the command within "
    "FABRIC_STACK_NETBOX_DEADLINE seconds, default 1800).",
    dest="netbox_url",
)
"""``--netbox URL``: drift and adopt read its cables, ``inventory`` its records."""

NETBOX_TOKEN_FILE = SourceOption(
    "--netbox-token-file", "file", "File holding the NetBox API token."
)
"""``--netbox-token-file FILE``: with every ``--netbox``."""

NETBOX_BRANCH = SourceOption(
    "--netbox-branch",
    "slug",
    "Read this branch of the NetBox (the netbox-branching plugin), not main.",
    metavar="NAME",
)
"""``--netbox-branch NAME``: with ``--netbox``; the branch a review's ``up`` wrote into."""

SHARED: tuple[SourceOption, ...] = (MAC_TABLE,)
"""Options several sources read (shown once, where the command's layout puts them)."""


def _ib_reader(cls: Any) -> Build:
    """Build an InfiniBand reader (node-name map, progress, names-file GUIDs)."""
    return lambda path, ctx: cls(
        path, ctx.options.get("node_name_map"), ctx.progress, dict(ctx.guid_names or {})
    )


SOURCES: tuple[DriftSource, ...] = (
    DriftSource(
        "ibnetdiscover",
        SourceOption(
            "--ibnetdiscover",
            "file",
            "ibnetdiscover topology output (plain, -g, or the -p ports report; told apart "
            "by content).",
            short_help="ibnetdiscover output (plain, -g or -p).",
        ),
        frozenset({"compute"}),
        _ib_reader(IbnetdiscoverReader),
        formats=(
            (
                "`ibnetdiscover` (plain, `-g`)",
                '`[1] "H-0c42a10300a1b2c4"[1](c42a10300a1b2c4) # "su1-node01 mlx5_0" lid 17 4xNDR`',
            ),
            (
                "`ibnetdiscover -p` (ports report)",
                "`CA 44 1 0x0002c9030045f121 4x FDR - SW 2 17 0x0002c903006e1430 "
                "( 'n01 HCA-1' - 'MF0;sw1:SX60XX/U1' )`",
            ),
        ),
        extras=(
            SourceOption(
                "--node-name-map",
                "file",
                "GUID → name map for --ibnetdiscover, --iblinkinfo and --ibdiagnet "
                '(`0x<guid> "<name>"` lines).',
                short_help="GUID → name map for them.",
            ),
        ),
    ),
    DriftSource(
        "iblinkinfo",
        SourceOption(
            "--iblinkinfo",
            "file",
            "iblinkinfo output (infiniband-diags; per-node blocks or `--line`, told apart by "
            "content; `Down/ Polling` ports kept as link down).",
            short_help="iblinkinfo output.",
        ),
        frozenset({"compute"}),
        _ib_reader(IblinkinfoReader),
        formats=(
            (
                "`iblinkinfo` (per-node blocks)",
                "`Switch: 0x506b4b0300820910 MF0;sw1:MSB7700/U1:` then "
                '`2 18[ ] ==( 4X 25.78125 Gbps Active/ LinkUp)==> 1 1[ ] "n01 HCA-1" ( )`',
            ),
            (
                "`iblinkinfo --line` (one line per port)",
                '`0x0000000000200000 "MF0;leaf-1:MSB7700/U1" 1 1[ ] ==( 4X 2.5 Gbps Active/ '
                'LinkUp)==> 0x0000000000100001 2 1[ ] "node01 mlx5_0" ( )`',
            ),
        ),
        borrows=("node-name-map",),
    ),
    DriftSource(
        "ibdiagnet",
        SourceOption(
            "--ibdiagnet",
            "file",
            "ibdiagnet2.lst (or opensm-subnet.lst): one `{ end } { end } PHY= LOG= SPD=` "
            "link a line.",
            short_help="ibdiagnet2.lst.",
        ),
        frozenset({"compute"}),
        _ib_reader(IbdiagnetReader),
        formats=(
            (
                "`ibdiagnet2.lst` / `opensm-subnet.lst`",
                "`{ CA Ports:02 SystemGUID:… NodeGUID:… PortGUID:… … {n01 HCA-1} LID:0005 PN:01 } "
                "{ SW … LID:0002 PN:14 } PHY=4x LOG=ACT SPD=2.5`",
            ),
        ),
        borrows=("node-name-map",),
    ),
    DriftSource(
        "lldp",
        SourceOption(
            "--lldp",
            "dir",
            "Directory of LLDP neighbours, one file per device (<hostname>.json, .txt…), "
            "read by content: `lldpctl -f json0`/`-f json`/`-f keyvalue` or plain text, SONiC "
            "`show lldp neighbors` or `show lldp table`.",
            short_help="Directory of lldpctl/SONiC LLDP outputs.",
        ),
        EVERY_NETWORK,
        lambda path, ctx: LldpReader(path, ctx.options.get("mac_table"), ctx.progress),
        formats=(
            (
                "`lldpctl -f json0` / `-f json`",
                '`{"lldp": [{"interface": [{"name": "swp1", …}]}]}`',
            ),
            (
                "`lldpctl -f keyvalue`",
                "`lldp.eth0.chassis.name=leaf-1` / `lldp.eth0.port.ifname=swp1`",
            ),
            (
                "`lldpctl` text, SONiC `show lldp neighbors`",
                "`Interface: eth0, via: LLDP, …` / `SysName: leaf-1` / `PortID: ifname swp1`",
            ),
            (
                "SONiC `show lldp table`",
                "`Ethernet0  spine-01  Ethernet1/51  BR  leaf-1:Ethernet0`",
            ),
        ),
        uses=("mac-table",),
    ),
    DriftSource(
        "eos",
        SourceOption(
            "--eos",
            "dir",
            "Directory of EOS `show lldp neighbors detail | json` outputs, <hostname>.json, "
            "plain or as pyeapi/eAPI return it (+ optional <hostname>.status.json from "
            "`show interfaces status | json`).",
            short_help="Directory of EOS LLDP JSON, <host>.json.",
        ),
        EVERY_NETWORK,
        lambda path, ctx: EosReader(path, ctx.options.get("mac_table"), ctx.progress),
        formats=(
            (
                "EOS `show lldp neighbors detail | json`",
                '`{"lldpNeighbors": {"Ethernet1": {"lldpNeighborInfo": [{"systemName": …}]}}}`',
            ),
            (
                "the same as pyeapi / eAPI return it",
                '`[{"command": "show lldp neighbors detail", "result": {"lldpNeighbors": …}}]`, '
                '`{"jsonrpc": "2.0", "result": [{"lldpNeighbors": …}]}`',
            ),
            (
                "EOS `show interfaces status | json`",
                '`<host>.status.json`: `{"interfaceStatuses": …}`',
            ),
        ),
        uses=("mac-table",),
    ),
    DriftSource(
        "nvue",
        SourceOption(
            "--nvue",
            "dir",
            "Directory of Cumulus NVUE `nv show interface -o json` outputs, <hostname>.json.",
            short_help="Directory of NVUE interface JSON.",
        ),
        EVERY_NETWORK,
        lambda path, ctx: NvueReader(path, ctx.options.get("mac_table"), ctx.progress),
        formats=(
            (
                "NVUE `nv show interface -o json`",
                '`{"swp1": {"link": {"speed": "400G", …}, "lldp": {"neighbor": {"leaf-1": '
                '{"port": {"name": "swp3", "type": "ifname"}}}}}}`',
            ),
        ),
        uses=("mac-table",),
    ),
    DriftSource(
        "sonic",
        SourceOption(
            "--sonic",
            "dir",
            "Directory of SONiC config_db.json files, one per switch: DEVICE_NEIGHBOR (the "
            "configured neighbours, compared as records), PORT aliases and speeds.",
            short_help="Directory of SONiC config_db.json.",
        ),
        EVERY_NETWORK,
        lambda path, ctx: SonicConfigReader(path, None, ctx.progress),
        formats=(
            (
                "SONiC `config_db.json`",
                '`"DEVICE_NEIGHBOR": {"Ethernet0": {"name": "spine-01", "port": "Ethernet1"}}` '
                "(or keyed by neighbour with `local_port`), "
                '`"PORT": {"Ethernet0": {"alias": "etp1a"}}`',
            ),
        ),
    ),
    DriftSource(
        "netbox-csv",
        SourceOption("--netbox-csv", "file", "NetBox cable CSV export."),
        EVERY_NETWORK,
        lambda path, ctx: NetboxCsvReader(path, ctx.progress),
        formats=(
            (
                "NetBox cable CSV (import format or list-view export)",
                "`side_a_device,side_a_name,side_b_device,…`",
            ),
        ),
    ),
    DriftSource(
        "netbox-json",
        SourceOption(
            "--netbox-json",
            "file",
            "NetBox REST /api/dcim/cables/ JSON.",
            short_help="NetBox REST cables JSON.",
        ),
        EVERY_NETWORK,
        lambda path, ctx: NetboxJsonReader(path, ctx.progress),
        formats=(
            ("NetBox / Nautobot REST cables JSON", '`{"results": [{"a_terminations": […], …}]}`'),
        ),
    ),
    DriftSource(
        "inventory",
        SourceOption(
            "--inventory", "url", "The stack's inventory: sqlite:///PATH or postgresql://…"
        ),
        EVERY_NETWORK,
        lambda url, ctx: InventoryReader(url, ctx.stack),
        formats=(("the stack's inventory", "`sqlite:///.state/inventory.db`, `postgresql://…`"),),
        commands=("drift",),
    ),
    DriftSource(
        "netbox",
        NETBOX,
        EVERY_NETWORK,
        _netbox_live,
        formats=(("a live NetBox, REST API", "`https://netbox.example`"),),
        extras=(
            NETBOX_TOKEN_FILE,
            NETBOX_BRANCH,
            SourceOption("--netbox-site", "slug", "Only this NetBox site's cables."),
            SourceOption("--netbox-tag", "slug", "Only cables with this NetBox tag."),
        ),
        orphan="{extras} need {flag} URL",
        prepare=_netbox_prepare,
    ),
    DriftSource(
        "slurm-topology",
        SourceOption(
            "--slurm-topology",
            "file",
            "A live Slurm topology.conf (topology/tree) or `scontrol show topology` output: "
            "each server under the plan's SU, spines and cores with the plan's children.",
        ),
        frozenset({"compute"}),
        lambda path, ctx: SlurmTopologyReader(path),
        formats=(
            ("Slurm `topology.conf` (topology/tree)", "`SwitchName=su1 Nodes=su1-node[01-16]`"),
            (
                "`scontrol show topology`",
                "`SwitchName=su1 Level=0 LinkSpeed=1 Nodes=su1-node[01-16]`",
            ),
        ),
        commands=("drift",),
    ),
    DriftSource(
        "k8s-nodes",
        SourceOption(
            "--k8s-nodes",
            "file",
            "`kubectl get nodes -o json`: every planned node with the plan's topology labels "
            "(render k8s-topology).",
        ),
        frozenset({"compute"}),
        lambda path, ctx: K8sNodesReader(path, ctx.progress),
        formats=(("`kubectl get nodes -o json`", '`{"items": [{"metadata": {"labels": …}}]}`'),),
        commands=("drift",),
    ),
)
"""Every drift source."""
check_sources(SOURCES)

BY_NAME: dict[str, DriftSource] = {s.name: s for s in SOURCES}


__all__ = [
    "BY_NAME",
    "EVERY_NETWORK",
    "NETBOX",
    "NETBOX_TOKEN_FILE",
    "SHARED",
    "SOURCES",
    "SOURCE_COMMANDS",
    "DriftSource",
    "SourceContext",
    "SourceOption",
    "SourceOptionError",
    "check_sources",
    "netbox_source",
    "netbox_token",
    "source_problems",
]
