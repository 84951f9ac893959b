"""Reading a price file: ``part_number,unit_price,currency`` CSV → a :class:`PriceList`.

``bom --prices FILE`` reads one (and ``compare --prices`` reuses :func:`read_prices`). No
prices ship with fabric-stack: a buyer brings the list they were quoted. The file goes
through the input layer (regular file, at most :data:`MAX_PRICES_BYTES`, UTF-8, CSV that
parses), then every problem is one :class:`~fabric_stack.errors.InputFileError` line naming
the file, the line and what would be valid:

* the header must name ``part_number``, ``unit_price`` and ``currency`` (any order, any
  case; further columns such as a description are allowed and ignored);
* a price is a finite decimal number, zero or more (``1234.50``; no currency sign, no
  thousands separator: ``1,234`` would be two CSV cells);
* one currency for the whole file (an ISO 4217 code such as ``USD``), so a total is one sum;
* a part number appears once.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from fabric_stack.errors import InputFileError
from fabric_stack.files import inputs

COLUMNS = ("part_number", "unit_price", "currency")
"""The columns every price file has (others are ignored)."""

MAX_PRICES_BYTES = 10 << 20
"""A price list of every part a fabric uses is a few KB; 10 MiB is surely the wrong file."""

_CURRENCY = re.compile(r"^[A-Z]{3}$")
_PRICE = re.compile(r"^\d+(\.\d+)?$")


class PriceList(BaseModel):
    """Unit prices by part number, in one currency."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str = Field(description="The file the prices were read from.")
    currency: str = Field(description="ISO 4217 currency code of every price, e.g. 'USD'.")
    prices: dict[str, Decimal] = Field(description="Unit price by part number.")

    def price(self, part_number: str) -> Decimal | None:
        """The unit price of ``part_number`` (None when the file does not list it)."""
        return self.prices.get(part_number)


def _header(cells: list[str] | None, path: str) -> dict[str, int]:
    """Column index of each of :data:`COLUMNS` (an error naming the first one missing)."""
    if cells is None:
        raise InputFileError(
            path, "empty file (expected the header part_number,unit_price,currency)", 1
        )
    cols = [c.strip().lstrip("\ufeff").lower() for c in cells]
    for need in COLUMNS:
        if need not in cols:
            raise InputFileError(
                path, f"missing column {need!r} (header: part_number,unit_price,currency)", 1
            )
    return {c: cols.index(c) for c in COLUMNS}


def _price(cell: str, path: str, line: int) -> Decimal:
    """A unit price: a plain non-negative decimal number."""
    text = cell.strip()
    if text.startswith("-"):
        raise InputFileError(path, f"unit_price {text!r} is negative (a price is 0 or more)", line)
    if not _PRICE.match(text):
        raise InputFileError(
            path,
            f"unit_price {text!r} is not a number (a plain decimal like 1234.50, no currency "
            "sign or thousands separator)",
            line,
        )
    try:
        return Decimal(text)
    except InvalidOperation:  # pragma: no cover - the pattern admits only valid decimals
        raise InputFileError(path, f"unit_price {text!r} is not a number", line) from None


def read_prices(path: str | Path) -> PriceList:
    """The price list in ``path`` (see the module docstring for what is refused)."""
    p = str(path)
    text = inputs.read_text(path, MAX_PRICES_BYTES)
    rows = inputs.csv_reader(text, p)
    at = _header(next(rows, None), p)
    prices: dict[str, Decimal] = {}
    first_line: dict[str, int] = {}
    currency = ""
    currency_line = 0
    for line, raw in enumerate(rows, start=2):
        if not raw or all(not c.strip() for c in raw):
            continue
        if len(raw) <= max(at.values()):
            raise InputFileError(
                p, f"{len(raw)} cells, the header has {max(at.values()) + 1} or more", line
            )
        part = raw[at["part_number"]].strip()
        if not part:
            raise InputFileError(p, "empty 'part_number' cell (every row prices a part)", line)
        cur = raw[at["currency"]].strip().upper()
        if not _CURRENCY.match(cur):
            raise InputFileError(
                p,
                f"currency {raw[at['currency']].strip()!r} is not an ISO 4217 code like USD",
                line,
            )
        if currency and cur != currency:
            raise InputFileError(
                p,
                f"currency {cur} after {currency} on line {currency_line} (one currency per "
                "file, so the total is one sum)",
                line,
            )
        currency, currency_line = cur, currency_line or line
        if part in prices:
            raise InputFileError(
                p, f"part {part!r} is already priced on line {first_line[part]}", line
            )
        prices[part] = _price(raw[at["unit_price"]], p, line)
        first_line[part] = line
    if not prices:
        raise InputFileError(p, "no prices (expected a row per part after the header)")
    return PriceList(source=p, currency=currency, prices=prices)


__all__ = ["COLUMNS", "MAX_PRICES_BYTES", "PriceList", "read_prices"]
