"""The caching front of the CEL layer: which engine, and what is remembered.

Three caches, each at the level where its contents stay true:

* compiled programs (and compile errors) per engine, for the whole process -- the same
  selector text compiles the same way everywhere;
* each device's engine-specific form (or its conversion error) per evaluator, built once;
* each (expression, device) result (or run-time error) per evaluator. Devices do not
  change while an evaluator lives, and this also bounds cel-expr-python's per-call
  reference leak to one evaluation per pair.

One compiled program serves two uses with different result rules: a selector must be
bool (:meth:`SelectorEvaluator.matches`), a derived attribute a string, int, bool,
version or list of those (:meth:`SelectorEvaluator.value`, rules in :mod:`.values`).
The engines only report the checked result type; the rule is applied here, per use.

Callers create one evaluator per allocation run (or per set of ResourceSlices) and
throw it away when slices change.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import threading
from collections import OrderedDict
from collections.abc import Container, Mapping
from typing import Any, Protocol

from .device import CelDevice, validate
from .errors import (
    MAX_EXPRESSION_BYTES,
    CelCompileError,
    CelRuntimeError,
    UnknownEngine,
    compilation_failed,
    issue,
    result_type_error,
)
from .values import Value, checked, static_error

ENV_VAR = "DRASAT_CEL_ENGINE"
_ENGINES = ("cel-expr", "celpy")
_COMPILE_CACHE_SIZE = 4096


class Engine(Protocol):
    """What an engine offers the evaluator; programs and device forms are the engine's own."""

    name: str

    def compile(self, text: str) -> Any: ...  # a program with ``.result``, its checked type

    def prepare(self, data: Any) -> Any: ...

    def evaluate(self, program: Any, device: Any) -> bool: ...

    def value(self, program: Any, device: Any) -> Any: ...  # plain Python, see .values


def available_engines() -> list[str]:
    """The engines whose library can be imported here, preferred first."""
    from . import engine_celexpr

    return [name for name, found in (("cel-expr", engine_celexpr.available()), ("celpy", _celpy_installed())) if found]


@functools.lru_cache(maxsize=1)
def _celpy_installed() -> bool:
    """celpy is looked for, not imported: importing it (and its date libraries) is a tenth of a second
    that a run on cel-expr never needs; the look-up reads folders, so it is made once."""
    return importlib.util.find_spec("celpy") is not None


def default_engine_name() -> str:
    """``$DRASAT_CEL_ENGINE`` if set, else cel-expr when importable, else celpy."""
    chosen = os.environ.get(ENV_VAR, "").strip()
    if chosen:
        if chosen not in _ENGINES:
            raise UnknownEngine(f"{ENV_VAR}={chosen!r} is not a CEL engine: expected one of {', '.join(_ENGINES)}")
        return chosen
    from . import engine_celexpr

    return "cel-expr" if engine_celexpr.available() else available_engines()[0]


