"""A fake Anthropic API behind an httpx2.MockTransport, answering in the Messages / Message Batches API's JSON
format (written from the API reference), for the drafting tests and benchmark. Not a test module.

`FakeAPI.client()` is the real `anthropic.Anthropic` client with this transport as its HTTP client;
`FakeAPI.serve()` puts the same endpoints behind a local HTTP server (127.0.0.1, a free port) for a `reviewer draft`
run in a process of its own (the app's Drafts action), reached through ANTHROPIC_BASE_URL. Scripted answers: `api.script` is a list of callables or responses used in turn for POST /v1/messages (then good drafts).
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2

MODEL = "claude-sonnet-5-5"
KEY = "sk-ant-api03-PLANTED-test-key-0123456789abcdef"


def message_json(text: str, *, stop_reason: str = "end_turn", n: int = 1) -> dict[str, Any]:
    return {
        "id": f"msg_01Fake{n:06d}",
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": [{"type": "text", "text": text}],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 1200,
            "output_tokens": 350,
            "cache_creation_input_tokens": 0 if n > 1 else 900,
            "cache_read_input_tokens": 900 if n > 1 else 0,
        },
    }


def error_json(status: int) -> dict[str, Any]:
    kind = {
        400: "invalid_request_error",
        401: "authentication_error",
        403: "permission_error",
        429: "rate_limit_error",
        500: "api_error",
        529: "overloaded_error",
    }[status]
    return {"type": "error", "error": {"type": kind, "message": f"fake {kind}"}, "request_id": "req_fakeerror"}


def image_names(body: dict[str, Any]) -> list[str]:
    """The image names the request gives ("image 1: ..." text blocks before each image)."""
    names = []
    for block in body["messages"][0]["content"]:
        m = re.match(r"^(image \d+): ", block.get("text", "")) if block.get("type") == "text" else None
        if m:
            names.append(m.group(1))
    return names


def good_reply(body: dict[str, Any], **over: Any) -> dict[str, Any]:
    """A reply that fits the request's output schema: the first option of each category, the period's first
    year, 1.0 for a number."""
    props = body["output_config"]["format"]["schema"]["properties"]["answer"]["properties"]
    answer = {}
    for name, s in props.items():
        if "enum" in s:
            answer[name] = s["enum"][0]
        else:
            kinds = [a for a in s.get("anyOf", []) if "enum" not in a]
            t = kinds[0]["type"] if kinds else s.get("type")
            answer[name] = {"integer": 2005, "number": 1.0, "array": [2005]}.get(t, "text")
    reply = {
        "answer": answer,
        "conclusion": "Grassland replaced the cleared trees: the cleared patch is uniformly light green by the end.",
        "visible": [{"image": n, "seen": f"what {n} shows"} for n in image_names(body)],
        "alternatives": [{"interpretation": "cropland", "why_not": "no field pattern or seasonal bare soil"}],
        "confidence": 0.7,
        "caveats": ["one clear scene stands for each year"],
    }
    reply.update(over)
    return reply


class FakeAPI:
    """The fake endpoints, the requests they saw, and optional latency per request."""

    def __init__(self, latency_s: float = 0.0) -> None:
        self.latency_s = latency_s
        self.script: list[Any] = []
        self.requests: list[tuple[str, str, dict[str, Any] | None, dict[str, str]]] = []
        self.batches: dict[str, dict[str, Any]] = {}
        self.batch_script: list[str] = []  # processing statuses returned by successive retrieves
        self.batch_outcomes: dict[str, str] = {}  # custom_id -> succeeded | canceled | errored (default succeeded)
        self.lock = threading.Lock()
        self.n = 0

    # ------------------------------------------------------------------ transport

    def client(self, **kw: Any) -> Any:
        import anthropic

        return anthropic.Anthropic(api_key=kw.pop("api_key", KEY), max_retries=0, http_client=self.http_client(), **kw)

    def http_client(self) -> httpx2.Client:
        return httpx2.Client(transport=httpx2.MockTransport(self.handle))

    @contextlib.contextmanager
    def serve(self) -> Iterator[str]:
        """The fake behind a local HTTP server while the block runs; yields its base URL."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _any(self) -> None:
                n = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(n) if n else b""
                url = f"http://{self.headers.get('host', 'localhost')}{self.path}"
                req = httpx2.Request(self.command, url, headers=dict(self.headers), content=body)
                resp = fake.handle(req)
                data = resp.read()
                self.send_response(resp.status_code)
                for name, value in resp.headers.items():
                    if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                        self.send_header(name, value)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _any

            def log_message(self, *args: Any) -> None:  # quiet
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()
            server.server_close()

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content) if request.content else None
        with self.lock:
            self.requests.append((request.method, request.url.path, body, dict(request.headers)))
            self.n += 1
            n = self.n
        if self.latency_s:
            time.sleep(self.latency_s)
        path = request.url.path
        if request.method == "POST" and path == "/v1/messages":
            return self._message(body, n)
        if request.method == "POST" and path == "/v1/messages/batches":
            return self._batch_create(body)
        m = re.match(r"^/v1/messages/batches/([^/]+)(/results)?$", path)
        if m and request.method == "GET":
            return self._batch_results(m.group(1)) if m.group(2) else self._batch_get(m.group(1))
        return httpx2.Response(404, json=error_json(400))

    def _message(self, body: dict[str, Any], n: int) -> httpx2.Response:
        with self.lock:
            step = self.script.pop(0) if self.script else None
        if callable(step):
            step = step(body, n)
        if step is None:
            step = json.dumps(good_reply(body))
        if isinstance(step, httpx2.Response):
            return step
        return httpx2.Response(200, json=message_json(step, n=n), headers={"request-id": f"req_fake{n:06d}"})

    # ------------------------------------------------------------------ batches

    def _batch_json(self, bid: str, status: str) -> dict[str, Any]:
        b = self.batches[bid]
        ended = status == "ended"
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        for r in b["requests"]:
            counts[self.batch_outcomes.get(r["custom_id"], "succeeded") if ended else "processing"] += 1
        return {
            "id": bid,
            "type": "message_batch",
            "processing_status": status,
            "request_counts": counts,
            "created_at": "2026-12-01T12:00:00Z",
            "expires_at": "2026-12-02T12:00:00Z",
            "ended_at": "2026-12-01T12:05:00Z" if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"https://api.anthropic.com/v1/messages/batches/{bid}/results" if ended else None,
        }

    def _batch_create(self, body: dict[str, Any]) -> httpx2.Response:
        bid = f"msgbatch_01Fake{len(self.batches) + 1:04d}"
        self.batches[bid] = {"requests": body["requests"]}
        return httpx2.Response(200, json=self._batch_json(bid, "in_progress"))

    def _batch_get(self, bid: str) -> httpx2.Response:
        status = self.batch_script.pop(0) if self.batch_script else "ended"
        return httpx2.Response(200, json=self._batch_json(bid, status))

    def _batch_results(self, bid: str) -> httpx2.Response:
        lines = []
        for k, r in enumerate(self.batches[bid]["requests"], 1):
            outcome = self.batch_outcomes.get(r["custom_id"], "succeeded")
            if outcome == "succeeded":
                result = {"type": "succeeded", "message": message_json(json.dumps(good_reply(r["params"])), n=k)}
            elif outcome == "errored":
                result = {"type": "errored", "error": {"type": "error", "error": error_json(500)["error"]}}
            else:
                result = {"type": outcome}
            lines.append(json.dumps({"custom_id": r["custom_id"], "result": result}))
        return httpx2.Response(200, content="\n".join(lines).encode(), headers={"content-type": "application/binary"})


def status(code: int, headers: dict[str, str] | None = None) -> httpx2.Response:
    return httpx2.Response(code, json=error_json(code), headers=headers or {})


def timeout(body: dict[str, Any], n: int) -> Any:
    raise httpx2.ReadTimeout("fake read timeout")


def offline(body: dict[str, Any], n: int) -> Any:
    raise httpx2.ConnectError("fake: network unreachable")


Step = Callable[[dict[str, Any], int], Any]


@contextlib.contextmanager
def serve_in_process(latency_s: float = 0.0) -> Iterator[str]:
    """FakeAPI.serve() in a process of its own (this file run as a script), so that parsing the requests' images
    does not take the interpreter of the process under measurement (the app's, in the UI benchmark); yields the
    base URL. Scripts and request records stay in that process: for runs that only need good drafts."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, __file__, "--latency", str(latency_s)], stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().strip()
        if not url.startswith("http://"):
            raise RuntimeError(f"the fake API did not start: {url!r}")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="serve the fake Anthropic API on 127.0.0.1 until killed")
    ap.add_argument("--latency", type=float, default=0.0)
    args = ap.parse_args()
    with FakeAPI(latency_s=args.latency).serve() as base:
        print(base, flush=True)
        threading.Event().wait()
