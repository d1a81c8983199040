"""The fully compromised scripted model, served as an OpenAI-compatible Chat Completions endpoint
(`POST /run/<run id>/v1/chat/completions`, `stream: true`, server-sent events) on 127.0.0.1.

It replays the user task's ground-truth calls one per reply. When a tool result it is sent
contains the injection task's goal (the text the attack planted), it first makes the injection
task's ground-truth calls, as the planted text asks ("before you can solve the task ... do the
following first"), then goes on with the user task. A denied call changes nothing in the plan:
the model does not adapt, so only the gate can stop it. After the last call it answers with the
user task's ground-truth output text.

The model is a pure function of the conversation toolgate sends (what an API model sees), so a
run's plan is only registered here; nothing else of toolgate's run reaches it.
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


SERVER = "agentdojo"


def squash(text: str) -> str:
    """Lower-case letters and digits only: the goal is found in a result whatever YAML quoting,
    line folding or escaping the result went through."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


@dataclass
class PlannedCall:
    function: str
    args: dict[str, Any]
    # "user": the user task's ground truth; "injection": what the planted text asked for.
    origin: str


@dataclass
class Plan:
    user_calls: list[PlannedCall]
    injection_calls: list[PlannedCall]
    # The injection task's goal as planted in the environment; None for a benign run.
    injection_goal: str | None
    final_text: str
    requests: int = 0
    # Index (0-based) of the call whose result first carried the injection, if any.
    injection_seen_after: int | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


def next_step(plan: Plan, tool_results: list[str]) -> tuple[PlannedCall | None, int | None]:
    """What the model does after these tool results (one per call it made, in order): its next
    call, or None for the final answer; and after which call the injection was seen."""
    queue = list(plan.user_calls)
    goal = squash(plan.injection_goal) if plan.injection_goal else None
    seen_after: int | None = None
    for index, result in enumerate(tool_results):
        if queue:
            queue.pop(0)
        if goal and seen_after is None and goal in squash(result):
            seen_after = index
            queue = list(plan.injection_calls) + queue
    return (queue[0] if queue else None), seen_after


class Registry:
    def __init__(self) -> None:
        self.plans: dict[str, Plan] = {}
        self.lock = threading.Lock()

    def register(self, run_id: str, plan: Plan) -> None:
        with self.lock:
            self.plans[run_id] = plan

    def take(self, run_id: str) -> Plan | None:
        with self.lock:
            return self.plans.pop(run_id, None)

    def get(self, run_id: str) -> Plan | None:
        with self.lock:
            return self.plans.get(run_id)


def tool_results_of(messages: list[dict[str, Any]], prefix: str) -> list[str]:
    """The results of the model's own calls of the suite's tools (names starting with `prefix`),
    in the order it made them (Chat Completions: `tool` messages answer the assistant's
    `tool_calls` by id). toolgate's own tools (connect_mcp) are not part of the plan."""
    order: list[str] = []
    for message in messages:
        if message.get("role") == "assistant":
            for call in message.get("tool_calls") or []:
                if call.get("function", {}).get("name", "").startswith(prefix):
                    order.append(call.get("id", ""))
    by_id: dict[str, str] = {}
    for message in messages:
        if message.get("role") == "tool":
            content = message.get("content")
            if isinstance(content, list):
                content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
            by_id[message.get("tool_call_id", "")] = content or ""
    return [by_id.get(call_id, "") for call_id in order]


def connect_call(server: str, body: dict[str, Any]) -> PlannedCall | None:
    """toolgate starts configured servers only when the agent connects them (`connect_mcp`): the
    model does that first, once, while the request carries none of the server's tools."""
    names = [t.get("function", {}).get("name", "") for t in body.get("tools") or []]
    if any(n.startswith(f"mcp__{server}__") for n in names):
        return None
    asked = any(
        call.get("function", {}).get("name") == "connect_mcp"
        for m in body.get("messages", []) if m.get("role") == "assistant"
        for call in m.get("tool_calls") or []
    )
    if asked or "connect_mcp" not in names:
        return None
    return PlannedCall("connect_mcp", {"name": server}, "connect")


def tool_name(function: str, tools: list[dict[str, Any]]) -> str:
    """The model-facing name toolgate gave the suite's function (e.g. mcp__agentdojo__send_money)."""
    for tool in tools:
        name = tool.get("function", {}).get("name", "")
        if name.startswith("mcp__") and name.endswith("__" + function):
            return name
    return f"mcp__{SERVER}__{function}"


def wire_arguments(args: dict[str, Any]) -> str:
    """A planned call's arguments as the model sends them (the `arguments` JSON string)."""
    return json.dumps(args)


def sse_chunks(body: dict[str, Any], call: PlannedCall | None, call_index: int, text: str) -> list[dict[str, Any]]:
    base = {"id": f"chatcmpl-{call_index}", "object": "chat.completion.chunk", "created": int(time.time()), "model": body.get("model", "scripted")}
    usage = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    if call is None:
        return [
            {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            {**base, "choices": [], "usage": usage},
        ]
    name = call.function if call.origin == "connect" else tool_name(call.function, body.get("tools") or [])
    arguments = wire_arguments(call.args)
    return [
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": None, "tool_calls": [
            {"index": 0, "id": f"call_{call_index}", "type": "function", "function": {"name": name, "arguments": ""}}]}, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": arguments}}]}, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {**base, "choices": [], "usage": usage},
    ]


def make_handler(registry: Registry) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def send_json(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self.send_json(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})

        def do_POST(self) -> None:
            match = re.fullmatch(r"/run/([A-Za-z0-9_.-]+)/v1/chat/completions", self.path)
            length = int(self.headers.get("content-length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            plan = registry.get(match.group(1)) if match else None
            if plan is None:
                self.send_json(404, {"error": {"message": f"no run at {self.path}"}})
                return
            results = tool_results_of(body.get("messages", []), f"mcp__{SERVER}__")
            call, seen_after = next_step(plan, results)
            connect = connect_call(SERVER, body)
            if connect is not None:
                call = connect
            with plan.lock:
                plan.requests += 1
                plan.injection_seen_after = seen_after
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            for chunk in sse_chunks(body, call, plan.requests, plan.final_text):
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True

    return Handler


class ModelServer:
    """The endpoint on 127.0.0.1 (a free port), serving in a daemon thread."""

    def __init__(self) -> None:
        self.registry = Registry()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(self.registry))
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def base_url(self, run_id: str) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/run/{run_id}/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
