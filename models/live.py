"""Reading a live cluster, read-only, with the official ``kubernetes`` client (``drasat[cluster]``).

drasat asks the API server for the same objects a user would pass as files —
Nodes, Namespaces, not-yet-finished Pods, DeviceClasses, ResourceSlices,
ResourceClaims (allocated ones are the in-use state), ResourceClaimTemplates,
DeviceTaintRules, PodGroups — page by page (``limit``/``continue``), and reads each
page's JSON exactly as the API server sent it (``_preload_content=False``), through
the same loader as files, building a page's objects before the next page is asked for. The client's own model classes are not used: they refuse
inputs the API server accepts (a bare number as a quantity, for one).

What cannot be listed is said, never passed over silently: a kind the command cannot
do without (slices, classes and claims for an allocation; pods for ``schedule``) stops
the read with an :class:`InputError`; the others become a notice and the answer is
computed without them. resource.k8s.io is read at the newest version the server
serves (v1, else v1beta2, else v1beta1) and converted to v1 as files of those
versions are.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .bundle import Bundle
from .errors import InputError, InputProblem, Location

PAGE_SIZE = 500
REQUEST_TIMEOUT = 30.0  # seconds per list call: a cluster that does not answer is reported, not waited for
DEFAULT_KUBECONFIG = "~/.kube/config"


class Listed(StrEnum):
    """A kind drasat lists, named by its plural as kubectl names it (``kubectl get resourceslices``)."""

    NODES = "nodes"
    NAMESPACES = "namespaces"
    PODS = "pods"
    DEVICE_CLASSES = "deviceclasses"
    RESOURCE_SLICES = "resourceslices"
    RESOURCE_CLAIMS = "resourceclaims"
    RESOURCE_CLAIM_TEMPLATES = "resourceclaimtemplates"
    DEVICE_TAINT_RULES = "devicetaintrules"
    POD_GROUPS = "podgroups"


ALLOCATION_NEEDS = frozenset({Listed.DEVICE_CLASSES, Listed.RESOURCE_SLICES, Listed.RESOURCE_CLAIMS})
"""What any allocation cannot do without: the default of :func:`read_cluster`."""


@dataclass(frozen=True)
class Source:
    """One kind to list: the client API class and method, in the order of preference of versions."""

    what: Listed
    calls: tuple[tuple[str, str], ...]  # (API class, list method); later ones if earlier are not served
    params: tuple[tuple[str, str], ...] = ()  # extra query parameters (field selectors)
    gated: bool = False  # behind a feature gate: a cluster that does not serve it holds none, needed or not


RESOURCE_VERSIONS = ("ResourceV1Api", "ResourceV1beta2Api", "ResourceV1beta1Api")
"""resource.k8s.io, newest first: a cluster serving only an older version is read at it, and its objects are
converted to v1 as an older version's files are."""


def _resource(what: Listed, method: str) -> Source:
    return Source(what, tuple((api, method) for api in RESOURCE_VERSIONS))


SOURCES = (
    Source(Listed.NODES, (("CoreV1Api", "list_node"),)),
    Source(Listed.NAMESPACES, (("CoreV1Api", "list_namespace"),)),
    Source(
        Listed.PODS,
        (("CoreV1Api", "list_pod_for_all_namespaces"),),
        params=(("field_selector", "status.phase!=Succeeded,status.phase!=Failed"),),
    ),
    _resource(Listed.DEVICE_CLASSES, "list_device_class"),
    _resource(Listed.RESOURCE_SLICES, "list_resource_slice"),
    _resource(Listed.RESOURCE_CLAIMS, "list_resource_claim_for_all_namespaces"),
    _resource(Listed.RESOURCE_CLAIM_TEMPLATES, "list_resource_claim_template_for_all_namespaces"),
    Source(
        Listed.DEVICE_TAINT_RULES,
        (
            ("ResourceV1Api", "list_device_taint_rule"),
            ("ResourceV1beta2Api", "list_device_taint_rule"),
            ("ResourceV1alpha3Api", "list_device_taint_rule"),
        ),
        gated=True,
    ),
    Source(
        Listed.POD_GROUPS,
        (
            ("SchedulingV1beta1Api", "list_pod_group_for_all_namespaces"),
            ("SchedulingV1alpha3Api", "list_pod_group_for_all_namespaces"),
        ),
        gated=True,
    ),
)


