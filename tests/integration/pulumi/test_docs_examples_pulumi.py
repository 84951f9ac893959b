"""The README's and docs' ```console-pulumi examples, run on the real engine.

Each page with such a block runs top to bottom (its pure examples too, in order) in a
throw-away Pulumi project with a ``file://`` backend (the ``pulumi_env`` fixture), and every
output must be what the page shows; :mod:`tests.docs_examples` has the convention.
``python -m tests.docs_examples --update --pulumi`` rewrites them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs_examples import (
    GENERATED,
    PAGES,
    PULUMI,
    PURE,
    REPO,
    has_kind,
    prepare_pulumi,
    run_page,
)

pytestmark = [pytest.mark.pulumi, pytest.mark.slow]

PULUMI_PAGES = [p for p in PAGES if has_kind(p, PULUMI)]


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("page", PULUMI_PAGES, ids=lambda p: p.relative_to(REPO).as_posix())
def test_pulumi_examples_print_what_the_page_shows(
    page: Path, tmp_path: Path, pulumi_env: dict[str, str]
) -> None:
    results = run_page(page, (PURE, GENERATED, PULUMI), prepare_pulumi(tmp_path), pulumi_env)
    wrong = [r for r in results if not r.ok]
    assert not wrong, "\n\n".join(r.diff() for r in wrong) + (
        "\n\nto accept: python -m tests.docs_examples --update --pulumi, then review the diff"
    )


def test_there_are_pulumi_examples() -> None:
    # The README's plan/apply examples and the walkthrough page (a page losing its
    # console-pulumi blocks would silently drop them from every run).
    assert {p.relative_to(REPO).as_posix() for p in PULUMI_PAGES} >= {
        "README.md",
        "docs/pulumi-stack.md",
    }
