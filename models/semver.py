"""Semantic versions (semver.org 2.0.0), as Kubernetes' DRA attributes and CEL ``semver()`` use them.

Version attributes compare by semver precedence, not as strings (``1.10.0 > 1.9.0``,
``1.0.0-alpha < 1.0.0``), and build metadata never affects precedence.
"""

from __future__ import annotations

import re
from functools import lru_cache, total_ordering
from typing import Any

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema

from .wording import describe

_NUM = r"0|[1-9][0-9]*"
_PRE_ID = r"(?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)"
_STRICT = re.compile(
    rf"^({_NUM})\.({_NUM})\.({_NUM})"
    rf"(?:-({_PRE_ID}(?:\.{_PRE_ID})*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)
MAX_LENGTH = 64


class SemverError(ValueError):
    """The text is not a semantic version."""


@total_ordering
class Semver:
    """A parsed semantic version; ``==`` and ordering follow semver precedence."""

    __slots__ = ("major", "minor", "patch", "prerelease", "build", "text")

    def __init__(
        self,
        major: int,
        minor: int,
        patch: int,
        prerelease: tuple[str, ...] = (),
        build: tuple[str, ...] = (),
        text: str | None = None,
    ) -> None:
        self.major, self.minor, self.patch = major, minor, patch
        self.prerelease, self.build = prerelease, build
        self.text = text if text is not None else self._render()

    @classmethod
    def parse(cls, text: str, normalize: bool = False) -> Semver:
        """Strict semver 2.0.0; with ``normalize`` also ``v1``, ``1.2`` and leading zeros (Kubernetes' option)."""
        if not isinstance(text, str):
            raise SemverError(f"a version must be a string, not {describe(text)}")
        return _parse(text, normalize)

    def _render(self) -> str:
        out = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            out += "-" + ".".join(self.prerelease)
        if self.build:
            out += "+" + ".".join(self.build)
        return out

    def _key(self) -> tuple[Any, ...]:
        # A release sorts after all of its pre-releases; numeric identifiers sort before
        # alphanumeric ones; a shorter list of identifiers sorts first when all else is equal.
        pre = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in self.prerelease)
        return (self.major, self.minor, self.patch, 0 if self.prerelease else 1, pre)

    def compare(self, other: Semver) -> int:
        a, b = self._key(), other._key()
        return (a > b) - (a < b)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Semver) and self._key() == other._key()

    def __lt__(self, other: Semver) -> bool:
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Semver({self.text!r})"

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        def validate(v: Any) -> Semver:
            return v if isinstance(v, Semver) else cls.parse(v)

        return core_schema.no_info_plain_validator_function(
            validate,
            serialization=core_schema.plain_serializer_function_ser_schema(str, when_used="always"),
        )


@lru_cache(maxsize=4096)
def _parse(text: str, normalize: bool) -> Semver:
    if len(text) > MAX_LENGTH:
        raise SemverError(f"version {text[:20]!r}... is longer than {MAX_LENGTH} characters")
    candidate = _normalized(text) if normalize else text
    match = _STRICT.match(candidate)
    if not match:
        raise SemverError(
            f"{text!r} is not a semantic version (MAJOR.MINOR.PATCH[-pre][+build], no leading 'v', no leading zeros)"
        )
    major, minor, patch, pre, build = match.groups()
    return Semver(
        int(major),
        int(minor),
        int(patch),
        tuple(pre.split(".")) if pre else (),
        tuple(build.split(".")) if build else (),
        candidate,
    )


def _normalized(text: str) -> str:
    """Kubernetes' ``normalizeAndParse``: drop a leading ``v``, strip leading zeros, fill in minor/patch.

    Mirrors apiserver's ``library/semverlib.go`` exactly: only a lower-case ``v`` is
    dropped, zeros are stripped from each of the (at most three) dot-separated parts,
    and a shortened version may not carry pre-release or build metadata.
    """
    text = text[1:] if text.startswith("v") else text
    parts = text.split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            if not part or part[0] not in "0123456789":
                part = "0" + part
            parts[i] = part
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise SemverError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)