def read_cluster(
    kubeconfig: str | None = None,
    context: str | None = None,
    *,
    page_size: int = PAGE_SIZE,
    progress: Callable[[int, int, str], None] | None = None,
    needs: Collection[Listed] = ALLOCATION_NEEDS,
) -> Bundle:
    """Every object drasat uses from the cluster that ``kubeconfig``/``context`` point at.

    Without ``kubeconfig``, the kubeconfig kubectl would use: ``$KUBECONFIG`` (a list of files, merged as
    kubectl merges them), else ``~/.kube/config``; without ``context``, its current context.
    Raises :class:`InputError` when the client is not installed, the configuration is unusable, the
    cluster cannot be reached, or a kind of ``needs`` (what the asking command cannot do without: an
    answer without it would be wrong, not smaller) cannot be listed — forbidden to these credentials, or
    not served at any version (a kind behind a feature gate excepted: where it is not served, none exist).
    Any other kind that cannot be listed is a notice.
    ``progress(done, total, kind)`` is called before each kind is listed (the progress bar).
    """
    client = _api_client(kubeconfig, context)
    bundle = Bundle()
    where = f"cluster {client.configuration.host}"
    for done, source in enumerate(SOURCES):
        if progress is not None:
            progress(done, len(SOURCES), source.what)
        _read_source(client, source, where, page_size, bundle, source.what in needs)
    return bundle


def default_kubeconfig() -> str | None:
    """The kubeconfig kubectl reads when given none: ``$KUBECONFIG`` if set, else ``~/.kube/config`` if it
    exists; None when neither is there (so that "nothing to read" can say so)."""
    listed = os.environ.get("KUBECONFIG", "")
    if any(part for part in listed.split(os.pathsep)):
        return listed
    path = os.path.expanduser(DEFAULT_KUBECONFIG)
    return path if os.path.exists(path) else None


