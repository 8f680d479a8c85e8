"""Option types the commands share, each refusing what would make no sense with a plain message."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import click


class Seconds(click.ParamType):
    """A time limit: a finite number of seconds above zero.

    ``float()`` accepts ``nan``, ``inf`` and ``1e400`` (which is ``inf``); none of them is
    a time limit a solver can keep, and ``0`` or less could only ever time out.
    """

    name = "seconds"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, float) and math.isfinite(value) and value > 0:
            return value
        try:
            seconds = float(str(value).strip())
        except ValueError:
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(seconds) or seconds <= 0:
            self.fail(
                f"{value!r} is not a time limit: give a finite number of seconds above 0, such as 30 or 0.5", param, ctx
            )
        return seconds


class Timestamp(click.ParamType):
    """An RFC 3339 moment (``2026-12-02T18:00:00Z``; without a zone, UTC), as the API writes timestamps."""

    name = "timestamp"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> datetime:
        if isinstance(value, datetime):
            return value
        text = str(value).strip()
        try:
            moment = datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in "zZ" and text else text)
        except ValueError:
            self.fail(f"{value!r} is not an RFC 3339 timestamp, such as 2026-12-02T18:00:00Z", param, ctx)
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
