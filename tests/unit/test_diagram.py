"""The SVG diagram: well-formed, rails in colour, readable and bounded at any size."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from fabric_stack import build_topology, size_fabric, validate_spec
from fabric_stack.views.diagram import RAIL_COLOURS, diagram_svg, rail_colour
from tests.topology_fixtures import topo

SVG = "{http://www.w3.org/2000/svg}"


def texts(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return ["".join(e.itertext()) for e in root.iter() if e.tag in (f"{SVG}text", f"{SVG}title")]


def test_seed_diagram_parses_and_shows_every_rail_and_leaf() -> None:
    t = topo()
    svg = diagram_svg(t)
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    words = texts(svg)
    for d in t.devices:
        if d.role in ("leaf", "spine"):
            assert d.name in words, d.name
    for r in range(1, 9):
        colour = rail_colour(r, 8)
        assert colour == RAIL_COLOURS[r - 1]
        # the rail's leaf box and its NIC cables carry the rail colour
        assert f'fill="{colour}"' in svg
        assert f'stroke="{colour}"' in svg
        assert f"rail {r}" in words
    assert "SU 1" in words
    assert any(w.startswith("128 GPUs · 16 servers × 8 GPUs") for w in words)
    # 16 servers collapse to 5 + '… 9 more' + 2
    # the two UFMs take two of SU 1's eight boxes (as they take a server position)
    assert "… 11 more" in words and "node16" in words and "node04" not in words
    assert "ufm-1" in words and "ufm-2" in words


def test_nic_cables_drawn_per_shown_server_and_rail() -> None:
    svg = diagram_svg(topo(gpus=32))  # 4 servers, all shown
    root = ET.fromstring(svg)
    nic_lines = [e for e in root.iter(f"{SVG}line") if e.get("class") == "nic"]
    legend_samples = 4
    assert len(nic_lines) == 4 * 8 + legend_samples


@pytest.mark.parametrize("kw", [{"gpus": 32768}, {"gpus": 8192, "planes": 2}])
def test_large_fabrics_collapse_and_stay_small(kw: dict[str, object]) -> None:
    svg = diagram_svg(topo(**kw))
    assert len(svg) < 120_000
    root = ET.fromstring(svg)
    words = texts(svg)
    assert any(w.startswith("… ") and w.endswith("more") for w in words)
    assert len(list(root.iter(f"{SVG}line"))) < 1200
    if topo(**kw).plan.tiers == 3:
        assert any(w.startswith("Pod ") for w in words)
        assert any(w.startswith("core group ") for w in words)


def test_many_rails_get_distinct_colours() -> None:
    colours = {rail_colour(r, 16) for r in range(1, 17)}
    assert len(colours) == 16
    svg = diagram_svg(topo(gpus=64, gpus_per_node=16))
    for r in range(1, 17):
        assert f"rail {r}" in texts(svg)


def test_dual_plane_and_access_networks_are_noted() -> None:
    words = " ".join(texts(diagram_svg(topo(gpus=256, planes=2))))
    assert "plane 2 (p2-* leaves, spines) mirrors plane 1" in words
    assert "Separate networks (not drawn): 2 storage, 1 in-band, 1 OOB access switches" in words


def _boxes(svg: str, cls: str) -> list[tuple[str, list[str]]]:
    """(title, the labels drawn inside) of each ``cls`` box, in drawing order."""
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    rects = [
        (float(r.get("x", 0)), float(r.get("y", 0)), float(r.get("width", 0)),
         float(r.get("height", 0)), r.findtext(f"{ns}title") or "")
        for r in root.iter(f"{ns}rect") if r.get("class") == cls
    ]  # fmt: skip
    texts = [
        (float(t.get("x", 0)), float(t.get("y", 0)), t.text or "") for t in root.iter(f"{ns}text")
    ]
    return [
        (title, [s for tx, ty, s in texts if x <= tx <= x + w and y <= ty <= y + h])
        for x, y, w, h, title in rects
    ]


def test_three_tier_spines_carry_their_pod() -> None:
    # At 32,768 GPUs both pods drawn had spine-01…32 labels: each box now reads as its
    # device, pod1-spine-01 vs pod32-spine-01.
    svg = diagram_svg(build_topology(size_fabric(validate_spec(gpus=32768))))
    spines = _boxes(svg, "spine")
    assert {t.split("-spine-")[0] for t, _ in spines} == {"pod1", "pod32"}
    for title, labels in spines:
        base, prefix = labels
        assert f"{prefix}-{base}" == title


@pytest.mark.parametrize("gpus", [128, 512, 32768])
def test_fabric_managers_are_drawn_with_their_cables(gpus: int) -> None:
    topo = build_topology(size_fabric(validate_spec(gpus=gpus)))
    svg = diagram_svg(topo)
    managers = [d.name for d in topo.devices if d.role == "manager"]
    drawn = _boxes(svg, "manager")
    assert [labels[0] for _, labels in drawn] == managers
    cables = [k for k in topo.links_of("manager_leaf") if k.plane == 1]
    assert svg.count('class="mgr"') == len(cables) + 1  # + the legend's sample
    assert "fabric manager → rail leaf" in svg
