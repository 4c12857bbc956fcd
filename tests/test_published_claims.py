"""The claims of the published book, checked on the data it shows.

The book online is built in the cpu profile, and its precomputed figures come from ``data/``.
Each theme's ``claims.published_claims()`` computes the claims rows that rest on those files (the same
functions as the page's claims table), and every row that the chapter's prose asserts must come
out "yes" there, not only in the smoke runs of the claim tests. The Pages workflow's cpu build
enforces the rest (``DYNAMICS_STRICT_CLAIMS=1``: a claims table with an asserted row that is
not reproduced fails the build).
"""
import importlib

import pytest

from dynamics import CHAPTERS, plots


@pytest.mark.parametrize("chapter", sorted(CHAPTERS))
def test_published_claims_hold_on_the_precomputed_data(chapter):
    claims = importlib.import_module(f"dynamics.{CHAPTERS[chapter]}.claims")
    assert hasattr(claims, "published_claims"), (
        f"dynamics.{CHAPTERS[chapter]}.claims has no published_claims()")
    rows = claims.published_claims()
    experiments = importlib.import_module(f"dynamics.{CHAPTERS[chapter]}.experiments")
    if hasattr(experiments, "precompute_plan"):  # it publishes data: rows rest on them
        assert rows, f"{chapter}: published_claims() returned no rows"
    else:  # every number on its page is computed in the build (schedules): no published rows
        assert rows == [], f"{chapter}: published rows, but the chapter precomputes no data"
    bad = plots.failed_claims(rows)
    assert not bad, f"{chapter}: asserted claims not reproduced on data/:\n" + "\n".join(
        f"- {r['claim']}: {r['measured here']} ({r['reproduced']})" for r in bad)


def test_strict_claims_table_refuses_an_asserted_row_that_failed(monkeypatch):
    from dynamics import evidence
    monkeypatch.setitem(evidence.NOT_YET_JUDGED, "test", ("a", "b", "c"))
    ok = plots.claim("a", "paper", "1", "yes")
    shown = plots.claim("b", "paper", "2", "no", asserted=False)
    bad = plots.claim("c", "paper", "3", "partly")
    plots.claims_table([ok, shown, bad], strict=False)
    plots.claims_table([ok, shown], strict=True)
    with pytest.raises(plots.ClaimNotShown, match="c: 3"):
        plots.claims_table([ok, shown, bad], strict=True)
    monkeypatch.setenv("DYNAMICS_STRICT_CLAIMS", "1")
    with pytest.raises(plots.ClaimNotShown):
        plots.claims_table([bad])
    assert "✗ no" in plots.claims_table([shown]).data
