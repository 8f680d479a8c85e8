"""Fixtures and hooks every test module shares."""

from __future__ import annotations

from pathlib import Path

import pytest

from .shared_inputs import SHARED, require_shared


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Tests that take the ``shared`` fixture skip here when the shared inputs are absent.

    Skipping from this hook (not from inside the fixture, which pytest reports at each
    test's own line) makes the summary fold every such skip into one line, one reason.
    """
    if "shared" in getattr(item, "fixturenames", ()):
        require_shared()


@pytest.fixture
def shared() -> Path:
    """The shared inputs folder (scenarios/, seeds/)."""
    return SHARED
