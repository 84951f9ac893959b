"""Policy-violation banners for files rendered from a plan that fails a mandatory rule.

``fabric-stack render`` refuses such a plan (exit 1, nothing written) unless
``--allow-violations``; then every file starts with a banner naming each
mandatory violation, in the file's own comment syntax, so a switch script or
manifest copied out of the output directory still says it came from a design
the policy rejected.

Comment syntax per file type (:func:`banner_style`):

* ``#`` for YAML, shell (after the ``#!`` line, which must stay first), OpenSM
  and partition files (``partitions.conf.user_ext`` too), the node-name map,
  ``.env``, ``.topo`` and IBNL files;
* ``!`` for FRR configuration (FRR's own comment character, as its files use; taken
  from :mod:`fabric_stack.nos.frr`);
* HTML: a comment right after ``<!DOCTYPE html>`` and a visible red box at the
  top of ``<main>`` (a reviewer reads the page, not its source);
* Markdown: a block quote at the top (visible when rendered);
* JSON has no comments: a top-level object gets a ``"_violations"`` key first
  (still valid JSON, and a consumer with a strict schema rejects the file, which
  is what a file from a rejected design should cause); any other JSON value is
  refused rather than silently written without its banner.

A file type not listed here is a programming error (a new renderer must add its
syntax), never a file written without the banner.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from pathlib import PurePosixPath

from fabric_stack.artifacts._base import Artifact
from fabric_stack.nos.frr import FRR
from fabric_stack.policy import Violation

HASH_SUFFIXES = (".yaml", ".yml", ".sh", ".conf", ".env", ".topo", ".ibnl", ".csv", ".cfg")
"""File suffixes whose comments start with ``#``."""

HASH_NAMES = ("ib-node-name-map", "partitions.conf.user_ext")
"""Files whose suffix says nothing that take ``#`` comments (OpenSM reads the user_ext
partitions file with the partitions.conf syntax, ``#`` comments included)."""


class BannerError(RuntimeError):
    """A file that cannot carry a banner (no comment syntax known for it)."""


def violation_lines(violations: Sequence[Violation]) -> list[str]:
    """The banner's text: a title line and one line per violation."""
    n = len(violations)
    head = (
        f"POLICY VIOLATIONS: rendered with --allow-violations from a plan that fails "
        f"{n} mandatory policy check(s). Do not deploy before they are fixed "
        "(`fabric-stack check` explains each):"
    )
    return [head] + [f"- {v.rule}: {v.message}" for v in violations]


def banner_style(path: str) -> str:
    """'hash', 'bang', 'html', 'markdown' or 'json' for ``path``; :class:`BannerError` if none."""
    p = PurePosixPath(path)
    if p.suffix == ".conf" and p.parts[0] == "frr":
        return "bang"
    if p.suffix in HASH_SUFFIXES or p.name in HASH_NAMES:
        return "hash"
    styles = {".html": "html", ".md": "markdown", ".json": "json"}
    if p.suffix in styles:
        return styles[p.suffix]
    raise BannerError(
        f"no comment syntax known for {path}: add it to fabric_stack/artifacts/banner.py"
    )


def _commented(content: str, lines: list[str], prefix: str, gap: str = "") -> str:
    block = "".join(f"{prefix}{line}\n" for line in lines) + (gap or f"{prefix}\n")
    if content.startswith("#!"):  # the interpreter line must stay first
        first, _, rest = content.partition("\n")
        return f"{first}\n{block}{rest}"
    return block + content


def _html(content: str, lines: list[str]) -> str:
    comment = "<!--\n" + "\n".join(line.replace("--", "- -") for line in lines) + "\n-->\n"
    box = (
        '<div style="border:3px solid #b3261e;background:#fdf0ef;padding:8px 12px;'
        'margin:0 0 12px"><b>'
        + escape(lines[0])
        + "</b><ul>"
        + "".join(f"<li>{escape(line[2:])}</li>" for line in lines[1:])
        + "</ul></div>"
    )
    doctype, nl, rest = content.partition("\n")
    if not doctype.lower().startswith("<!doctype"):
        doctype, nl, rest = "", "", content
    rest = rest.replace("<main>", "<main>" + box, 1) if "<main>" in rest else box + rest
    return f"{doctype}{nl}{comment}{rest}"


def _json(path: str, content: str, violations: Sequence[Violation]) -> str:
    data = json.loads(content)
    if not isinstance(data, dict):
        raise BannerError(f"{path}: JSON that is not an object cannot carry a banner")
    out = {"_violations": violation_lines(violations), **data}
    return json.dumps(out, indent=2, ensure_ascii=False) + "\n"


def with_banner(art: Artifact, violations: Sequence[Violation]) -> Artifact:
    """``art`` with the violation banner at its top (see the module docstring)."""
    lines = violation_lines(violations)
    style = banner_style(art.path)
    if style == "hash":
        text = _commented(art.content, lines, "# ")
    elif style == "bang":
        text = _commented(art.content, lines, FRR.comment_prefix)
    elif style == "html":
        text = _html(art.content, lines)
    elif style == "markdown":
        text = _commented(art.content, lines, "> ", gap="\n")  # a blank line ends the quote
    else:
        text = _json(art.path, art.content, violations)
    return Artifact(art.target, art.path, text)


def with_banners(arts: Sequence[Artifact], violations: Sequence[Violation]) -> list[Artifact]:
    """Every artifact with the banner (all or none: a file that cannot carry one raises)."""
    return [with_banner(a, violations) for a in arts]


__all__ = ["BannerError", "banner_style", "violation_lines", "with_banner", "with_banners"]
