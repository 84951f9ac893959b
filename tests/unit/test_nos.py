"""The switch OS modules: each grammar round-trips, the registry serves every catalog
family, and an incomplete declaration fails at the class statement."""

from __future__ import annotations

from typing import get_args

import pytest

from fabric_stack import nos
from fabric_stack.hardware.switches import CATALOG, OsFamily
from fabric_stack.nos import NosDeclarationError, PlatformDefaults, PortLayout, PortRef, SwitchOs
from fabric_stack.nos.sonic import SONIC


def test_every_catalog_family_has_an_os() -> None:
    assert set(nos.families()) == set(get_args(OsFamily))
    assert {m.os_family for m in CATALOG.values()} <= set(nos.families())
    assert nos.for_family("not-a-family") is nos.for_family("generic")


@pytest.mark.parametrize("name", sorted(set(nos.declared()) - {"sonic"}))
@pytest.mark.parametrize("ppc", [1, 2, 4])
def test_port_names_read_back_to_the_same_port(name: str, ppc: int) -> None:
    os = nos.for_name(name)
    for number in range(1, 3 * ppc + 1):
        label = os.port_name(number, PortLayout(ppc))
        for ref in (os.parse_port(label), os.parse_label(label)):  # every spelling, the label
            assert ref is not None, (name, label)
            got = ref.number or (ref.cage - 1) * ppc + ref.lane
            assert got == number, (name, label)


def test_sonic_names_carry_the_first_serdes_lane() -> None:
    layout = PortLayout(2, lanes_per_cage=8)
    assert SONIC.port_name(47, layout) == "Ethernet184"
    assert SONIC.parse_port("Ethernet184") == PortRef("sonic", serdes=184)
    assert SONIC.parse_port("etp24a") == PortRef("sonic-alias", 24, 1)
    with pytest.raises(ValueError, match="lanes per cage"):
        SONIC.port_name(1, PortLayout(2))


def test_ufm_names_ib_ports_by_cage_and_ethernet_ports_by_interface() -> None:
    assert nos.for_family("mlnx-os").ufm_port("1/4/2", 8, 2) == "4/2"
    assert nos.for_family("generic").ufm_port("p5", 5, 1) == "5"
    assert nos.for_family("cumulus").ufm_port("swp4s1", 8, 2) == "swp4s1"


def test_comment_lines_use_the_os_syntax() -> None:
    assert nos.for_name("frr").comment_lines(["a", ""]) == "! a\n!\n"
    assert nos.for_name("cumulus").comment_lines(["a"]) == "# a\n"


def _declare(register: bool = False, **attrs: object) -> type[SwitchOs]:
    def parse_port(self: SwitchOs, name: str) -> PortRef | None:
        return None

    body: dict[str, object] = {
        "name": "test-os",
        "comment": "!",
        "defaults": PlatformDefaults(source="test"),
        "split_template": "Ethernet{cage}/{lane}",
        "whole_template": "Ethernet{cage}",
        "parse_port": parse_port,
    }
    body.update(attrs)
    body = {k: v for k, v in body.items() if v is not None}
    return type("TestOs", (SwitchOs,), body, register=register)


def test_a_complete_declaration_passes() -> None:
    os = _declare()()
    assert os.port_name(3, PortLayout(2)) == "Ethernet2/1"


@pytest.mark.parametrize(
    ("leave_out", "message"),
    [
        ({"comment": None}, "comment syntax"),
        ({"defaults": None}, "platform defaults"),
        ({"defaults": {"lossless_pgs": (3, 4)}}, "platform defaults"),
        ({"split_template": None}, "forward port grammar"),
        ({"parse_port": None}, "inverse port grammar"),
        ({"name": None}, "name"),
    ],
)
def test_an_incomplete_declaration_fails_at_the_class_statement(
    leave_out: dict[str, object], message: str
) -> None:
    with pytest.raises(NosDeclarationError, match=message):
        _declare(**leave_out)


def test_an_incomplete_class_statement_fails_too() -> None:
    with pytest.raises(NosDeclarationError, match="inverse port grammar"):

        class HalfEos(SwitchOs, register=False):  # forward grammar only
            name = "half-eos"
            comment = "!"
            defaults = PlatformDefaults(source="test")
            split_template = "Ethernet{cage}/{lane}"
            whole_template = "Ethernet{cage}"


def test_an_os_is_declared_once() -> None:
    with pytest.raises(NosDeclarationError, match="declared twice"):
        _declare(register=True, name="cumulus")  # the name is taken


def test_declaration_errors_are_one_family() -> None:
    """An incomplete switch OS fails with the same error family as an incomplete render
    target or discovery format (fabric_stack.errors.DeclarationError)."""
    from fabric_stack.errors import DeclarationError

    assert issubclass(NosDeclarationError, DeclarationError)
