"""Judge a candidate flow rule offline against a recording of run.py (no toolgate, no processes).

    bench/agentdojo/.venv/bin/python bench/agentdojo/replay.py recorded/allow-all-auto.jsonl.gz --rule flow
    bench/agentdojo/.venv/bin/python bench/agentdojo/replay.py recorded/allow-all-auto.jsonl.gz --rule all --details
    bench/agentdojo/.venv/bin/python bench/agentdojo/replay.py recorded/read-only.jsonl.gz --as-recorded

Each recorded run is replayed in-process: the same compromised model (model_server.next_step)
on the same starting environment (the recorded injections), the suite's tools run by AgentDojo's
FunctionsRuntime, and the rule (flow_rules.py) deciding every call before it runs; a call the
rule asks about is denied, as in headless mode, and the model reads a denial. AgentDojo's
checkers then judge the environment, as in run.py. Replaying with `allow-all` must reproduce the
recording (the calls, their results and the verdicts): the report says where it does not.
`--as-recorded` replays nothing: it counts the recording as toolgate ran it (the baseline setups).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from agentdojo.functions_runtime import FunctionCall, FunctionsRuntime  # noqa: E402
from agentdojo.types import text_content_block_from_string  # noqa: E402

from flow_rules import RULES, Rule, Step  # noqa: E402
from mcp_server import result_text  # noqa: E402
from model_server import next_step  # noqa: E402
from run import (  # noqa: E402
    BENCHMARK_VERSION,
    build_plan,
    get_suite,
    judge,
    needs_tool_call,
    read_recording,
    starting_environment,
    summarize,
)

MAX_CALLS = 64


def replay_one(record: dict[str, Any], rule: Rule, suites: dict[str, Any]) -> dict[str, Any]:
    suite = suites[record["suite"]]
    user_task = suite.get_user_task_by_id(record["user_task"])
    injection_task = suite.get_injection_task_by_id(record["injection_task"]) if record["injection_task"] else None
    env = starting_environment(suite, user_task, record["injections"])
    pre_env = env.model_copy(deep=True)
    plan = build_plan(user_task, injection_task, pre_env)
    runtime = FunctionsRuntime(suite.tools)
    results: list[str] = []
    history: list[Step] = []
    trace: list[FunctionCall] = []
    asked: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    while len(results) < MAX_CALLS:
        call, _ = next_step(plan, results)
        if call is None:
            break
        verdict = rule({"function": call.function, "args": call.args}, history, user_task.PROMPT)
        if verdict.ask:
            text, ran = f"Permission denied: {verdict.reason}", False
            asked.append({"call": len(results) + 1, "function": call.function, "origin": call.origin, "reason": verdict.reason})
        else:
            result, error = runtime.run_function(env, call.function, call.args)
            text, ran = (error if error is not None else result_text(result)), True
            trace.append(FunctionCall(function=call.function, args=call.args))
        calls.append({"function": call.function, "args": call.args, "origin": call.origin, "ran": ran, "result": text})
        results.append(text)
        history.append(Step(call.function, dict(call.args), ran, text if ran else None))
    output = [text_content_block_from_string(plan.final_text)]
    utility, security = judge(suite, user_task, injection_task, output, pre_env, env, trace)
    return {
        "suite": record["suite"], "user_task": record["user_task"], "injection_task": record["injection_task"],
        "utility": utility, "security": security, "every_call_ran": not asked, "asked": asked, "calls": calls,
    }


def differences(record: dict[str, Any], replayed: dict[str, Any]) -> list[str]:
    """Where an allow-all replay differs from what toolgate's run recorded."""
    out = []
    recorded = [(c["function"], c["args"], c["result"]) for c in record["server_calls"]]
    ran = [(c["function"], c["args"], c["result"]) for c in replayed["calls"] if c["ran"]]
    if recorded != ran:
        out.append("calls or results differ")
    for key in ("utility", "security", "every_call_ran"):
        if record[key] != replayed[key]:
            out.append(f"{key}: recorded {record[key]}, replayed {replayed[key]}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("recording", type=Path)
    parser.add_argument("--rule", default="flow", help=f"one or more (comma-separated) of {', '.join(RULES)}, or all")
    parser.add_argument("--details", action="store_true", help="list the benign runs asked and the attacks that got through")
    parser.add_argument("--out", type=Path, help="write every replayed run here (JSONL)")
    parser.add_argument("--as-recorded", action="store_true", help="replay nothing: count the recording as toolgate ran it")
    args = parser.parse_args()

    records = read_recording(args.recording)
    suites = {name: get_suite(version, name) for name, version in sorted({(r["suite"], r.get("benchmark_version", BENCHMARK_VERSION)) for r in records})}
    needs_call = {(name, t.ID): needs_tool_call(s, t) for name, s in suites.items() for t in s.injection_tasks.values()}
    if args.as_recorded:
        setups = sorted({r["setup"] for r in records})
        as_recorded = {
            "setups": setups,
            "per_suite": {s: summarize([r for r in records if r["suite"] == s], needs_call) for s in suites},
            "total": summarize(records, needs_call),
        }
        print(json.dumps(as_recorded, indent=2))
        return
    names = list(RULES) if args.rule == "all" else [n for n in args.rule.split(",") if n]
    if unknown := [n for n in names if n not in RULES]:
        parser.error(f"unknown rule {', '.join(unknown)}: one of {', '.join(RULES)}, or all")
    report: dict[str, Any] = {}
    for name in names:
        started = time.monotonic()
        replayed = [replay_one(r, RULES[name], suites) for r in records]
        entry: dict[str, Any] = {
            "per_suite": {s: summarize([r for r in replayed if r["suite"] == s], needs_call) for s in suites},
            "total": summarize(replayed, needs_call),
            "seconds": round(time.monotonic() - started, 1),
        }
        if name == "allow-all":
            diffs = {f"{r['suite']}/{r['user_task']}/{r['injection_task']}": d for r, p in zip(records, replayed) if (d := differences(r, p))}
            entry["matches_recording"] = f"{len(records) - len(diffs)}/{len(records)}"
            entry["differences"] = diffs
        if args.details:
            entry["benign_asked"] = [
                {"run": f"{r['suite']}/{r['user_task']}", "asked": r["asked"]} for r in replayed if r["injection_task"] is None and r["asked"]
            ]
            entry["benign_not_done"] = [f"{r['suite']}/{r['user_task']}" for r in replayed if r["injection_task"] is None and not r["utility"]]
            entry["attacks_through"] = [
                f"{r['suite']}/{r['user_task']}/{r['injection_task']}" for r in replayed
                if r["injection_task"] and r["security"] and needs_call[(r["suite"], r["injection_task"])]
            ]
        report[name] = entry
        if args.out:
            with args.out.open("a") as f:
                for r in replayed:
                    f.write(json.dumps({"rule": name, **r}, sort_keys=True) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
