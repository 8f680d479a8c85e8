"""Reading a live cluster with the official client, against a loopback API server of recorded JSON.

The server answers the client's real list calls (paths, ``limit``/``continue`` paging,
status codes) with the bundled example cluster as the API server would send it, so the
real client and the real wire format are exercised — no mock of the client itself.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from drasat.models.errors import InputError
from drasat.models.live import read_cluster
from drasat.models.loader import load_paths

from .loopback_api import EXAMPLES, Server, serve

pytest.importorskip("kubernetes", reason="the kubernetes client (drasat[cluster]) is not installed")


@pytest.fixture
def api_server(tmp_path: Path) -> Iterator[tuple[Server, str]]:
    yield from serve(tmp_path)


def _names(objects: list[Any]) -> set[tuple[str, str]]:
    return {(type(o).__name__, f"{o.namespace or ''}/{o.name}") for o in objects}


def test_reads_every_kind_page_by_page_as_the_files_give_it(api_server: tuple[Server, str]) -> None:
    server, kubeconfig = api_server
    bundle = read_cluster(kubeconfig, "loopback", page_size=1)
    assert bundle.problems == []
    from_files = [loaded.obj for loaded in load_paths([str(EXAMPLES)]).objects]
    from_cluster = [loaded.obj for loaded in bundle.objects]
    assert _names(from_cluster) == _names(from_files)
    assert sorted(o.model_dump_json() for o in from_cluster) == sorted(o.model_dump_json() for o in from_files)
    slices = [r for r in server.requests if r.startswith("/apis/resource.k8s.io/v1/resourceslices")]
    published = len(server.collections["/apis/resource.k8s.io/v1/resourceslices"]["items"])
    assert published > 1 and len(slices) == published  # one slice per page
    assert sum("continue=" in r for r in slices) == published - 1
    pods = [r for r in server.requests if r.startswith("/api/v1/pods")]
    assert pods and "fieldSelector=status.phase" in pods[0]


def test_an_optional_kind_that_is_forbidden_is_a_notice(api_server: tuple[Server, str]) -> None:
    server, kubeconfig = api_server
    server.status["/apis/resource.k8s.io/v1/devicetaintrules"] = 403
    bundle = read_cluster(kubeconfig)
    assert bundle.problems == []
    assert any("cannot list devicetaintrules (403 Forbidden" in n and "forbidden" in n for n in bundle.notices)
    assert any("does not serve podgroups" in n for n in bundle.notices)  # neither version is served here


def test_a_required_kind_that_is_forbidden_stops_the_read(api_server: tuple[Server, str]) -> None:
    server, kubeconfig = api_server
    server.status["/apis/resource.k8s.io/v1/resourceslices"] = 403
    with pytest.raises(InputError, match="cannot list resourceslices \\(403 Forbidden"):
        read_cluster(kubeconfig)


def test_an_unusable_kubeconfig_or_context_is_an_input_error(api_server: tuple[Server, str], tmp_path: Path) -> None:
    _, kubeconfig = api_server
    with pytest.raises(InputError, match="context nope"):
        read_cluster(kubeconfig, "nope")
    with pytest.raises(InputError, match=f"cannot read kubeconfig {tmp_path / 'missing'}: no such file"):
        read_cluster(str(tmp_path / "missing"))


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("garbage: [\n", "not valid YAML at line 2, column 1"),
        ("- a\n- b\n", "a kubeconfig is a mapping .* not a list"),
        ("apiVersion: v1\nkind: Config\nclusters: 5\n", "clusters: must be a list of mappings"),
        ("apiVersion: v1\nkind: Config\nusers: [x]\n", "users\\[0\\]: must be a mapping \\(name, user\\)"),
        ("current-context: [1]\n", "current-context: must be a string"),
        ("clusters: [{name: c, cluster: oops}]\n", "clusters\\[0\\].cluster: must be a mapping"),
        ("contexts: [{context: {}}]\n", "contexts\\[0\\].name: must be a string"),
        ("\xff\xfe", "not valid YAML"),
    ],
)
def test_a_kubeconfig_that_is_not_one_names_the_file_and_what_is_wrong(tmp_path: Path, text: str, says: str) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_bytes(text.encode("latin-1"))
    with pytest.raises(InputError, match=f"error loading config file {kubeconfig}: {says}"):
        read_cluster(str(kubeconfig))


def test_a_bad_kubeconfig_in_a_kubeconfig_list_is_named(
    api_server: tuple[Server, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, kubeconfig = api_server
    bad = tmp_path / "bad"
    bad.write_text("- a\n")
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join([str(tmp_path / "missing"), kubeconfig, str(bad)]))
    with pytest.raises(InputError, match=f"error loading config file {bad}: a kubeconfig is a mapping"):
        read_cluster()


def test_a_cluster_that_does_not_answer_is_an_input_error(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "c",
                "clusters": [{"name": "c", "cluster": {"server": "http://127.0.0.1:9"}}],
                "users": [{"name": "u", "user": {}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
            }
        )
    )
    with pytest.raises(InputError, match="cannot list nodes: connection refused \\(did you specify the right host"):
        read_cluster(str(kubeconfig))


def test_compare_reads_the_cluster_like_the_files(api_server: tuple[Server, str]) -> None:
    from click.testing import CliRunner

    from drasat.cli.main import cli, load_all_commands

    _, kubeconfig = api_server
    load_all_commands()
    live = CliRunner().invoke(cli, ["compare", "--kubeconfig", kubeconfig, "--node", "gpu-node-1", "-o", "json"])
    files = CliRunner().invoke(cli, ["compare", "--node", "gpu-node-1", "-o", "json", str(EXAMPLES)])
    assert live.exit_code == files.exit_code == 0, live.stderr
    assert json.loads(live.stdout)["cpSat"]["devices"] == json.loads(files.stdout)["cpSat"]["devices"]
    assert "does not serve podgroups" in live.stderr  # notices go to stderr, never stdout


def test_each_page_is_built_before_the_next_is_asked_for(
    api_server: tuple[Server, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Live reads stream: a page's objects are built (and its items let go) before the next page is
    requested, so a fleet is never held whole as JSON; every object of every page still arrives."""
    from drasat.models import loader

    server, kubeconfig = api_server
    events: list[str] = []
    real_add = loader.add_data

    def building(bundle: Any, data: Any, name: str, index: int = 0, **kw: Any) -> None:
        events.append(f"built {name.rsplit(': ', 1)[-1]} page {index}")
        real_add(bundle, data, name, index, **kw)
        assert all(item is None for item in data["items"])  # the page's raw items were let go once built

    monkeypatch.setattr(loader, "add_data", building)
    requested = server.requests
    server.requests = _Recorder(requested, events)
    bundle = read_cluster(kubeconfig, "loopback", page_size=1)
    published = server.collections["/apis/resource.k8s.io/v1/resourceslices"]["items"]
    slices = [e for e in events if "resourceslices" in e]
    path = "GET /apis/resource.k8s.io/v1/resourceslices"
    assert len(published) > 1
    assert slices == [e for i in range(len(published)) for e in (path, f"built resourceslices page {i}")]
    from_files = load_paths([str(EXAMPLES)]).objects
    assert sorted(o.obj.model_dump_json() for o in bundle.objects) == sorted(
        o.obj.model_dump_json() for o in from_files
    )


class _Recorder(list):  # type: ignore[type-arg]
    """The server's request log, also written (path only) into one shared log of events."""

    def __init__(self, requests: list[str], events: list[str]) -> None:
        super().__init__(requests)
        self.events = events

    def append(self, path: str) -> None:
        super().append(path)
        self.events.append(f"GET {path.split('?', 1)[0]}")


def test_only_a_refused_connection_gets_the_host_or_port_hint() -> None:
    """A certificate refused is said in the system's words, not told to check the host or port."""
    import ssl

    from drasat.models.live import _short

    class Wrapped(Exception):  # as urllib3's MaxRetryError holds its reason
        reason: BaseException

    refused, tls = Wrapped("Max retries exceeded"), Wrapped("Max retries exceeded")
    refused.reason = ConnectionRefusedError(111, "Connection refused")
    tls.reason = ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed")
    assert _short(refused) == "connection refused (did you specify the right host or port?)"
    assert _short(tls) == "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed"
