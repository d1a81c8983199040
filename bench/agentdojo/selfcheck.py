"""The harness's own fidelity test: every user task's ground truth, benign, judged two ways.

    bench/agentdojo/.venv/bin/python bench/agentdojo/selfcheck.py                 # banking, slack
    bench/agentdojo/.venv/bin/python bench/agentdojo/selfcheck.py --suites travel,workspace --include-held-out

(a) in-process: the scripted model's plan (run.build_plan) run by AgentDojo's FunctionsRuntime
on the task's starting environment, as replay.py does;
(b) over MCP: the same plan sent, as the model's JSON arguments, to mcp_server.py started as a
real stdio MCP server (MCP Python SDK client; no toolgate, no model), then judged from what the
server recorded and the environment it dumped, exactly as run.py judges a toolgate run.

Both are judged by AgentDojo's utility check with the plan's final text. (b) must agree with (a)
on every task: where it does not, the report gives the first difference (a result or tool error
that differs, else a short diff of the environments the two left); a task where the verdicts
agree but the environments do not (beyond clock times and the order of a set's items) is listed
too. Tasks whose ground truth fails its own checker in-process are listed under
`in_process_failures`. Exit status 1 on any disagreement or other environment. No injection and no attack is ever run here.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from agentdojo.functions_runtime import FunctionCall, FunctionsRuntime  # noqa: E402
from agentdojo.types import text_content_block_from_string  # noqa: E402
from deepdiff.diff import DeepDiff  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from mcp_server import result_text  # noqa: E402
from model_server import next_step, wire_arguments  # noqa: E402
from run import (  # noqa: E402
    BENCHMARK_VERSION,
    DEVELOPMENT_SUITES,
    build_plan,
    chosen_suites,
    get_suite,
    judge,
    prepare_server,
    server_outcome,
    starting_environment,
)

MAX_CALLS = 64
# Clock times AgentDojo's tools stamp (a sent e-mail, a file's last change) differ between the
# two ways: a datetime on both sides later than this is not a difference.
STARTED = time.time() - 5


def stamped_during_run(value: Any) -> bool:
    # A naive datetime is local time, as datetime.now() gives it; timestamp() reads it so.
    return isinstance(value, datetime.datetime) and value.timestamp() >= STARTED


def in_process(suite: Any, user_task: Any) -> dict[str, Any]:
    env = starting_environment(suite, user_task, {})
    pre_env = env.model_copy(deep=True)
    plan = build_plan(user_task, None, pre_env)
    runtime = FunctionsRuntime(suite.tools)
    results: list[str] = []
    trace: list[FunctionCall] = []
    errors: list[bool] = []
    while len(results) < MAX_CALLS:
        call, _ = next_step(plan, results)
        if call is None:
            break
        result, error = runtime.run_function(env, call.function, call.args)
        results.append(error if error is not None else result_text(result))
        errors.append(error is not None)
        trace.append(FunctionCall(function=call.function, args=call.args))
    utility, _ = judge(suite, user_task, None, [text_content_block_from_string(plan.final_text)], pre_env, env, trace)
    return {"utility": utility, "results": results, "errors": errors, "env": env}


async def over_mcp_async(suite: Any, user_task: Any, run_dir: Path) -> dict[str, Any]:
    pre_env = prepare_server(suite, user_task, {}, run_dir)
    plan = build_plan(user_task, None, pre_env)
    results: list[str] = []
    errors: list[bool] = []
    params = StdioServerParameters(command=sys.executable, args=[str(HERE / "mcp_server.py"), str(run_dir)])
    with (run_dir / "server.stderr").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await session.list_tools()
                while len(results) < MAX_CALLS:
                    call, _ = next_step(plan, results)
                    if call is None:
                        break
                    # What toolgate forwards: the arguments the model sent, parsed from JSON.
                    arguments = json.loads(wire_arguments(call.args))
                    answer = await session.call_tool(call.function, arguments)
                    results.append("".join(getattr(part, "text", "") for part in answer.content))
                    errors.append(bool(answer.is_error))
    _, post_env, trace = server_outcome(suite, run_dir, pre_env)
    utility, _ = judge(suite, user_task, None, [text_content_block_from_string(plan.final_text)], pre_env, post_env, trace)
    return {"utility": utility, "results": results, "errors": errors, "env": post_env}


def over_mcp(suite: Any, user_task: Any, work: Path) -> dict[str, Any]:
    run_dir = work / f"{suite.name}.{user_task.ID}"
    run_dir.mkdir()
    try:
        return anyio.run(over_mcp_async, suite, user_task, run_dir)
    except Exception as e:  # a harness failure is a difference too
        stderr = (run_dir / "server.stderr").read_text()[-800:] if (run_dir / "server.stderr").exists() else ""
        return {"utility": False, "results": [], "errors": [], "env": None, "failure": f"{type(e).__name__}: {e} {stderr}".strip()}


def short(text: str, limit: int = 300) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[:limit] + "..."


def environment_diff(a: Any, b: Any) -> dict[str, Any]:
    """How the environment (b) left differs from (a)'s, beyond the order of a set's items and
    clock times stamped during the run."""
    diff = DeepDiff(a.model_dump(), b.model_dump(), ignore_order=True, view="tree")
    out: dict[str, Any] = {}
    for kind, items in diff.items():
        kept = [
            item for item in items
            if not (kind == "values_changed" and all(stamped_during_run(v) for v in (item.t1, item.t2)))
        ]
        if kept:
            out[kind] = [item.path() for item in kept]
    return out


def first_difference(a: dict[str, Any], b: dict[str, Any]) -> str:
    if "failure" in b:
        return f"MCP run failed: {short(b['failure'], 1200)}"
    # A tool error first, then the environment, then any other result: results and records also
    # differ by what AgentDojo leaves to chance (clock times, the order of a set).
    for i, (ea, eb) in enumerate(zip(a["errors"], b["errors"])):
        if ea != eb or (ea and a["results"][i] != b["results"][i]):
            return f"call {i + 1}: in-process {'error' if ea else 'result'} {short(a['results'][i])!r} / MCP {'error' if eb else 'result'} {short(b['results'][i])!r}"
    if len(a["results"]) != len(b["results"]):
        return f"{len(a['results'])} calls in-process, {len(b['results'])} over MCP"
    diff = environment_diff(a["env"], b["env"])
    if diff:
        return f"environments differ: {short(str(diff), 1200)}"
    for i, (ra, rb) in enumerate(zip(a["results"], b["results"])):
        if ra != rb:
            return f"call {i + 1}: in-process result {short(ra)!r} / MCP result {short(rb)!r}"
    return "same results and environment, different verdict"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suites", default=",".join(DEVELOPMENT_SUITES))
    parser.add_argument("--user-tasks", default="", help="comma-separated user task ids (default: all)")
    parser.add_argument("--include-held-out", action="store_true", help="allow travel/workspace (benign ground truth only)")
    args = parser.parse_args()
    suites = chosen_suites(parser, args.suites, args.include_held_out, "pass --include-held-out (benign ground truth only)")
    wanted = set(filter(None, args.user_tasks.split(","))) or None
    report: dict[str, Any] = {}
    agree = True
    with tempfile.TemporaryDirectory(prefix="agentdojo-selfcheck-") as tmp:
        work = Path(tmp)
        for name in suites:
            suite = get_suite(BENCHMARK_VERSION, name)
            tasks = [t for t in suite.user_tasks.values() if wanted is None or t.ID in wanted]
            entry: dict[str, Any] = {"tasks": len(tasks), "in_process": 0, "mcp": 0, "in_process_failures": [], "disagreements": {},
                                     "same_verdict_other_environment": {}}
            for task in tasks:
                a = in_process(suite, task)
                b = over_mcp(suite, task, work)
                entry["in_process"] += a["utility"]
                entry["mcp"] += b["utility"]
                if not a["utility"]:
                    entry["in_process_failures"].append(task.ID)
                if a["utility"] != b["utility"]:
                    entry["disagreements"][task.ID] = first_difference(a, b)
                elif b["env"] is not None and (diff := environment_diff(a["env"], b["env"])):
                    entry["same_verdict_other_environment"][task.ID] = short(str(diff), 1200)
            agree &= not entry["disagreements"] and not entry["same_verdict_other_environment"]
            report[name] = entry
            print(f"{name}: {entry['in_process']}/{len(tasks)} in-process, {entry['mcp']}/{len(tasks)} via MCP, "
                  f"{len(entry['disagreements'])} disagreements, "
                  f"{len(entry['same_verdict_other_environment'])} with the same verdict but another environment", file=sys.stderr)
    print(json.dumps(report, indent=2))
    sys.exit(0 if agree else 1)


if __name__ == "__main__":
    main()
