"""Names from the input never reach a terminal raw: every control character is printed as an escape.

A device, claim or node name is whatever a manifest says, and a terminal obeys what it is sent:
``\\x1b]0;TITLE\\x07`` in a device name would set the window title through ``drasat inventory``,
other sequences move the cursor, clear the screen, or rewrite the line a user reads (``\\r``).
Kubernetes' own API rules forbid such names, but drasat prints what it was given — that is the
point of ``validate`` — so every text drasat writes to stdout or stderr goes through
:func:`printable`: C0 and C1 control characters and DEL (and the bidirectional overrides that
reorder what is shown, "Trojan source") become ``\\x1b``, ``\\u202e``; a line break and a tab stay
in free text, and are escaped too in a table cell, which must stay one piece.

:func:`echo` is ``click.echo`` with that applied; text drasat has already made printable and
styled itself (a table drawn by rich, ``ok`` in green) is a :class:`Rendered` string and passes
unchanged. JSON and YAML need nothing: their encoders escape control characters already.
"""

from __future__ import annotations

import re
from typing import Any

import click

_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
_IN_TEXT = re.compile(f"[{_CONTROLS}]")  # line breaks and tabs kept
_IN_CELL = re.compile(f"[\t\n{_CONTROLS}]")  # a cell stays one piece


class Rendered(str):
    """Text already made printable, with styles drasat added itself (ANSI from rich or click.style)."""


_SHORT = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    """Go's %q spelling: ``\\n``, ``\\t``, ``\\r``, else ``\\xNN`` or ``\\uNNNN``."""
    found = match.group()
    code = ord(found)
    return _SHORT.get(found) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def printable(text: str, *, cell: bool = False) -> str:
    """``text`` with every control character escaped (``cell``: line breaks and tabs too)."""
    if isinstance(text, Rendered):
        return text
    return (_IN_CELL if cell else _IN_TEXT).sub(_escape, text)


def rendered(*parts: str) -> Rendered:
    """The parts one after another, each made printable unless it is :class:`Rendered` already."""
    return Rendered("".join(printable(part) for part in parts))


def styled(text: str, **style: Any) -> Rendered:
    """``click.style`` of the printable text (click strips the style again when the output is no terminal)."""
    return Rendered(click.style(printable(text), **style))


def echo(message: str = "", *, err: bool = False, nl: bool = True) -> None:
    """``click.echo`` of the printable message: what every command prints goes through here."""
    click.echo(printable(message), err=err, nl=nl)


def secho(message: str, *, err: bool = False, **style: Any) -> None:
    """``click.secho`` of the printable message."""
    click.echo(styled(message, **style), err=err)
