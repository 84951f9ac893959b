"""No import cycle inside ``fabric_stack``: the module import graph, read with ``ast``, is acyclic.

Every import counts, a function-level one too: a cycle that only a lazy import keeps
from failing at start-up is still two modules that cannot be understood (or moved)
one without the other. The graph is built as :mod:`tests.unit.test_layers` reads
imports (relative imports resolved, ``from pkg import submodule`` an edge to the
submodule); only edges between modules of ``fabric_stack`` are kept.
"""

from __future__ import annotations

from pathlib import Path

from tests.unit.test_layers import MODULES, _imports


def import_graph(modules: list[tuple[str, Path]]) -> dict[str, set[str]]:
    """Module → the ``fabric_stack`` modules it imports (edges to itself left out)."""
    known = {mod for mod, _ in modules}
    graph: dict[str, set[str]] = {}
    for mod, path in modules:
        targets = set()
        for target, _line in _imports(mod, path):
            # ``from fabric_stack.x import name``: the module, or the package that holds name
            while target not in known and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in known and target != mod:
                targets.add(target)
        graph[mod] = targets
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of ``graph`` as ``[a, b, …, a]``, or ``[]`` when it is acyclic."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_fabric_stack_has_no_import_cycle() -> None:
    cycle = find_cycle(import_graph(MODULES))
    assert not cycle, "import cycle: " + " -> ".join(cycle)


def test_the_cycle_check_finds_a_cycle() -> None:
    # The check itself can fail: a → b → c → a is reported, a dead end is not.
    graph = {"a": {"b"}, "b": {"c", "d"}, "c": {"a"}, "d": set()}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) == []
