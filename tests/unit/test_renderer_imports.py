"""No switch-OS renderer is another's library: each serializes the typed switch config.

A NOS renderer is one of :data:`NOS_RENDERERS`, or any render-target module of
``fabric_stack/artifacts`` (it defines ``TARGET``) that reads
:mod:`fabric_stack.intent.switch_config`. The import graph, read
from the source with ``ast``: no NOS renderer imports another render-target module, and no
module of ``fabric_stack/artifacts`` but the target registry (``artifacts/__init__``)
imports a NOS renderer.

A module that reads the switch config but defines no target is a serializer of text
several targets write (``frr_conf``: ``render frr`` and ``render sonic``): it must be
imported by at least two render targets. One that a single target imports is half of
that renderer and belongs in it (one target, one renderer module).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

from tests.unit.test_layers import PKG, _imports

ARTIFACTS = PKG / "artifacts"
MODEL = "fabric_stack.intent.switch_config"
REGISTRY = "fabric_stack.artifacts"
NOS_RENDERERS = frozenset(
    f"fabric_stack.artifacts.{m}" for m in ("frr", "sonic", "cumulus", "roce_qos")
)
"""The switch-OS render targets."""


def _module(path: Path) -> str:
    return "fabric_stack.artifacts" + ("" if path.stem == "__init__" else f".{path.stem}")


def _targets(sources: dict[str, tuple[Path, str]]) -> set[str]:
    """Modules that define a render target (a top-level ``TARGET = …``)."""
    out = set()
    for mod, (_, text) in sources.items():
        for node in ast.parse(text).body:
            names = node.targets if isinstance(node, ast.Assign) else []
            if any(isinstance(t, ast.Name) and t.id == "TARGET" for t in names):
                out.add(mod)
    return out


ImportReader = Callable[[str, Path], list[tuple[str, int]]]


def _violations(sources: dict[str, tuple[Path, str]], read: ImportReader = _imports) -> list[str]:
    targets = _targets(sources)
    imports = {mod: {t for t, _ in read(mod, path)} for mod, (path, _) in sources.items()}
    nos_renderers = NOS_RENDERERS | {m for m in targets if MODEL in imports[m]}
    out = []
    for mod, imported in sorted(imports.items()):
        if mod == REGISTRY:
            continue
        for target in sorted(imported & (targets - {mod})):
            if mod in nos_renderers or target in nos_renderers:
                out.append(f"{mod} imports the renderer {target}")
    return out


def _half_renderers(
    sources: dict[str, tuple[Path, str]], read: ImportReader = _imports
) -> list[str]:
    """Serializers of the switch config (no ``TARGET``) that fewer than two targets import."""
    targets = _targets(sources)
    imports = {mod: {t for t, _ in read(mod, path)} for mod, (path, _) in sources.items()}
    out = []
    for mod in sorted(set(sources) - targets - {REGISTRY}):
        if MODEL not in imports[mod]:
            continue
        users = sorted(t for t in targets if mod in imports[t])
        if len(users) < 2:
            out.append(f"{mod} serializes the switch config for {users or 'no target'} only")
    return out


def _sources() -> dict[str, tuple[Path, str]]:
    return {_module(p): (p, p.read_text(encoding="utf-8")) for p in ARTIFACTS.glob("*.py")}


def test_the_nos_renderers_are_render_targets() -> None:
    assert _targets(_sources()) >= NOS_RENDERERS


def test_no_renderer_imports_another_nos_renderer() -> None:
    assert not _violations(_sources())


def test_the_check_catches_a_renderer_that_imports_another() -> None:
    sources = _sources()
    read = _imports

    def fake_imports(mod: str, p: Path) -> list[tuple[str, int]]:
        if mod == "fabric_stack.artifacts.sonic":
            return [*read(mod, p), ("fabric_stack.artifacts.frr", 0)]
        return read(mod, p)

    assert _violations(sources, fake_imports) == [
        "fabric_stack.artifacts.sonic imports the renderer fabric_stack.artifacts.frr"
    ]


def test_every_switch_config_serializer_is_shared() -> None:
    assert not _half_renderers(_sources())


def test_the_check_catches_half_a_renderer() -> None:
    sources = _sources()
    read = _imports
    half = "fabric_stack.artifacts.cumulus_underlay"
    sources[half] = (ARTIFACTS / "cumulus_underlay.py", "")

    def fake_imports(mod: str, p: Path) -> list[tuple[str, int]]:
        if mod == half:
            return [(MODEL, 0)]
        if mod == "fabric_stack.artifacts.cumulus":
            return [*read(mod, p), (half, 0)]
        return read(mod, p)

    assert _half_renderers(sources, fake_imports) == [
        f"{half} serializes the switch config for ['fabric_stack.artifacts.cumulus'] only"
    ]
