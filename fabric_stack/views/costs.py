"""What an order costs: part counts × a buyer's unit prices (:mod:`fabric_stack.files.prices`).

:func:`cost_of` is the one place a count meets a price (``bom --prices`` and
``compare --prices`` both call it). Amounts are summed as decimals and rounded to the
cent once per line, so the lines add up to the total exactly; a part the price file
does not list is named in :attr:`Cost.unpriced`, never priced at zero.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import ROUND_HALF_EVEN, Decimal

from pydantic import BaseModel, ConfigDict, Field

from fabric_stack.files.prices import PriceList

_CENT = Decimal("0.01")


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CostLine(_Model):
    """One priced part: how many, at what unit price, for what amount."""

    part_number: str = Field(description="Part number (a switch's catalog key or SKU).")
    count: int = Field(description="Units to order.")
    unit_price: float = Field(description="Unit price from the price file.")
    amount: float = Field(description="count × unit_price, rounded to the cent.")


class Cost(_Model):
    """The cost of an order: priced lines, their total, and the parts without a price."""

    currency: str = Field(description="ISO 4217 code of every figure (the price file's).")
    lines: tuple[CostLine, ...] = Field(description="Priced parts, in the order's order.")
    total: float = Field(description="Sum of the lines' amounts (unpriced parts excluded).")
    unpriced: tuple[str, ...] = Field(
        description="Part numbers the price file lacks: the total leaves them out."
    )
    source: str = Field(description="The price file.")


def _amount(count: int, price: Decimal) -> Decimal:
    return (price * count).quantize(_CENT, rounding=ROUND_HALF_EVEN)


def cost_of(parts: Iterable[tuple[str, int]], prices: PriceList) -> Cost:
    """Price ``(part_number, count)`` pairs (a part listed twice is counted once, summed)."""
    counts: dict[str, int] = {}
    for part, n in parts:
        counts[part] = counts.get(part, 0) + n
    lines: list[CostLine] = []
    unpriced: list[str] = []
    total = Decimal(0)
    for part, n in counts.items():
        price = prices.price(part)
        if price is None:
            unpriced.append(part)
            continue
        amount = _amount(n, price)
        total += amount
        lines.append(
            CostLine(part_number=part, count=n, unit_price=float(price), amount=float(amount))
        )
    return Cost(
        currency=prices.currency,
        lines=tuple(lines),
        total=float(total),
        unpriced=tuple(unpriced),
        source=prices.source,
    )


def money(amount: float, currency: str) -> str:
    """An amount as printed in tables: ``1,234.50 USD``."""
    return f"{amount:,.2f} {currency}"


def cost_line(cost: Cost) -> str:
    """The cost total, and what it leaves out, as one sentence."""
    line = f"Cost: {money(cost.total, cost.currency)} at the prices of {cost.source}"
    if cost.unpriced:
        line += f"; not priced there (left out): {', '.join(cost.unpriced)}"
    return line + "."


def cost_markdown(cost: Cost) -> list[str]:
    """The priced lines and the total as Markdown lines."""
    lines = [
        f"### Cost ({cost.currency})",
        "",
        "| Part number | Count | Unit price | Amount |",
        "|---|--:|--:|--:|",
    ]
    lines += [
        f"| {c.part_number} | {c.count:,} | {c.unit_price:,.2f} | {c.amount:,.2f} |"
        for c in cost.lines
    ]
    lines += [f"| **Total** | | | **{cost.total:,.2f}** |", "", cost_line(cost)]
    return lines


__all__ = ["Cost", "CostLine", "cost_line", "cost_markdown", "cost_of", "money"]
