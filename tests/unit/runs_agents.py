"""Scripted agents for the `reviewer run` tests and benchmark (not a test module): what a model does at each turn,
as Inspect mockllm outputs and as a local HTTP stand-in of Anthropic's Messages API (reached through
ANTHROPIC_BASE_URL by Inspect's real anthropic provider)."""

from __future__ import annotations

import contextlib
import json
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import bank_factory as bf  # noqa: E402

KEY = "sk-ant-api03-PLANTED-runs-key-0123456789abcdef"
#: a 1 x 1 PNG, written by the shell (a render without Python's start-up)
TINY_PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

RENDER = (
    "import glob, rasterio, numpy as np\n"
    "from PIL import Image\n"
    "f = sorted(glob.glob('record/landsat/*/*_SR_B4.TIF'))[0]\n"
    "a = rasterio.open(f).read(1).astype(float) * 0.0000275 - 0.2\n"
    "Image.fromarray((np.clip(a / 0.3, 0, 1) * 255).astype('uint8')).save('red.png'); print('rendered', a.shape)"
)

Step = tuple[str, dict[str, Any]]


def make_bank(folder: Path, site_id: str, *, frozen: bool = True, n_number: int = 1) -> Path:
    """A small bank on one site: q1 a trend question (category conclusion), q2... numeric area questions."""
    from reviewer.bank.io import BankContent, write_bank

    qs = [bf.trend_question("q1", site_id)]
    qs += [bf.number_question(f"q{i + 2}", site_id, ref=100, lo=95, hi=105) for i in range(n_number)]
    write_bank(
        folder, BankContent("tiny", "1", qs, [bf.site(site_id)], [], frozen=frozen, created="2026-11-30T12:00:00Z")
    )
    return folder


def question_of(text: str) -> str:
    return "q1" if "open-water" in text else "q2"


def right_answer(qid: str) -> dict[str, Any]:
    ans = {"direction": "increase", "trend": 0.3} if qid == "q1" else {"area": 101.0}
    return ans | {"confidence": 0.7, "method": "counted water pixels per year", "caveats": "one scene a year"}


def honest_steps(qid: str, closed_book: bool = False, *, render: str = "python") -> list[Step]:
    """List the record, render a PNG (q1 with Python, q2 by the shell), view it, submit (q1: first an invalid
    value, then the right one); in the closed book: list (nothing there), submit."""
    steps: list[Step] = [("bash", {"command": "ls record; ls record/landsat | head -3"})]
    if closed_book:
        return [*steps, ("submit", right_answer(qid))]
    if render == "python" and qid == "q1":
        steps.append(("python", {"code": RENDER}))
        steps.append(("view_image", {"path": "red.png"}))
    else:
        steps.append(("bash", {"command": f"echo {TINY_PNG_B64} | base64 -d > red.png"}))
        steps.append(("view_image", {"path": "red.png"}))
    if qid == "q1":
        steps.append(("submit", right_answer("q1") | {"confidence": 1.5}))
    steps.append(("submit", right_answer(qid)))
    return steps


def mock_model(steps_for: Callable[[str, bool], list[Step]]) -> Any:
    """Inspect's mockllm whose every turn is the next step of the sample's script (by its question text)."""
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    def turn(input: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
        user = next(m for m in input if m.role == "user").text
        n = sum(1 for m in input if m.role == "assistant")
        closed = "no imagery or data" in next(m for m in input if m.role == "system").text
        steps = steps_for(question_of(user), closed)
        name, args = steps[min(n, len(steps) - 1)]
        out = ModelOutput.for_tool_call("mockllm/model", name, args)
        out.usage = ModelUsage(input_tokens=1000 + 100 * n, output_tokens=50, total_tokens=1050 + 100 * n)
        return out

    return get_model("mockllm/model", custom_outputs=turn)


def sse(message: dict[str, Any]) -> bytes:
    """A message as the Messages API streams it (server-sent events: start, the tool_use block with its input as
    one JSON delta, the stop reason and usage, stop)."""
    block = message["content"][0]
    start = dict(
        message,
        content=[],
        stop_reason=None,
        usage={"input_tokens": message["usage"]["input_tokens"], "output_tokens": 1},
    )
    events = [
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": dict(block, input={})}),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": message["usage"]["output_tokens"]},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()


class MessagesStandIn:
    """A local HTTP stand-in of POST /v1/messages answering in the Messages API's JSON: the scripted step of the
    sample as a tool_use block. Records every request body and header; with `hold_second`, the requests of the
    second question asked wait until `release` is set (`held` tells it was reached; `first` is the question asked
    first)."""

    def __init__(self, steps_for: Callable[[str, bool], list[Step]]) -> None:
        self.steps_for = steps_for
        self.requests: list[tuple[dict[str, Any], dict[str, str]]] = []
        self.lock = threading.Lock()
        self.hold_second = False
        self.first: str | None = None
        self.held = threading.Event()
        self.release = threading.Event()

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        first = body["messages"][0]["content"]
        text = first if isinstance(first, str) else " ".join(b.get("text", "") for b in first)
        qid = question_of(text)
        with self.lock:
            self.first = self.first or qid
        if self.hold_second and qid != self.first:
            self.held.set()
            self.release.wait(60)
        n = sum(1 for m in body["messages"] if m["role"] == "assistant")
        steps = self.steps_for(qid, "no imagery or data" in json.dumps(body.get("system", "")))
        name, args = steps[min(n, len(steps) - 1)]
        with self.lock:
            k = len(self.requests)
        return {
            "id": f"msg_standin{k:05d}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": [{"type": "tool_use", "id": f"toolu_{k:05d}", "name": name, "input": args}],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 1200, "output_tokens": 80},
        }

    @contextlib.contextmanager
    def serve(self) -> Iterator[str]:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                n = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}")
                headers = {k.lower(): v for k, v in self.headers.items()} | {":path": self.path}
                with stand_in.lock:
                    stand_in.requests.append((body, headers))
                reply = stand_in.reply(body)
                stream = bool(body.get("stream"))
                data = sse(reply) if stream else json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("content-type", "text/event-stream" if stream else "application/json")
                self.send_header("request-id", "req_standin")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the killed run
                    self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            self.release.set()
            server.shutdown()
            server.server_close()
