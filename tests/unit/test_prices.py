"""Price files (``bom --prices``): what is read, what is refused, and costs that add up."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabric_stack.errors import InputFileError
from fabric_stack.files.prices import MAX_PRICES_BYTES, PriceList, read_prices
from fabric_stack.views.costs import cost_of


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "prices.csv"
    p.write_text(text, encoding="utf-8")
    return p


def test_reads_columns_in_any_order_and_ignores_extra_ones(tmp_path: Path) -> None:
    p = _write(
        tmp_path,
        "Currency,description,UNIT_PRICE,part_number\n"
        "usd,twin-port OSFP,1299.00,MMA4Z00-NS\n"
        "\n"
        "USD,,0,qm9700\n",
    )
    pl = read_prices(p)
    assert pl.currency == "USD"
    assert pl.prices == {"MMA4Z00-NS": Decimal("1299.00"), "qm9700": Decimal("0")}
    assert pl.price("nope") is None


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("part_number,unit_price\nA,1\n", "missing column 'currency'"),
        ("part,unit_price,currency\nA,1,USD\n", "missing column 'part_number'"),
        ("", "empty file"),
        ("part_number,unit_price,currency\n", "no prices"),
        ("part_number,unit_price,currency\nA,-5,USD\n", ":2: unit_price '-5' is negative"),
        ("part_number,unit_price,currency\nA,abc,USD\n", ":2: unit_price 'abc' is not a number"),
        ("part_number,unit_price,currency\nA,nan,USD\n", "is not a number"),
        ("part_number,unit_price,currency\nA,$5,USD\n", "is not a number"),
        ("part_number,unit_price,currency\nA,1,USD\nB,2,EUR\n", ":3: currency EUR after USD"),
        ("part_number,unit_price,currency\nA,1,dollars\n", "not an ISO 4217 code"),
        ("part_number,unit_price,currency\nA,1,USD\nA,2,USD\n", "already priced on line 2"),
        ("part_number,unit_price,currency\nA,1\n", ":2: 2 cells"),
        ("part_number,unit_price,currency\n,1,USD\n", "empty 'part_number'"),
    ],
)
def test_bad_price_files_are_one_line(tmp_path: Path, text: str, needle: str) -> None:
    p = _write(tmp_path, text)
    with pytest.raises(InputFileError) as exc:
        read_prices(p)
    msg = str(exc.value)
    assert msg.startswith(str(p)), msg
    assert needle in msg, msg
    assert "\n" not in msg


def test_a_file_over_10_mib_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "big.csv"
    with p.open("wb") as f:
        f.write(b"part_number,unit_price,currency\n")
        f.truncate(MAX_PRICES_BYTES + 1)
    with pytest.raises(InputFileError, match="larger than 10 MiB"):
        read_prices(p)


def test_cost_lines_priced_and_unpriced() -> None:
    pl = PriceList(source="x.csv", currency="EUR", prices={"A": Decimal("10.10")})
    cost = cost_of([("A", 3), ("B", 2), ("A", 1)], pl)
    assert [(c.part_number, c.count, c.unit_price, c.amount) for c in cost.lines] == [
        ("A", 4, 10.1, 40.4)
    ]
    assert cost.unpriced == ("B",)
    assert cost.total == 40.4
    assert cost.currency == "EUR"


@given(
    st.dictionaries(
        st.text("ABCDEF-0123", min_size=1, max_size=6),
        st.tuples(st.integers(0, 10_000), st.decimals(0, 100_000, places=2)),
        max_size=12,
    )
)
def test_cost_lines_add_up_to_the_total(parts: dict[str, tuple[int, Decimal]]) -> None:
    pl = PriceList(source="x", currency="USD", prices={p: v for p, (_, v) in parts.items()})
    cost = cost_of([(p, n) for p, (n, _) in parts.items()], pl)
    exact = sum((Decimal(str(c.amount)) for c in cost.lines), Decimal(0))
    assert Decimal(str(cost.total)) == exact
    assert exact == sum((v * n for n, v in parts.values()), Decimal(0))
