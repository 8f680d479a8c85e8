"""A loopback API server of recorded JSON, for the tests that read a live cluster through the real client.

The server answers the client's real list calls (paths, ``limit``/``continue`` paging, status codes) with
objects as the API server would send them (list items without kind), so the real client and the real wire
format are exercised — no mock of the client itself. ``status`` makes a path answer with an error (403, 404);
:func:`served_as` moves resource.k8s.io to an older version, as a cluster that serves only that one.
"""

from __future__ import annotations

import copy
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from drasat.models.kinds import info_for
from drasat.models.loader import load_paths

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
RESOURCE = "/apis/resource.k8s.io/"


def collections(paths: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """API path -> list response, built from the example files (items without kind, as the server sends)."""
    out: dict[str, dict[str, Any]] = {}
    for loaded in load_paths(paths or [str(EXAMPLES)]).objects:
        body = loaded.obj.to_api()
        info = info_for(type(loaded.obj))
        prefix = f"/apis/{info.group}/{info.version}" if info.group else f"/api/{info.version}"
        plural = info.kind.lower() + ("es" if info.kind.endswith("s") else "s")
        path = f"{prefix}/{plural}"
        listing = out.setdefault(
            path, {"kind": f"{info.kind}List", "apiVersion": body["apiVersion"], "metadata": {}, "items": []}
        )
        listing["items"].append({k: v for k, v in body.items() if k not in ("apiVersion", "kind")})
    return out


class Server(ThreadingHTTPServer):
    collections: dict[str, dict[str, Any]]
    status: dict[str, int]
    requests: list[str]


class _Handler(BaseHTTPRequestHandler):
    server: Server

    def do_GET(self) -> None:  # noqa: N802  (http.server's naming)
        url = urlparse(self.path)
        self.server.requests.append(self.path)
        query = parse_qs(url.query)
        status = self.server.status.get(url.path)
        if status is None and url.path in self.server.collections:
            self._send(200, self._page(self.server.collections[url.path], query))
        else:
            code = status or 404
            self._send(
                code,
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "status": "Failure",
                    "code": code,
                    "reason": "Forbidden" if code == 403 else "NotFound",
                    "message": f"{url.path} is {'forbidden' if code == 403 else 'not found'}",
                },
            )

    @staticmethod
    def _page(listing: dict[str, Any], query: dict[str, list[str]]) -> dict[str, Any]:
        limit = int(query.get("limit", ["0"])[0]) or len(listing["items"])
        start = int(query.get("continue", ["0"])[0])
        items = listing["items"][start : start + limit]
        more = start + limit < len(listing["items"])
        return {**listing, "metadata": {"continue": str(start + limit)} if more else {}, "items": items}

    def _send(self, code: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


def serve(tmp_path: Path) -> Iterator[tuple[Server, str]]:
    server = Server(("127.0.0.1", 0), _Handler)
    server.collections, server.status, server.requests = collections(), {}, []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "loopback",
                "clusters": [{"name": "loopback", "cluster": {"server": f"http://127.0.0.1:{server.server_port}"}}],
                "users": [{"name": "reader", "user": {"token": "t"}}],
                "contexts": [{"name": "loopback", "context": {"cluster": "loopback", "user": "reader"}}],
            }
        )
    )
    try:
        yield server, str(kubeconfig)
    finally:
        server.shutdown()
        server.server_close()


def served_as(server: Server, version: str) -> None:
    """resource.k8s.io served at ``version`` only (v1beta2, or v1beta1 with its older shape of requests and
    devices); v1 answers 404 as a cluster that does not serve it."""
    for path in [p for p in server.collections if p.startswith(RESOURCE + "v1/")]:
        listing = copy.deepcopy(server.collections.pop(path))
        listing["apiVersion"] = f"resource.k8s.io/{version}"
        if version == "v1beta1":
            for item in listing["items"]:
                _to_v1beta1(listing["kind"], item)
        server.collections[path.replace(RESOURCE + "v1/", f"{RESOURCE}{version}/")] = listing


def _to_v1beta1(kind: str, item: dict[str, Any]) -> None:
    """v1's shape back to v1beta1's: requests' ``exactly`` flattened, device fields under ``basic``."""
    if kind == "ResourceSliceList":
        item["spec"]["devices"] = [
            {"name": d["name"], "basic": {k: v for k, v in d.items() if k != "name"}}
            for d in item["spec"].get("devices", [])
        ]
    if kind not in ("ResourceClaimList", "ResourceClaimTemplateList"):
        return
    spec = item["spec"]["spec"] if kind == "ResourceClaimTemplateList" else item["spec"]
    devices = spec.get("devices", {})
    for request in devices.get("requests", []):
        request.update(request.pop("exactly", {}))