class _Compiled:
    """One engine and its process-wide program cache (an LRU that also remembers errors)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.lock = threading.Lock()
        self.cache: OrderedDict[str, Any] = OrderedDict()

    def program(self, text: str) -> Any:
        with self.lock:
            hit = self.cache.get(text)
            if hit is not None:
                self.cache.move_to_end(text)
        if hit is None:
            hit = self._compile(text)
            with self.lock:
                self.cache[text] = hit
                if len(self.cache) > _COMPILE_CACHE_SIZE:
                    self.cache.popitem(last=False)
        if isinstance(hit, str):
            raise CelCompileError(hit, text)
        return hit

    def _compile(self, text: str) -> Any:
        size = len(text.encode())
        if size > MAX_EXPRESSION_BYTES:
            return compilation_failed(
                issue(
                    text,
                    None,
                    f"expression is too long: {size} bytes, may not be more than {MAX_EXPRESSION_BYTES} bytes",
                )
            )
        try:
            return self.engine.compile(text)
        except CelCompileError as exc:
            return exc.detail


_REGISTRY: dict[str, _Compiled] = {}
_REGISTRY_LOCK = threading.Lock()


def _compiled(name: str) -> _Compiled:
    with _REGISTRY_LOCK:
        if name not in _REGISTRY:
            _REGISTRY[name] = _Compiled(_make_engine(name))
        return _REGISTRY[name]


def _make_engine(name: str) -> Engine:
    from . import engine_celexpr

    if name == "cel-expr":
        if not engine_celexpr.available():
            raise UnknownEngine("CEL engine 'cel-expr' is not available: cel-expr-python is not installed")
        return engine_celexpr.CelExprEngine()
    if name == "celpy":
        from . import engine_celpy

        return engine_celpy.CelpyEngine()
    raise UnknownEngine(f"unknown CEL engine {name!r}: expected one of {', '.join(_ENGINES)}")


_UNSEEN = object()


class SelectorEvaluator:
    """Compiles DRA selectors and derived attributes and evaluates them on devices, remembering every answer."""

    def __init__(self, engine: str | None = None) -> None:
        self.engine_name = engine or default_engine_name()
        self._compiled = _compiled(self.engine_name)
        self._engine = self._compiled.engine
        self._programs: dict[str, Any] = {}  # selectors whose program passed the bool rule
        self.compiled: Container[str] = self._programs
        """Selectors known to compile (read only): planning asks ``in`` before it calls :meth:`compile` on each."""
        self._value_programs: dict[tuple[str, bool], Any] = {}  # derived attributes, by (text, lists)
        self._devices: dict[Any, Any] = {}
        self._results: dict[str, dict[Any, Any]] = {}  # expression -> device key -> verdict
        self._contents: dict[Any, Any] = {}  # device key -> what a selector can see of the device
        self._by_device_content: dict[str, dict[Any, Any]] = {}  # expression -> that content -> verdict
        self._values: dict[tuple[str, bool, Any], Any] = {}

    def compile(self, expression: str) -> None:
        """Raise :class:`CelCompileError` if the selector does not compile or is not bool."""
        if expression not in self._programs:  # compiled before: asked for every selector on every call
            self._selector(expression)

    def compile_value(self, expression: str, *, lists: bool) -> None:
        """Raise :class:`CelCompileError` if the derived attribute expression does not compile
        or its checked type can never be an attribute value (``lists``: DRAListTypeAttributes)."""
        self._value_program(expression, lists)

    def matches(self, expression: str, device: CelDevice) -> bool:
        """Whether the selector accepts the device; compile and run-time errors are raised."""
        verdicts = self._results.get(expression)
        if verdicts is None:
            verdicts = self._results[expression] = {}
        hit = verdicts.get(device.key)  # two plain lookups: no tuple to build and hash per call
        if hit is None:
            hit = verdicts[device.key] = self._by_content(expression, device)
        if hit.__class__ is bool:
            return hit
        raise hit[0](hit[1]) if hit[0] is CelRuntimeError else hit[0](hit[1], expression)

    def value(self, expression: str, device: CelDevice, *, lists: bool) -> Value:
        """A derived attribute's value on the device: int, bool, str, Semver or (with ``lists``)
        a non-empty list of one of those; compile and run-time errors are raised.

        Kubernetes aborts the allocation on a run-time error rather than skipping the
        device, so errors are remembered and raised again like results.
        """
        key = (expression, lists, device.key)
        hit = self._values.get(key, _UNSEEN)
        if hit is _UNSEEN:
            hit = self._values[key] = self._evaluate_value(expression, device, lists)
        if hit.__class__ is tuple:
            raise hit[0](hit[1]) if hit[0] is CelRuntimeError else hit[0](hit[1], expression)
        return list(hit) if hit.__class__ is list else hit  # a copy: callers may not change the cache

    def _by_content(self, expression: str, device: CelDevice) -> Any:
        """The verdict for a device not seen under its key: a selector sees only the driver, attributes,
        capacity and allowMultipleAllocations — never the device's name or pool — so a device alike in those
        to one evaluated before (the same GPU model on another node) gets its verdict without evaluating.
        A cluster of a few machine types is then evaluated once per type, not once per node."""
        content = self._contents.get(device.key)
        if content is None:
            content = self._contents[device.key] = content_key(device)
        verdicts = self._by_device_content.get(expression)
        if verdicts is None:
            verdicts = self._by_device_content[expression] = {}
        hit = verdicts.get(content)
        if hit is None:
            hit = verdicts[content] = self._evaluate(expression, device)
        return hit

    def _selector(self, expression: str) -> Any:
        program = self._programs.get(expression)
        if program is None:
            program = self._compiled.program(expression)
            if program.result not in ("bool", "dyn"):
                raise CelCompileError(result_type_error(program.result), expression)
            self._programs[expression] = program
        return program

    def _value_program(self, expression: str, lists: bool) -> Any:
        program = self._value_programs.get((expression, lists))
        if program is None:
            program = self._compiled.program(expression)
            problem = static_error(program.result, lists)
            if problem is not None:
                raise CelCompileError(problem, expression)
            self._value_programs[(expression, lists)] = program
        return program

    def _evaluate(self, expression: str, device: CelDevice) -> Any:
        try:
            program = self._selector(expression)
            prepared = self._device(device)
            test = program.driver
            if test is not None:  # exact shortcut, see analysis.DriverTest
                if device.driver != test.driver:
                    return False
                if test.alone:
                    return True
            return self._engine.evaluate(program, self._prepared(device, prepared))
        except CelCompileError as exc:
            return (CelCompileError, exc.detail)
        except CelRuntimeError as exc:
            return (CelRuntimeError, exc.detail)

    def _evaluate_value(self, expression: str, device: CelDevice, lists: bool) -> Any:
        try:
            program = self._value_program(expression, lists)
            prepared = self._prepared(device, self._device(device))
            return checked(self._engine.value(program, prepared), lists)
        except CelCompileError as exc:
            return (CelCompileError, exc.detail)
        except CelRuntimeError as exc:
            return (CelRuntimeError, exc.detail)

    def _device(self, device: CelDevice) -> Any:
        """The device's engine form (None until an engine needs it); raises its conversion error."""
        prepared = self._devices.get(device.key, _UNSEEN)
        if prepared is _UNSEEN:
            error = validate(device)
            prepared = self._devices[device.key] = error  # None: valid, not yet prepared
        if prepared.__class__ is str:
            raise CelRuntimeError(prepared)
        return prepared

    def _prepared(self, device: CelDevice, prepared: Any) -> Any:
        if prepared is None:
            prepared = self._devices[device.key] = self._engine.prepare(device)
        return prepared


def content_key(device: CelDevice) -> tuple:
    """Everything a selector can read of a device, as one hashable value (its name and pool are not part
    of the CEL environment: ``device.driver``, ``attributes``, ``capacity``, ``allowMultipleAllocations``)."""
    attributes = tuple(sorted((name, _frozen(raw)) for name, raw in device.attributes.items()))
    capacity = tuple(sorted((name, repr(value)) for name, value in device.capacity.items()))
    return device.driver, bool(device.allow_multiple_allocations), attributes, capacity


def _frozen(value: Any) -> Any:
    if isinstance(value, Mapping):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    return value
