"""Workloads as ``drasat fit`` reads them: the pod templates a controller would make pods from, and how many.

Kubernetes has no one "workload" kind: a Deployment, ReplicaSet or StatefulSet (``spec.template``), a Job
(``spec.template``), a JobSet (``spec.replicatedJobs[].template.spec.template``, ``replicas`` Jobs of
``parallelism`` pods each), a LeaderWorkerSet (a group of ``spec.leaderWorkerTemplate.size`` pods: one
from ``leaderTemplate`` — or ``workerTemplate`` without one — and the rest from ``workerTemplate``) and a
Kueue Workload (``spec.podSets[]``, each a ``template`` and a ``count``) all say "pods like this, this
many". A :class:`Workload` is that: its pod sets, each a Pod built from the template (what the
controller would create, before any name is made) and the pods of it in one copy of the workload.

One copy of a single-template kind (Pod, Deployment, ReplicaSet, StatefulSet, Job) is one pod: ``fit``
answers how many replicas fit. One copy of a JobSet, a LeaderWorkerSet group or a Kueue Workload is all
its pod sets at once (Kueue admits a workload whole): ``fit`` answers how many whole copies fit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from .core import Pod
from .errors import InputError, Location
from .loader import display_name
from .pydantic_problems import problems_from

MAX_COUNT = 100_000  # pods of one pod set in one copy: more is a typo, not a workload


@dataclass(frozen=True)
class PodSet:
    """One template of the workload: the pod it stands for, and how many such pods one copy holds."""

    name: str
    count: int
    pod: Pod
    where: Location  # the template in the input, for messages


@dataclass(frozen=True)
class Workload:
    """A workload's pod sets: one copy of it is every pod set with its count."""

    kind: str
    name: str
    namespace: str
    pod_sets: list[PodSet]
    where: Location

    @property
    def label(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}"

    @property
    def pods_per_copy(self) -> int:
        return sum(s.count for s in self.pod_sets)


SINGLE_TEMPLATE = {"Deployment", "ReplicaSet", "StatefulSet", "Job"}
KINDS = ("Pod", *sorted(SINGLE_TEMPLATE), "JobSet", "LeaderWorkerSet", "Workload")


def workload_from_data(data: Any, where: Location) -> Workload:
    """The workload in one parsed document; InputError naming the file, object and field where it is not one."""
    if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
        raise InputError("is not a Kubernetes object: expected a mapping with apiVersion and kind", where)
    kind = data["kind"]
    meta: dict[str, Any] = data["metadata"] if isinstance(data.get("metadata"), dict) else {}
    name, namespace = str(meta.get("name") or ""), str(meta.get("namespace") or "default")
    where = Location(where.file, where.document, kind, display_name(data) or "?")  # as the loader names it
    if not name:
        raise InputError("a workload needs metadata.name", where.child("metadata.name"))
    spec = data.get("spec")
    if not isinstance(spec, dict):
        raise InputError("has no spec: a workload needs a pod template", where.child("spec"))
    if kind == "Pod":
        sets = [_pod_set(name, 1, {"metadata": meta, "spec": spec}, where, "", namespace)]
    elif kind in SINGLE_TEMPLATE:
        sets = [_pod_set(name, 1, _mapping(spec, "template", where.child("spec")), where, "spec.template", namespace)]
    elif kind == "JobSet":
        sets = _job_set(spec, where, namespace)
    elif kind == "LeaderWorkerSet":
        sets = _leader_worker_set(spec, where, namespace)
    elif kind == "Workload":
        sets = _kueue_pod_sets(spec, where, namespace)
    else:
        raise InputError(f"drasat fit reads a workload of kind {', '.join(KINDS)}, not {kind}", where.child("kind"))
    return Workload(kind, name, namespace, sets, where)


def _mapping(parent: dict[str, Any], key: str, where: Location) -> dict[str, Any]:
    value = parent.get(key)
    if not isinstance(value, dict):
        raise InputError("is missing: a workload needs a pod template here", where.child(key))
    return value


def _count(parent: dict[str, Any], key: str, where: Location, default: int | None = None, least: int = 1) -> int:
    """A count field: an integer from ``least`` to MAX_COUNT (``default`` where absent)."""
    value = parent.get(key, default)
    if value is None:
        raise InputError("is missing: each pod set needs a count", where.child(key))
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= MAX_COUNT:
        raise InputError(f"Invalid value: {value!r}: must be an integer from {least} to {MAX_COUNT}", where.child(key))
    return value


