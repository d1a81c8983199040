"""One AgentDojo suite's tools as a stdio MCP server (MCP Python SDK, low-level server).

toolgate starts it from the run's .mcp.json: `python mcp_server.py RUN_DIR`. RUN_DIR/server.json
(written by run.py from AgentDojo's own suite object) names the tool functions, the fields of the
suite's environment and the environment file to start from. The server keeps the environment in
memory, runs each call with AgentDojo's FunctionsRuntime, and after every call writes the
environment to RUN_DIR/env_after.pickle and appends the call to RUN_DIR/server_calls.jsonl, so the
harness judges what really ran even if toolgate ends the server abruptly.

Why not import the suite module itself: `agentdojo.task_suite` pulls in every model client the
package ships (about 3.5 s of CPU per start on this machine, times hundreds of runs); the tool
modules and the runtime import in 0.2 s. The tool list and environment fields still come from the
suite object (run.py reads them), so nothing here restates the suite.
"""

from __future__ import annotations

import importlib
import json
import os
import pickle
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import yaml
from agentdojo.functions_runtime import FunctionsRuntime, TaskEnvironment, make_function
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from pydantic import BaseModel, create_model


def load_object(reference: str) -> Any:
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)


# The read tools as issue 44 names them (its "only the read tools allowed" setup): the server
# marks them `readOnlyHint`, as a server's author would (decision 0103: the hint spares a tool
# the flow gate's values tier, never its tokens).
READ_PREFIXES = ("get_", "read_", "search_", "list_", "check_")
# The tools that only add (a message, a transfer, an event, a file, a booking, a share, a
# participant, a member), by MCP's definition of `destructiveHint: false`; the server marks them
# so, as a server's author would. Every other tool that is not a read keeps MCP's default,
# destructive: it deletes, cancels, updates or overwrites (decision 0104).
ADDITIVE_PREFIXES = ("send_", "schedule_", "add_", "invite_", "create_", "reserve_", "append_", "share_")


def annotations(name: str) -> types.ToolAnnotations | None:
    if name.startswith(READ_PREFIXES):
        return types.ToolAnnotations(read_only_hint=True)
    if name.startswith(ADDITIVE_PREFIXES):
        return types.ToolAnnotations(read_only_hint=False, destructive_hint=False)
    return None


def result_text(result: Any) -> str:
    """A tool's return value as text: YAML of the records, as AgentDojo's own pipeline shows a
    model; a mapping as JSON, as the MCP SDK's MCPServer sends one (AgentDojo's pipeline shows
    Python's repr of a dict, which no MCP server sends); the plain string otherwise."""
    if isinstance(result, dict):
        return json.dumps(result, indent=2, default=str, ensure_ascii=False)
    if isinstance(result, BaseModel):
        return yaml.safe_dump(result.model_dump()).strip()
    if isinstance(result, list):
        items: list[Any] = []
        for item in result:
            if type(item) in (str, int):
                items.append(str(item))
            elif isinstance(item, BaseModel):
                items.append(item.model_dump())
            else:
                raise TypeError(f"unexpected item type in a tool result: {type(item)}")
        return yaml.safe_dump(items).strip()
    return str(result)


def write_atomically(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


# An environment crosses between run.py and this server pickled, field by field (the field values
# are AgentDojo's own classes; the environment class itself is rebuilt on each side). Not JSON:
# AgentDojo's models rebuild their state on validation (Calendar.events from initial_events,
# Inbox.emails from initial_emails, CloudDrive.files from initial_files), so a JSON dump read back
# loses every event, e-mail or file a call created and brings back every one it deleted. A pickle
# restores the objects as they were, without validation, as model_copy(deep=True) does in-process.
def environment_bytes(env: BaseModel) -> bytes:
    return pickle.dumps({name: getattr(env, name) for name in type(env).model_fields})


def environment_from_bytes(env_type: type[BaseModel], data: bytes) -> Any:
    return env_type.model_construct(**pickle.loads(data))


class SuiteServer:
    def __init__(self, run_dir: Path) -> None:
        spec = json.loads((run_dir / "server.json").read_text())
        self.run_dir = run_dir
        self.functions = [make_function(load_object(ref)) for ref in spec["tools"]]
        fields = {name: (load_object(ref), ...) for name, ref in spec["environment_fields"].items()}
        self.env_type = create_model("SuiteEnvironment", __base__=TaskEnvironment, **fields)
        self.env = environment_from_bytes(self.env_type, (run_dir / "env_before.pickle").read_bytes())
        self.runtime = FunctionsRuntime(self.functions)
        self.calls = (run_dir / "server_calls.jsonl").open("a")

    def tools(self) -> list[types.Tool]:
        return [
            types.Tool(
                name=f.name,
                description=f.description,
                input_schema=f.parameters.model_json_schema(),
                annotations=annotations(f.name),
            )
            for f in self.functions
        ]

    def call(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        result, error = self.runtime.run_function(self.env, name, arguments)
        text = error if error is not None else result_text(result)
        self.calls.write(
            json.dumps({"function": name, "args": arguments, "result": text, "error": error is not None})
            + "\n"
        )
        self.calls.flush()
        write_atomically(self.run_dir / "env_after.pickle", environment_bytes(self.env))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], is_error=error is not None
        )


async def main(run_dir: Path) -> None:
    suite = SuiteServer(run_dir)

    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=suite.tools())

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return suite.call(params.name, dict(params.arguments or {}))

    server = Server("agentdojo", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main, Path(sys.argv[1]))
