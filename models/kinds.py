"""Which Kubernetes kinds drasat reads, in which API versions, and with which model.

One table answers three questions for the loader: is this document something
drasat uses (otherwise it is skipped with a notice), which model parses it, and
whether its API version must first be converted to the version that model
describes. Keeping that in one place means adding a kind is one line.
"""

from __future__ import annotations

from dataclasses import dataclass

from .core import Namespace, Node, Pod, PodGroup
from .meta import TypedObject
from .policy import PodDisruptionBudget
from .pool_status_request import ResourcePoolStatusRequest
from .resource import DeviceClass, DeviceTaintRule, ResourceClaim, ResourceClaimTemplate, ResourceSlice
from .topology import KubeletConfiguration, NodeResourceTopology

RESOURCE_GROUP = "resource.k8s.io"


@dataclass(frozen=True)
class KindInfo:
    """One kind: its group, its model, the version the model describes, and older readable versions."""

    group: str
    kind: str
    model: type[TypedObject]
    version: str
    older: tuple[str, ...] = ()
    namespaced: bool = False

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
    KindInfo(RESOURCE_GROUP, "ResourcePoolStatusRequest", ResourcePoolStatusRequest, "v1alpha3"),
    KindInfo("", "Node", Node, "v1"),
    KindInfo("", "Namespace", Namespace, "v1"),
    KindInfo("", "Pod", Pod, "v1", namespaced=True),
    KindInfo("scheduling.k8s.io", "PodGroup", PodGroup, "v1beta1", ("v1alpha3",), namespaced=True),
    KindInfo("topology.node.k8s.io", "NodeResourceTopology", NodeResourceTopology, "v1alpha2"),
    KindInfo("kubelet.config.k8s.io", "KubeletConfiguration", KubeletConfiguration, "v1beta1"),
    KindInfo("policy", "PodDisruptionBudget", PodDisruptionBudget, "v1", namespaced=True),
)

_BY_GROUP_KIND = {(info.group, info.kind): info for info in KINDS}
_BY_MODEL = {info.model: info for info in KINDS}


def split_api_version(api_version: str) -> tuple[str, str]:
    """``resource.k8s.io/v1`` → (``resource.k8s.io``, ``v1``); ``v1`` → (``""``, ``v1``)."""
    group, _, version = api_version.rpartition("/")
    return group, version


def lookup(api_version: str, kind: str) -> KindInfo | None:
    """The kind drasat reads under this group, whatever the version; None if drasat does not use it."""
    group, _ = split_api_version(api_version)
    return _BY_GROUP_KIND.get((group, kind))


def info_for(model: type[TypedObject]) -> KindInfo:
    """The table entry of a model class (every loaded object's class has one)."""
    return _BY_MODEL[model]


def is_namespaced(obj: TypedObject) -> bool:
    """Whether objects of this kind live in a namespace (a Node or DeviceClass does not)."""
    info = _BY_MODEL.get(type(obj))
    return bool(info and info.namespaced)