def _pod_set(name: str, count: int, template: dict[str, Any], where: Location, path: str, namespace: str) -> PodSet:
    """The pod a template stands for, read as drasat reads a Pod (its problems at the template's fields)."""
    at = where.child(path) if path else where
    spec = template.get("spec")
    if not isinstance(spec, dict):
        raise InputError("has no pod spec: a pod template needs spec.containers", at.child("spec"))
    meta = dict(template.get("metadata") or {}) if isinstance(template.get("metadata"), dict) else {}
    meta.update(name=meta.get("name") or name, namespace=namespace)
    body = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {**spec, "nodeName": None}}
    try:
        pod = Pod.model_validate(body, by_alias=True, by_name=False)
    except ValidationError as exc:
        raise InputError(problems_from(exc, Pod, at)) from None
    from .validation.pod_resources import pod_requirement_problems

    problems = pod_requirement_problems(pod, at)  # as the cluster's pods are checked when read
    if problems:
        raise InputError(problems)
    if spec.get("nodeName"):
        raise InputError("a template pinned to a node is not a workload to fit", at.child("spec.nodeName"))
    return PodSet(name, count, pod, at)


def _job_set(spec: dict[str, Any], where: Location, namespace: str) -> list[PodSet]:
    jobs = spec.get("replicatedJobs")
    if not isinstance(jobs, list) or not jobs:
        raise InputError("is missing or empty: a JobSet needs replicatedJobs", where.child("spec.replicatedJobs"))
    out = []
    for i, job in enumerate(jobs):
        at = where.child(f"spec.replicatedJobs[{i}]")
        if not isinstance(job, dict):
            raise InputError("must be a mapping", at)
        template = _mapping(job, "template", at)
        job_spec = _mapping(template, "spec", at.child("template"))
        pods = _count(job, "replicas", at, 1) * _count(job_spec, "parallelism", at.child("template.spec"), 1)
        if pods > MAX_COUNT:
            raise InputError(f"Invalid value: {pods} pods: at most {MAX_COUNT} in one replicated job", at)
        path = f"spec.replicatedJobs[{i}].template.spec.template"
        out.append(
            _pod_set(
                str(job.get("name") or f"job{i}"), pods, _mapping(job_spec, "template", at), where, path, namespace
            )
        )
    return out


def _leader_worker_set(spec: dict[str, Any], where: Location, namespace: str) -> list[PodSet]:
    at = where.child("spec.leaderWorkerTemplate")
    lwt = _mapping(spec, "leaderWorkerTemplate", where.child("spec"))
    size = _count(lwt, "size", at, 1)
    worker = _mapping(lwt, "workerTemplate", at)
    sets = []
    if isinstance(lwt.get("leaderTemplate"), dict):
        sets.append(
            _pod_set("leader", 1, lwt["leaderTemplate"], where, "spec.leaderWorkerTemplate.leaderTemplate", namespace)
        )
        if size > 1:
            sets.append(
                _pod_set("worker", size - 1, worker, where, "spec.leaderWorkerTemplate.workerTemplate", namespace)
            )
    else:
        sets.append(_pod_set("worker", size, worker, where, "spec.leaderWorkerTemplate.workerTemplate", namespace))
    return sets


def _kueue_pod_sets(spec: dict[str, Any], where: Location, namespace: str) -> list[PodSet]:
    sets = spec.get("podSets")
    if not isinstance(sets, list) or not sets:
        raise InputError("is missing or empty: a Kueue Workload needs podSets", where.child("spec.podSets"))
    out = []
    for i, pod_set in enumerate(sets):
        at = where.child(f"spec.podSets[{i}]")
        if not isinstance(pod_set, dict):
            raise InputError("must be a mapping", at)
        count = _count(pod_set, "count", at)
        template = _mapping(pod_set, "template", at)
        out.append(
            _pod_set(
                str(pod_set.get("name") or f"podset{i}"),
                count,
                template,
                where,
                f"spec.podSets[{i}].template",
                namespace,
            )
        )
    return out


def workload_in_text(text: str, name: str) -> Workload:
    """The one workload among a file's documents (other kinds beside it are ignored: a Deployment's file often
    holds its Service too); InputError when there is none, or several."""
    from .yaml_io import parse_documents

    found = []
    for document in parse_documents(text, name):
        if document.problem is not None:
            raise InputError([document.problem])
        data = document.data
        if isinstance(data, dict) and data.get("kind") in KINDS:
            found.append(workload_from_data(data, Location(name, document.index)))
    if len(found) != 1:
        what = "no workload" if not found else f"{len(found)} workloads ({', '.join(w.label for w in found)})"
        raise InputError(f"holds {what}: give one file with one workload of kind {', '.join(KINDS)}", Location(name))
    return found[0]


def read_workload(path: str) -> Workload:
    """The workload in the file at ``path`` (read with the same size limit and decoding as every input)."""
    from .input_text import read_file

    text, problem = read_file(path)
    if problem is not None:
        raise InputError([problem])
    assert text is not None
    return workload_in_text(text, path)
