"""Tables that degrade well on a narrow terminal: whole columns, not names cut to ``su1-…``.

A rich table squeezed below its natural width cuts every cell with an ellipsis, names
included. :func:`fit_columns` keeps the columns that fit whole, in order of importance,
and names the ones it left out, so the reader sees complete names and knows where the
rest is (``--format csv`` or ``json``).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["fit_columns"]

BORDER = 3
"""Width a rich table spends per column on padding and its separator."""


def fit_columns(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    width: int,
    keep: int = 1,
) -> tuple[list[int], list[str]]:
    """(indices of the columns to show, headers left out) for a table ``width`` wide.

    Columns are taken in order, most important first (the first ``keep`` always), while
    their natural widths (longest value or header) fit; the first that does not fit ends
    the table, so a column is never shown without the ones that explain it. Pure.
    """
    natural = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    used, shown = 1, []
    for i, w in enumerate(natural):
        if i >= keep and used + w + BORDER > width:
            break
        shown.append(i)
        used += w + BORDER
    return shown, list(headers[len(shown) :])
