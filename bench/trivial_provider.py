"""A trivial dynamic provider: the baseline the preview benchmark compares against."""

from __future__ import annotations

from typing import Any

from pulumi import dynamic


class TrivialProvider(dynamic.ResourceProvider):
    """Does nothing but echo its inputs."""

    serialize_as_secret_always = False

    def create(self, props: dict[str, Any]) -> dynamic.CreateResult:
        return dynamic.CreateResult(str(props["n"]), outs=props)


class Trivial(dynamic.Resource, module="bench", name="Trivial"):
    """One trivial resource."""

    def __init__(self, name: str, n: int) -> None:
        super().__init__(TrivialProvider(), name, {"n": n})
