"""Which Kubernetes kinds drasat reads, in which API versions, and with which model.

One table answers three questions for the loader: is this document something
drasat uses (otherwise it is skipped with a notice), which model parses it, and
whether its API version must first be converted to the version that model
describes. Keeping that in one place means adding a kind is one line.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache

from .core import Namespace, Node, Pod, PodGroup
from .meta import TypedObject
from .resource import DeviceClass, DeviceTaintRule, ResourceClaim, ResourceClaimTemplate, ResourceSlice

RESOURCE_GROUP = "resource.k8s.io"


@dataclass(frozen=True)
class KindInfo:
    """One kind: its group, its model, the version the model describes, and older readable versions.

    ``source`` is the model itself, or for a kind few inputs hold the name of the module in
    :mod:`drasat.models` that defines it (a class named as the kind), imported at the first use.
    """

    group: str
    kind: str
    source: type[TypedObject] | str
    version: str
    older: tuple[str, ...] = ()
    namespaced: bool = False

    @property
    def model(self) -> type[TypedObject]:
        """The kind's model class (see :func:`_model` for a kind given by its module)."""
        source = self.source
        return source if not isinstance(source, str) else _model(source, self.kind)

    @property
    def api_version(self) -> str:
        """The apiVersion the model describes (``v1`` for the core group)."""
        return f"{self.group}/{self.version}" if self.group else self.version

    def reads(self, version: str) -> bool:
        return version == self.version or version in self.older


_OLD_DRA = ("v1beta2", "v1beta1", "v1alpha3")

KINDS: tuple[KindInfo, ...] = (
    KindInfo(RESOURCE_GROUP, "DeviceClass", DeviceClass, "v1", _OLD_DRA),
    KindInfo(RESOURCE_GROUP, "ResourceClaim", ResourceClaim, "v1", _OLD_DRA, namespaced=True),
    KindInfo(RESOURCE_GROUP, "ResourceClaimTemplate", ResourceClaimTemplate, "v1", _OLD_DRA, namespaced=True),
    KindInfo(RESOURCE_GROUP, "ResourceSlice", ResourceSlice, "v1", _OLD_DRA),
    KindInfo(RESOURCE_GROUP, "DeviceTaintRule", DeviceTaintRule, "v1", ("v1beta2", "v1alpha3")),
    KindInfo(RESOURCE_GROUP, "ResourcePoolStatusRequest", "pool_status_request", "v1alpha3"),
    KindInfo("", "Node", Node, "v1"),
    KindInfo("", "Namespace", Namespace, "v1"),
    KindInfo("", "Pod", Pod, "v1", namespaced=True),
    KindInfo("scheduling.k8s.io", "PodGroup", PodGroup, "v1beta1", ("v1alpha3",), namespaced=True),
    KindInfo("topology.node.k8s.io", "NodeResourceTopology", "topology", "v1alpha2"),
    KindInfo("kubelet.config.k8s.io", "KubeletConfiguration", "topology", "v1beta1"),
    KindInfo("policy", "PodDisruptionBudget", "policy", "v1", namespaced=True),
)

_BY_GROUP_KIND = {(info.group, info.kind): info for info in KINDS}
_BY_KIND = {info.kind: info for info in KINDS}  # each kind's name is unique across the groups drasat reads


@cache
def _model(module: str, name: str) -> type[TypedObject]:
    """``drasat.models.<module>.<name>``, imported on first use.

    Why lazily: a command imports the models of the kinds it reads, not of every kind drasat knows.
    ``solve`` on a cluster without NodeResourceTopology, KubeletConfiguration, PodDisruptionBudget or
    ResourcePoolStatusRequest objects never builds their ~25 pydantic classes (about 28 M instructions,
    2 % of its start, ``benchmarks/startup_bench.py``). The kinds nearly every input holds are imported
    with this table, inside the start-up's paused collector (:mod:`drasat.cli.startup`).
    """
    model: type[TypedObject] = getattr(importlib.import_module(f"{__package__}.{module}"), name)
    return model


def split_api_version(api_version: str) -> tuple[str, str]:
    """``resource.k8s.io/v1`` → (``resource.k8s.io``, ``v1``); ``v1`` → (``""``, ``v1``)."""
    group, _, version = api_version.rpartition("/")
    return group, version


def lookup(api_version: str, kind: str) -> KindInfo | None:
    """The kind drasat reads under this group, whatever the version; None if drasat does not use it."""
    group, _ = split_api_version(api_version)
    return _BY_GROUP_KIND.get((group, kind))


def group_of(kind: str) -> str | None:
    """The API group of a kind drasat reads (``""`` for the core group); None for a kind it does not read."""
    info = _BY_KIND.get(kind)
    return None if info is None else info.group


def kind_of(model: type) -> KindInfo | None:
    """The table entry whose model ``model`` is; None for any other class (one named as a kind too)."""
    info = _BY_KIND.get(model.__name__)
    return info if info is not None and info.model is model else None


def info_for(model: type[TypedObject]) -> KindInfo:
    """The table entry of a model class (every loaded object's class has one; KeyError for another class)."""
    info = kind_of(model)
    if info is None:
        raise KeyError(model)
    return info


def is_namespaced(obj: TypedObject) -> bool:
    """Whether objects of this kind live in a namespace (a Node or DeviceClass does not)."""
    info = kind_of(type(obj))
    return bool(info and info.namespaced)
