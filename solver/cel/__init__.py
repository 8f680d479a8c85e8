"""DRA device selectors in CEL, evaluated as Kubernetes' allocator evaluates them.

Two engines sit behind one interface: cel-expr-python (Google's C++ CEL, the default)
and celpy (pure Python, the fallback where cel-expr-python has no wheel). Both follow
Kubernetes' DRA environment: ``device.driver``, ``device.attributes[domain][id]``,
``device.capacity[domain][id]`` as quantities, ``device.allowMultipleAllocations``, the
quantity and semver libraries, ``includes``, ``cel.bind`` and the strings extension.

The same evaluator computes derived attributes (``SelectorEvaluator.value``), and
:mod:`.validate` lets ``drasat validate`` compile every expression of an object.
"""

from .device import CelDevice
from .errors import CelCompileError, CelRuntimeError
from .evaluator import SelectorEvaluator, available_engines, default_engine_name

__all__ = [
    "CelDevice",
    "CelCompileError",
    "CelRuntimeError",
    "SelectorEvaluator",
    "available_engines",
    "default_engine_name",
]
