"""Generated files are fresh: re-rendering them gives the committed bytes."""

from __future__ import annotations

import pytest

from rram.generate import REPO_DIR, artefacts


@pytest.mark.parametrize("path", sorted(artefacts()), ids=lambda p: p.name)
def test_generated_file_is_fresh(path):
    render = artefacts()[path]
    assert path.exists(), f"{path} is missing: run `rram generate`"
    assert path.read_text() == render(), (
        f"{path.relative_to(REPO_DIR)} is stale or was edited by hand: run `rram generate`"
    )


def test_rendering_is_deterministic():
    for render in artefacts().values():
        assert render() == render()
