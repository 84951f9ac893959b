"""How a switch OS is declared: the records every NOS module fills in, and the registry.

A NOS module subclasses :class:`SwitchOs` once. The class statement is the declaration:
:meth:`SwitchOs.__init_subclass__` checks it is complete (a name, a comment syntax, typed
platform defaults, the port-name grammar in both directions) and registers one instance
under its name and the ``os_family`` keys of :mod:`fabric_stack.hardware.switches` it
serves. An incomplete declaration fails at the class statement with
:class:`NosDeclarationError`, before any file is rendered (as diffsync checks a model at
``__init_subclass__``); ``docs/dev/add-a-switch-os.md`` is the recipe.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

from fabric_stack.errors import DeclarationError


class NosDeclarationError(DeclarationError, TypeError):
    """A switch OS declared incompletely: the class statement names what it lacks (one of the
    project's :class:`~fabric_stack.errors.DeclarationError`, like an incomplete render
    target or discovery format)."""

    def __init__(self, message: str) -> None:
        # One sentence of its own (what the class statement lacks), not entry + problems.
        Exception.__init__(self, message)
        self.entry, self.problems = "", [message]


@dataclass(frozen=True, slots=True)
class PortLayout:
    """How one switch lays out its logical ports: what the grammar needs to name a port.

    ``ports_per_cage`` at the planned speed; ``cages`` and ``radix`` bound the numbers
    (0: unknown, no bound); ``lanes_per_cage`` is the SerDes lanes per cage SONiC names
    ports after (0: the model has no SONiC lane table).
    """

    ports_per_cage: int
    cages: int = 0
    radix: int = 0
    lanes_per_cage: int = 0


@dataclass(frozen=True, slots=True)
class PortRef:
    """What one port spelling names, before a switch's layout turns it into a logical number.

    Exactly one of: a ``cage`` and ``lane`` (both 1-based), the logical ``number`` itself
    (ibnetdiscover, ``p7``), or SONiC's first SerDes lane (``serdes``). ``spelling`` tags
    the form read (``"mlnx"``, ``"chip"``, ``"nvos-split"``…): readers that accept fewer
    forms than the drift port reader filter on it.
    """

    spelling: str
    cage: int = 0
    lane: int = 0
    number: int = 0
    serdes: int = -1


@dataclass(frozen=True, slots=True)
class PlatformDefaults:
    """The facts an OS (or its platform) supplies that the renderers rely on; each NOS
    declares a subclass with its own typed fields. ``source`` says where they come from."""

    source: str


_FIELD = re.compile(r"\{(cage|lane|lane0|number)\}")


@lru_cache(maxsize=64)
def template_pattern(template: str) -> re.Pattern[str]:
    """The exact inverse of a port-label template: ``swp{cage}s{lane0}`` → ``^swp(?P<cage>…``."""
    parts = _FIELD.split(template)
    out = []
    for i, part in enumerate(parts):
        out.append(rf"(?P<{part}>\d+)" if i % 2 else re.escape(part))
    return re.compile("^" + "".join(out) + "$")


class SwitchOs:
    """One switch operating system: its port-name grammar both ways, comment syntax, defaults.

    Declare by subclassing (see the module docstring); the class attributes are the
    declaration. The forward grammar is either the two templates (a split cage's port, an
    unsplit cage's port; fields ``cage``, ``lane``, ``lane0``, ``number``) or an override
    of :meth:`port_name`; the inverse is :meth:`parse_port` (every spelling the OS prints).
    """

    name: ClassVar[str]
    """Registry key: the OS as the render targets and docs name it (``cumulus``, ``sonic``)."""
    families: ClassVar[tuple[str, ...]] = ()
    """The ``os_family`` keys of the switch catalog this OS names ports for."""
    comment: ClassVar[str]
    """What starts a comment line in the OS's configuration files (``!``, ``#``)."""
    defaults: ClassVar[PlatformDefaults]
    """The OS's platform defaults the renderers rely on, as a typed record."""
    split_template: ClassVar[str] = ""
    """Forward grammar of a port in a split cage (empty: :meth:`port_name` is overridden)."""
    whole_template: ClassVar[str] = ""
    """Forward grammar of an unsplit cage's port."""

    def __init_subclass__(cls, register: bool = True, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        missing = _missing(cls)
        if missing:
            raise NosDeclarationError(
                f"switch OS {cls.__name__} is declared incompletely: missing "
                + ", ".join(missing)
                + " (see docs/dev/add-a-switch-os.md)"
            )
        if register:
            _register(cls())

    def port_name(self, number: int, layout: PortLayout) -> str:
        """Name of logical port ``number`` (1-based) as the OS prints it, on ``layout``."""
        cage, lane = divmod(number - 1, layout.ports_per_cage)
        template = self.split_template if layout.ports_per_cage > 1 else self.whole_template
        return template.format(cage=cage + 1, lane=lane + 1, lane0=lane, number=number)

    def parse_port(self, name: str) -> PortRef | None:
        """What ``name`` names if the OS spells ports that way (None: not its spelling)."""
        raise NotImplementedError  # every declared OS overrides it (checked at declaration)

    def parse_label(self, label: str) -> PortRef | None:
        """The exact inverse of :meth:`port_name` (the plan's own spelling, nothing looser)."""
        for template in (self.split_template, self.whole_template):
            if template and (m := template_pattern(template).match(label)):
                got = {k: int(v) for k, v in m.groupdict().items()}
                lane = got.get("lane", got.get("lane0", 0) + 1 if "lane0" in got else 1)
                return PortRef(self.name, got.get("cage", 0), lane, got.get("number", 0))
        return None

    def ufm_port(self, label: str, number: int, ports_per_cage: int) -> str:
        """The port as UFM's cable-validation P2P file names it: ``<cage>/<lane>`` on split
        cages, ``<cage>`` otherwise (InfiniBand switches; Ethernet OSes override it)."""
        cage, lane = divmod(number - 1, ports_per_cage)
        return f"{cage + 1}/{lane + 1}" if ports_per_cage > 1 else str(cage + 1)

    @property
    def comment_prefix(self) -> str:
        """What a comment line of this OS's files starts with: the marker and a space
        (``"! "``); what the renderers' reflowing comment blocks are given."""
        return f"{self.comment} "

    def comment_line(self, text: str) -> str:
        """``text`` as one comment line of this OS's files, without the newline (empty
        ``text``: the bare marker, FRR's ``!`` separator)."""
        return (self.comment_prefix + text).rstrip()

    def comment_lines(self, lines: list[str]) -> str:
        """``lines`` as comment lines of this OS's files, each ending in a newline."""
        return "".join(self.comment_line(line) + "\n" for line in lines)


def _missing(cls: type[SwitchOs]) -> list[str]:
    """What a declaration lacks, in the recipe's order (empty: complete)."""
    out = []
    if not getattr(cls, "name", ""):
        out.append("name")
    if not getattr(cls, "comment", ""):
        out.append("comment syntax (comment)")
    if not isinstance(getattr(cls, "defaults", None), PlatformDefaults):
        out.append("platform defaults (defaults, a PlatformDefaults record)")
    templates = bool(cls.split_template and cls.whole_template)
    if not templates and cls.port_name is SwitchOs.port_name:
        out.append("forward port grammar (split_template and whole_template, or port_name)")
    if cls.parse_port is SwitchOs.parse_port:
        out.append("inverse port grammar (parse_port)")
    return out


_BY_NAME: dict[str, SwitchOs] = {}
_BY_FAMILY: dict[str, SwitchOs] = {}


def _register(os: SwitchOs) -> None:
    for key, table in [(os.name, _BY_NAME)] + [(f, _BY_FAMILY) for f in os.families]:
        if key in table:
            raise NosDeclarationError(f"switch OS {key!r} is declared twice")
        table[key] = os


def for_name(name: str) -> SwitchOs:
    """The declared OS called ``name`` (KeyError: none is)."""
    return _BY_NAME[name]


def for_family(os_family: str) -> SwitchOs:
    """The OS that names the ports of a switch model with ``os_family``; a family no OS
    declares is named by the generic OS (``p<n>``), as the catalog's generic switch is."""
    return _BY_FAMILY.get(os_family) or _BY_FAMILY["generic"]


def declared() -> dict[str, SwitchOs]:
    """Every declared OS by name, in declaration order."""
    return dict(_BY_NAME)


def families() -> dict[str, SwitchOs]:
    """Every ``os_family`` key a declared OS serves, with that OS."""
    return dict(_BY_FAMILY)
