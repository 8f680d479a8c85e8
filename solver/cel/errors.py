"""The two CEL failures a selector can cause, in engine-neutral words.

Kubernetes' allocator reports a selector that does not compile and one that fails on a
device in different ways (both abort the allocation), so drasat keeps them apart too.
Each carries ``detail``: the text Kubernetes would put after ``CEL compile error:`` or
``CEL runtime error:``, whichever engine produced it, so that messages and tests do not
depend on the engine in use.
"""

from __future__ import annotations

from drasat.models.errors import EvaluationError, InputError, SelectorError

#: Kubernetes' allocator appends this to every ``no such key`` runtime error.
MISSING_KEY_HINT = (
    ". consider using CEL optional chaining (.? followed by orValue()) "
    "or guarding the check with has() for optional fields"
)
#: cel-go's text when the runtime cost limit is hit; both engines report budget exhaustion so.
COST_EXCEEDED = "operation cancelled: actual cost limit exceeded"
#: Kubernetes' ``CELSelectorExpressionMaxLength``.
MAX_EXPRESSION_BYTES = 10 * 1024


class CelCompileError(SelectorError):
    """A selector does not compile: syntax, undeclared names, types, result type or limits."""

    def __init__(self, detail: str, expression: str | None = None) -> None:
        self.detail = detail
        self.expression = expression
        super().__init__(detail)


class CelRuntimeError(EvaluationError):
    """A selector failed while being evaluated on one device."""

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__(detail)


class UnknownEngine(InputError, ValueError):
    """A CEL engine drasat does not know, or whose library is not installed (``$DRASAT_CEL_ENGINE``, ``--cel-engine``).

    Bad input like any other (exit 2, one message); still a ValueError for callers that caught that before.
    """


def missing_key(key: object) -> str:
    """The text of a failed map lookup, as Kubernetes' allocator words it."""
    return f"no such key: {key}{MISSING_KEY_HINT}"


def issue(text: str, offset: int | None, message: str) -> str:
    """One cel-go style issue: ``ERROR: <input>:L:C: msg`` plus the source line and a caret.

    ``offset`` is a character offset into ``text``; ``None`` gives the location-less form
    that cel-go also uses.
    """
    if offset is None:
        return f"ERROR: <input>:-1:-1: {message}"
    offset = max(0, min(offset, len(text)))
    line_no = text.count("\n", 0, offset) + 1
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    source = text[line_start:] if line_end < 0 else text[line_start:line_end]
    column = offset - line_start + 1
    return f"ERROR: <input>:{line_no}:{column}: {message}\n | {source}\n | {'.' * (column - 1)}^"


def compilation_failed(issues: str) -> str:
    """Kubernetes' prefix for checker issues (result-type and limit errors have none)."""
    return f"compilation failed: {issues}"


def result_type_error(type_name: str) -> str:
    """Kubernetes' text for a selector whose static type is neither bool nor dyn."""
    return f"must evaluate to bool or the unknown type, not {type_name}"


def non_bool_result(type_name: str) -> str:
    """Kubernetes' text for a dyn-typed selector that produced a non-bool value."""
    return f"CEL result of type {type_name} could not be converted to bool"