def _api_client(kubeconfig: str | None, context: str | None) -> Any:
    if kubeconfig is not None and not os.path.exists(os.path.expanduser(kubeconfig)):
        raise InputError(f"cannot read kubeconfig {kubeconfig}: no such file")  # kubectl: stat ...: no such file
    kubeconfig = kubeconfig or default_kubeconfig() or os.path.expanduser(DEFAULT_KUBECONFIG)
    try:
        from kubernetes import config
        from kubernetes.config.config_exception import ConfigException
    except ImportError:
        raise InputError("reading a live cluster needs the kubernetes client: pip install 'drasat[cluster]'") from None
    for path in kubeconfig.split(os.pathsep):
        _check_kubeconfig(path)
    try:
        return config.new_client_from_config(config_file=kubeconfig, context=context)
    except (ConfigException, OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
        named = kubeconfig or "the default kubeconfig (~/.kube/config or $KUBECONFIG)"
        raise InputError(f"cannot use {named}{f' (context {context})' if context else ''}: {exc}") from None


_KUBECONFIG_LISTS = {"clusters": "cluster", "contexts": "context", "users": "user"}
"""A kubeconfig's lists, each entry's ``name`` and the mapping under its singular key (clientcmd's NamedCluster,
NamedContext, NamedAuthInfo)."""


def _check_kubeconfig(path: str) -> None:
    """Refuse a kubeconfig file the client would crash on or misread (not YAML, not a mapping, an entry of the
    wrong shape) with the file, line or field, as kubectl's "error loading config file" does; a missing file is
    left to the client, which skips it in a ``$KUBECONFIG`` list as kubectl does."""
    import yaml

    try:
        with open(os.path.expanduser(path), encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
    except OSError:
        return
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"error loading config file {path}: not valid YAML{where}: {what}") from None
    if data is None:
        return  # the client says the file is empty
    problem = _kubeconfig_shape(data)
    if problem:
        raise InputError(f"error loading config file {path}: {problem}")


def _kubeconfig_shape(data: object) -> str:
    """What is wrong with a kubeconfig's shape, or "" (its values are the client's to judge)."""
    if not isinstance(data, dict):
        kind = type(data).__name__
        return f"a kubeconfig is a mapping (apiVersion, kind: Config, clusters, contexts, users), not a {kind}"
    if not isinstance(data.get("current-context", ""), str):
        return "current-context: must be a string"
    for field, entry in _KUBECONFIG_LISTS.items():
        value = data.get(field)
        if value is None:
            continue
        if not isinstance(value, list):
            return f"{field}: must be a list of mappings"
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                return f"{field}[{i}]: must be a mapping (name, {entry})"
            if not isinstance(item.get("name"), str):
                return f"{field}[{i}].name: must be a string"
            if not isinstance(item.get(entry, {}), dict):
                return f"{field}[{i}].{entry}: must be a mapping"
    return ""


def _read_source(client: Any, source: Source, where: str, page_size: int, bundle: Bundle, needed: bool) -> None:
    """Add every page of one kind; fall back to older API versions the cluster serves instead."""
    from kubernetes import client as k8s

    from .loader import add_data

    for version, (api_class, method) in enumerate(source.calls):
        lister = getattr(getattr(k8s, api_class)(client), method)
        read = Bundle()  # this kind's objects, kept only once every page has come (a refusal adds none)
        try:
            for index, page in enumerate(_pages(lister, dict(source.params), page_size)):
                add_data(read, page, f"{where}: {source.what}", index, owned=True)  # each item let go once built
        except k8s.ApiException as exc:
            if exc.status == 404 and version + 1 < len(source.calls):
                continue  # this version is not served: try the next one
            _refused(source, where, exc, bundle, needed)
            return
        except Exception as exc:  # noqa: BLE001  (urllib3 connection errors and the like)
            raise InputError(f"{where}: cannot list {source.what}: {_short(exc)}") from None
        bundle.extend(read)
        return


def _pages(lister: Any, params: dict[str, str], page_size: int) -> Any:
    """The list responses, one per page, as the JSON the API server sent: each page is asked for once the one
    before it is built, so a fleet's 14,000 objects are never all held as JSON (nor as the client's bytes)."""
    token = None
    while True:
        extra: dict[str, str] = {"_continue": token} if token else {}
        response = lister(limit=page_size, _preload_content=False, _request_timeout=REQUEST_TIMEOUT, **params, **extra)
        page = json.loads(response.data)
        yield page
        token = (page.get("metadata") or {}).get("continue")
        if not token:
            return


def _refused(source: Source, where: str, exc: Any, bundle: Bundle, needed: bool) -> None:
    reason = f"{exc.status} {exc.reason}".strip()
    detail = _api_message(exc)
    text = f"cannot list {source.what} ({reason}{': ' + detail if detail else ''})"
    if exc.status == 404:
        text = f"the cluster does not serve {source.what} (tried {_versions(source)})"
    if needed and not (exc.status == 404 and source.gated):
        raise InputError([InputProblem(Location(where), f"{text}, which this command needs")])
    if exc.status == 404:
        bundle.notices.append(f"{where}: {text}; read without them")
    else:
        bundle.notices.append(f"{where}: {text}; the answer is computed without them")


def _versions(source: Source) -> str:
    """The API versions tried, as kubectl names them: ``ResourceV1beta2Api`` is v1beta2."""
    names = [re.sub(r"^(Core|Resource|Scheduling)|Api$", "", api).lower() for api, _ in source.calls]
    return ", ".join(names)


def _api_message(exc: Any) -> str:
    try:
        return str(json.loads(exc.body).get("message", ""))
    except (TypeError, ValueError, AttributeError):
        return ""


def _short(exc: Exception) -> str:
    """Why a call failed, in a line: the system's reason where the client wraps one (urllib3 nests a refused
    connection three exceptions deep, each repeating the URL); a refused connection as kubectl says it."""
    reason = _system_reason(exc)
    if isinstance(reason, ConnectionRefusedError):  # kubectl's words, and its hint
        return "connection refused (did you specify the right host or port?)"
    if reason is not None:  # a name not resolved, a certificate refused, a time-out: the system's reason
        return str(reason.strerror or reason)[:300]
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:300]


def _system_reason(exc: BaseException | None) -> OSError | None:
    """The first OSError with a system reason among ``exc``, the errors it wraps and their causes."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.strerror:
            return exc
        reason = getattr(exc, "reason", None)  # urllib3's errors hold theirs there
        exc = reason if isinstance(reason, BaseException) else exc.__cause__ or exc.__context__
    return None
