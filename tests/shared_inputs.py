"""Where the shared inputs are (scenarios/, seeds/), and the one reason tests skip without them.

The conformance scenarios and seed examples live beside the clone (``../shared``, as in
CI) or wherever ``$DRASAT_SHARED`` points. On a fresh machine without them the README's
test command must still pass: every test that reads them takes the ``shared`` fixture
(tests/conftest.py), which skips from this one place, so pytest's summary folds every
such skip into one line with one reason.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

SHARED = Path(os.environ.get("DRASAT_SHARED") or Path(__file__).resolve().parents[2] / "shared")
MISSING = (
    f"shared inputs not found at {SHARED} (needs scenarios/ and seeds/examples/): "
    "put shared/ beside the clone or set DRASAT_SHARED"
)


def shared_available() -> bool:
    return (SHARED / "scenarios").is_dir() and (SHARED / "seeds" / "examples").is_dir()


def require_shared() -> Path:
    """The shared folder, or skip the calling test with the one reason."""
    if not shared_available():
        pytest.skip(MISSING)
    return SHARED


def shared_files(*subdirs: str) -> list[Path]:
    """YAML files under shared/<subdir>, sorted; empty when shared/ is absent."""
    return sorted(p for sub in subdirs for p in (SHARED / sub).glob("*.yaml"))


def params(values: Sequence[Any], arity: int = 1) -> list[Any]:
    """``values`` for ``parametrize``; one placeholder when shared/ is absent.

    Without it pytest would skip with "got empty parameter set" instead of the one
    reason; the placeholder's test takes the ``shared`` fixture and skips before using it.
    """
    if values or shared_available():
        return list(values)
    return [pytest.param(*([None] * arity), id="no-shared-inputs")]
