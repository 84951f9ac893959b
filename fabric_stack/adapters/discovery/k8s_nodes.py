"""Reader for a Kubernetes node list: the JSON of ``kubectl get nodes -o json``.

A ``List`` (or ``NodeList``) whose ``items`` are ``Node`` objects; only ``metadata.name``
and ``metadata.labels`` are read. ``render k8s-topology`` writes the plan's labels in the
same shape (``k8s-topology/nodes.json``), so a file from either side reads the same way.

Source: https://kubernetes.io/docs/reference/kubernetes-api/cluster-resources/node-v1/
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fabric_stack.adapters.discovery._common import Progress, read_json
from fabric_stack.drift.model import DeviceSeen, SchedulerObservation, Snapshot
from fabric_stack.errors import InputFileError

SOURCE = "k8s-nodes"


class K8sNodesReader:
    """``kubectl get nodes -o json`` → a scheduler snapshot of node labels."""

    def __init__(self, path: str | Path, progress: Progress | None = None) -> None:
        self.path = Path(path)
        self.progress = progress

    def _bad(self, where: str, problem: str) -> InputFileError:
        return InputFileError(str(self.path), problem, where)

    def load(self) -> Snapshot:
        """Read the node list; a wrong shape names its JSON path."""
        doc: Any = read_json(self.path, self.progress)
        if not isinstance(doc, dict) or not isinstance(doc.get("items"), list):
            raise self._bad(
                "$", "expected the JSON of `kubectl get nodes -o json` ({items: [...]})"
            )
        labels: dict[str, tuple[dict[str, str], str]] = {}
        devices: dict[str, DeviceSeen] = {}
        for i, item in enumerate(doc["items"]):
            where = f"$.items[{i}]"
            meta = item.get("metadata") if isinstance(item, dict) else None
            if not isinstance(meta, dict) or not isinstance(meta.get("name"), str):
                raise self._bad(where, "a node without metadata.name")
            if item.get("kind", "Node") != "Node":
                raise self._bad(f"{where}.kind", f"{item.get('kind')!r} is not a Node")
            found = meta.get("labels") or {}
            if not isinstance(found, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in found.items()
            ):
                raise self._bad(f"{where}.metadata.labels", "labels must map strings to strings")
            name = meta["name"]
            if name in labels:
                raise self._bad(f"{where}.metadata.name", f"node {name!r} is listed twice")
            labels[name] = (dict(found), f"{self.path}:{where}.metadata.labels")
            devices[name] = DeviceSeen(name, "server", f"{self.path}:{where}")
        return Snapshot(
            source=SOURCE,
            origin=str(self.path),
            devices=devices,
            networks=frozenset({"compute"}),
            physical=False,
            scheduler=SchedulerObservation("k8s-nodes", labels=labels),
        )


__all__ = ["K8sNodesReader"]
