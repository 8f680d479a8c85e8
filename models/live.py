"""Reading a live cluster, read-only, with the official ``kubernetes`` client (``drasat[cluster]``).

drasat asks the API server for the same objects a user would pass as files —
Nodes, Namespaces, not-yet-finished Pods, DeviceClasses, ResourceSlices,
ResourceClaims (allocated ones are the in-use state), ResourceClaimTemplates,
DeviceTaintRules, PodGroups — page by page (``limit``/``continue``), and reads each
page's JSON exactly as the API server sent it (``_preload_content=False``), through
the same loader as files. The client's own model classes are not used: they refuse
inputs the API server accepts (a bare number as a quantity, for one).

What cannot be listed is said, never passed over silently: a kind drasat cannot do
without (slices, classes, claims) stops the read with an :class:`InputError`; the
others become a notice and the answer is computed without them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .bundle import Bundle
from .errors import InputError, InputProblem, Location
from .loader import add_data

PAGE_SIZE = 500
REQUEST_TIMEOUT = 30.0  # seconds per list call: a cluster that does not answer is reported, not waited for


@dataclass(frozen=True)
class Source:
    """One kind to list: the client API class and method, in the order of preference of versions."""

    what: str  # plural, as kubectl names it
    calls: tuple[tuple[str, str], ...]  # (API class, list method); later ones if earlier are not served
    required: bool = False
    params: tuple[tuple[str, str], ...] = ()  # extra query parameters (field selectors)


SOURCES = (
    Source("nodes", (("CoreV1Api", "list_node"),)),
    Source("namespaces", (("CoreV1Api", "list_namespace"),)),
    Source(
        "pods",
        (("CoreV1Api", "list_pod_for_all_namespaces"),),
        params=(("field_selector", "status.phase!=Succeeded,status.phase!=Failed"),),
    ),
    Source("deviceclasses", (("ResourceV1Api", "list_device_class"),), required=True),
    Source("resourceslices", (("ResourceV1Api", "list_resource_slice"),), required=True),
    Source("resourceclaims", (("ResourceV1Api", "list_resource_claim_for_all_namespaces"),), required=True),
    Source("resourceclaimtemplates", (("ResourceV1Api", "list_resource_claim_template_for_all_namespaces"),)),
    Source(
        "devicetaintrules",
        (
            ("ResourceV1Api", "list_device_taint_rule"),
            ("ResourceV1beta2Api", "list_device_taint_rule"),
            ("ResourceV1alpha3Api", "list_device_taint_rule"),
        ),
    ),
    Source(
        "podgroups",
        (
            ("SchedulingV1beta1Api", "list_pod_group_for_all_namespaces"),
            ("SchedulingV1alpha3Api", "list_pod_group_for_all_namespaces"),
        ),
    ),
)


def read_cluster(
    kubeconfig: str | None = None,
    context: str | None = None,
    *,
    page_size: int = PAGE_SIZE,
    progress: Callable[[int, int, str], None] | None = None,
) -> Bundle:
    """Every object drasat uses from the cluster that ``kubeconfig``/``context`` point at.

    Raises :class:`InputError` when the client is not installed, the configuration is
    unusable, the cluster cannot be reached, or a required kind cannot be listed.
    ``progress(done, total, kind)`` is called before each kind is listed (the progress bar).
    """
    client = _api_client(kubeconfig, context)
    bundle = Bundle()
    where = f"cluster {client.configuration.host}"
    for done, source in enumerate(SOURCES):
        if progress is not None:
            progress(done, len(SOURCES), source.what)
        _read_source(client, source, where, page_size, bundle)
    return bundle


def _api_client(kubeconfig: str | None, context: str | None) -> Any:
    try:
        from kubernetes import config
        from kubernetes.config.config_exception import ConfigException
    except ImportError:
        raise InputError("reading a live cluster needs the kubernetes client: pip install 'drasat[cluster]'") from None
    try:
        return config.new_client_from_config(config_file=kubeconfig, context=context)
    except (ConfigException, OSError, ValueError, TypeError, KeyError) as exc:
        named = kubeconfig or "the default kubeconfig (~/.kube/config or $KUBECONFIG)"
        raise InputError(f"cannot use {named}{f' (context {context})' if context else ''}: {exc}") from None


def _read_source(client: Any, source: Source, where: str, page_size: int, bundle: Bundle) -> None:
    """Add every page of one kind; fall back to older API versions the cluster serves instead."""
    from kubernetes import client as k8s

    for version, (api_class, method) in enumerate(source.calls):
        lister = getattr(getattr(k8s, api_class)(client), method)
        try:
            pages = list(_pages(lister, dict(source.params), page_size))
        except k8s.ApiException as exc:
            if exc.status == 404 and version + 1 < len(source.calls):
                continue  # this version is not served: try the next one
            _refused(source, where, exc, bundle)
            return
        except Exception as exc:  # noqa: BLE001  (urllib3 connection errors and the like)
            raise InputError(f"{where}: cannot list {source.what}: {_short(exc)}") from None
        for index, page in enumerate(pages):
            add_data(bundle, page, f"{where}: {source.what}", index)
        return


def _pages(lister: Any, params: dict[str, str], page_size: int) -> Any:
    """The list responses, one per page, as the JSON the API server sent."""
    token = None
    while True:
        extra: dict[str, str] = {"_continue": token} if token else {}
        response = lister(limit=page_size, _preload_content=False, _request_timeout=REQUEST_TIMEOUT, **params, **extra)
        page = json.loads(response.data)
        yield page
        token = (page.get("metadata") or {}).get("continue")
        if not token:
            return


def _refused(source: Source, where: str, exc: Any, bundle: Bundle) -> None:
    reason = f"{exc.status} {exc.reason}".strip()
    detail = _api_message(exc)
    text = f"cannot list {source.what} ({reason}{': ' + detail if detail else ''})"
    if source.required:
        raise InputError([InputProblem(Location(where), text)])
    if exc.status == 404:
        bundle.notices.append(f"{where}: the cluster does not serve {source.what}; read without them")
    else:
        bundle.notices.append(f"{where}: {text}; the answer is computed without them")


def _api_message(exc: Any) -> str:
    try:
        return str(json.loads(exc.body).get("message", ""))
    except (TypeError, ValueError, AttributeError):
        return ""


def _short(exc: Exception) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:300]
