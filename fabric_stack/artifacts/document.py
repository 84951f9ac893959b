"""The design document's control block and software baseline: inputs, not plan facts.

A reviewer signs a document with a title, a revision, a date and named authors,
and a design is only reproducible against named software versions. None of that
follows from the spec, so it comes from ``fabric-stack render`` flags
(``--doc-title``, ``--doc-revision``, ``--doc-date``, ``--author``,
``--software NAME=VERSION``) and defaults to an honest "draft, undated, not
given". Output stays reproducible: nothing here reads the clock.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from fabric_stack.errors import SpecError


@dataclass(frozen=True)
class SoftwareItem:
    """One component the design depends on: what it is for and which fabrics need it."""

    key: str
    what: str
    fabrics: tuple[str, ...]


SOFTWARE: tuple[SoftwareItem, ...] = (
    SoftwareItem(
        "switch-os",
        "Switch OS/firmware (MLNX-OS on Quantum, Cumulus Linux on Spectrum)",
        ("infiniband", "roce", "ethernet"),
    ),
    SoftwareItem("opensm", "Subnet manager (UFM Enterprise, or OpenSM on hosts)", ("infiniband",)),
    SoftwareItem("ibdiagnet", "ibutils2 / ibdiagnet (acceptance: topology check)", ("infiniband",)),
    SoftwareItem("frr", "FRR on switches and hosts (routed underlay)", ("roce", "ethernet")),
    SoftwareItem(
        "doca-ofed",
        "Host RDMA stack: DOCA-OFED / MLNX_OFED or inbox rdma-core",
        ("infiniband", "roce"),
    ),
    SoftwareItem("nic-firmware", "ConnectX firmware", ("infiniband", "roce", "ethernet")),
    SoftwareItem(
        "cuda-driver",
        "NVIDIA GPU driver (with the GPUDirect RDMA peer-memory module)",
        ("infiniband", "roce", "ethernet"),
    ),
    SoftwareItem("nccl", "NCCL (in the training image)", ("infiniband", "roce", "ethernet")),
    SoftwareItem(
        "nccl-tests", "nccl-tests (acceptance: bus bandwidth)", ("infiniband", "roce", "ethernet")
    ),
    SoftwareItem(
        "perftest", "perftest: ib_write_bw (acceptance: per-rail bandwidth)", ("infiniband", "roce")
    ),
    SoftwareItem("kubernetes", "Kubernetes", ("infiniband", "roce", "ethernet")),
    SoftwareItem("multus", "Multus CNI", ("infiniband", "roce", "ethernet")),
    SoftwareItem(
        "sriov-network-operator",
        "SR-IOV Network Operator (k8s_rdma sriov)",
        ("infiniband", "roce", "ethernet"),
    ),
    SoftwareItem(
        "network-operator",
        "NVIDIA Network Operator (k8s_rdma host-device / ipoib)",
        ("infiniband", "roce", "ethernet"),
    ),
    SoftwareItem(
        "gpu-operator",
        "NVIDIA GPU Operator (GPUDirect RDMA enabled)",
        ("infiniband", "roce", "ethernet"),
    ),
    SoftwareItem(
        "mpi-operator",
        "Kubeflow MPI Operator (MPIJob v2beta1, acceptance job)",
        ("infiniband", "roce", "ethernet"),
    ),
    SoftwareItem("whereabouts", "Whereabouts IPAM", ("infiniband", "roce", "ethernet")),
)
"""The software baseline rows of the design document, in order."""

_KEY = re.compile(r"^[a-z0-9][a-z0-9-]{0,40}$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


PAPER_SIZES: dict[str, str] = {"letter": "letter", "a4": "A4"}
"""``--paper`` → the CSS ``@page`` size the report prints on."""


@dataclass(frozen=True)
class DocumentInfo:
    """Document control of the design report (all optional: defaults say what is missing)."""

    title: str = ""
    revision: str = "draft"
    date: str = ""
    authors: tuple[str, ...] = ()
    software: Mapping[str, str] = field(default_factory=dict)
    paper: str = "letter"
    """Page size the report prints on: one of :data:`PAPER_SIZES`."""

    def title_for(self, cluster: str) -> str:
        """The title, or 'Network design — <cluster>' when none was given."""
        return self.title or f"Network design — {cluster}"


def document_info(
    title: str | None = None,
    revision: str | None = None,
    date: str | None = None,
    authors: Sequence[str] = (),
    software: Sequence[str] = (),
    paper: str = "letter",
) -> DocumentInfo:
    """Validate the CLI inputs into a :class:`DocumentInfo`; :class:`SpecError` names the flag."""
    if date and not _DATE.match(date):
        raise SpecError("--doc-date", f"{date[:40]!r} is not a date", "YYYY-MM-DD, e.g. 2026-11-30")
    versions: dict[str, str] = {}
    known = {s.key for s in SOFTWARE}
    for item in software:
        key, sep, version = item.partition("=")
        key, version = key.strip().lower(), version.strip()
        if not sep or not version or not _KEY.match(key):
            raise SpecError("--software", f"{item[:60]!r} is not NAME=VERSION", "e.g. nccl=2.23.4")
        if key not in known:
            raise SpecError(
                "--software", f"unknown component {key!r}", "one of " + ", ".join(sorted(known))
            )
        versions[key] = version
    for what, text in (("--doc-title", title), ("--doc-revision", revision)):
        if text is not None and not (0 < len(text.strip()) <= 120):
            raise SpecError(what, "empty or longer than 120 characters", "a short line of text")
    for a in authors:
        if not (0 < len(a.strip()) <= 80):
            raise SpecError(
                "--author", f"{a[:40]!r} is empty or too long", "a name, at most 80 characters"
            )
    if paper not in PAPER_SIZES:
        raise SpecError("--paper", f"{paper[:20]!r} is not a paper size", "a4 or letter")
    return DocumentInfo(
        title=(title or "").strip(),
        revision=(revision or "draft").strip(),
        date=date or "",
        authors=tuple(a.strip() for a in authors),
        software=versions,
        paper=paper,
    )


__all__ = ["PAPER_SIZES", "SOFTWARE", "DocumentInfo", "SoftwareItem", "document_info"]
