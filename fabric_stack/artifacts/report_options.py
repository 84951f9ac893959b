"""The design report's "Options considered" section: `fabric-stack compare` in HTML.

The same :class:`~fabric_stack.views.options.Comparison` the command prints (default
candidates and weights: InfiniBand on the Quantum switch and RoCEv2 on the Spectrum switch
for the NIC speed), its options table and the recommendation with its reasons, so the
report and `compare --format markdown` cannot disagree.
"""

from __future__ import annotations

from html import escape

from fabric_stack.errors import FabricStackError
from fabric_stack.spec.model import FabricSpec
from fabric_stack.views.compare import option_rows
from fabric_stack.views.options import Comparison, compare_fabrics


def _e(x: object) -> str:
    return escape(str(x), quote=True)


def options_comparison(spec: FabricSpec) -> Comparison | str:
    """The comparison for ``spec``, or the one-line reason it cannot be planned."""
    try:
        return compare_fabrics(spec)
    except FabricStackError as exc:
        return exc.message


def render_options_section(found: Comparison | str) -> str:
    """HTML body of the section: the options side by side, the decision, the reasons."""
    if isinstance(found, str):
        return f'<p class="note">The fabric options could not be planned: {_e(found)}</p>'
    rec = found.recommendation
    head = "".join(f"<th>{_e(c.label)}</th>" for c in found.candidates)
    rows = "".join(
        f"<tr><td>{_e(name)}</td>"
        + "".join(f"<td>{_e(cell(c))}</td>" for c in found.candidates)
        + "</tr>"
        for name, cell in option_rows(found)
    )
    reasons = "".join(f"<li>{_e(r)}</li>" for r in rec.reasons)
    return (
        "<p>The same cluster planned on each candidate fabric with the whole pipeline "
        "(<code>fabric-stack compare</code>); latency figures carry their source, "
        "UNVERIFIED where not confirmed.</p>"
        f"<table><thead><tr><th></th>{head}</tr></thead><tbody>{rows}</tbody></table>"
        f"<p><b>Decision:</b> {_e(rec.paragraph)}</p><ul>{reasons}</ul>"
    )
