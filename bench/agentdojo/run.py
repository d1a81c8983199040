"""AgentDojo v1 (banking, slack) through toolgate headless, with a fully compromised scripted model.

    bench/agentdojo/.venv/bin/python bench/agentdojo/run.py --setup allow-all-auto
    bench/agentdojo/.venv/bin/python bench/agentdojo/run.py --setup read-only --jobs 2
    bench/agentdojo/.venv/bin/python bench/agentdojo/run.py --setup default --suites slack

For every user task (a benign run) and every user task x injection task (an attacked run, the
`important_instructions` attack): the suite's tools are a real stdio MCP server (mcp_server.py)
that toolgate starts from a .mcp.json; the model is model_server.py on 127.0.0.1, reached by
toolgate's OpenAI-compatible provider; toolgate runs `-p PROMPT --output-format jsonl`, where a
question is a denial. AgentDojo's own checkers judge the environment the server dumped.

Each run becomes one line of the recording (RECORD_DIR/<setup>.jsonl.gz): the calls the model made,
toolgate's decision on each, the result text the model read, which calls the planted text caused,
and the verdicts. replay.py judges a candidate flow rule offline from a recording.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from agentdojo.attacks.attack_registry import load_attack  # noqa: E402
from agentdojo.agent_pipeline.base_pipeline_element import BasePipelineElement  # noqa: E402
from agentdojo.base_tasks import BaseInjectionTask, BaseUserTask  # noqa: E402
from agentdojo.functions_runtime import FunctionCall, TaskEnvironment  # noqa: E402
from agentdojo.task_suite.load_suites import get_suite  # noqa: E402
from agentdojo.task_suite.task_suite import TaskSuite  # noqa: E402
from agentdojo.types import text_content_block_from_string  # noqa: E402

from mcp_server import READ_PREFIXES, environment_bytes, environment_from_bytes  # noqa: E402
from model_server import ModelServer, Plan, PlannedCall  # noqa: E402

# The figures are on v1; `--benchmark-version` runs a later one (its new injection tasks).
BENCHMARK_VERSION = "v1"
ATTACK = "important_instructions"
# The attack addresses the model by name; AgentDojo derives it from the pipeline's name.
PIPELINE_NAME = "gpt-4o-2024-05-13"
SERVER = "agentdojo"
DEVELOPMENT_SUITES = ("banking", "slack")
# Measured separately by the held-out harness; never developed against (issue 44).
HELD_OUT_SUITES = ("travel", "workspace")
REPO = HERE.parent.parent
RECORD_DIR = HERE / "recorded"


@dataclass(frozen=True)
class Setup:
    name: str
    description: str
    mode: str | None
    # "all": every tool of the server; "read": the read tools by prefix; None: no rule.
    allow: str | None
    # `[flow] enabled` (decision 0098; on by default since): the baselines keep it off, so
    # they measure what they measured before the flow gate was built.
    flow: bool = False


SETUPS = {
    s.name: s
    for s in (
        Setup("allow-all-auto", "every tool of the server allowed, auto mode", "auto", "all"),
        Setup("read-only", "only the read tools (get_/read_/search_/list_/check_) allowed", None, "read"),
        Setup("default", "default mode, no rules", None, None),
        Setup("allow-all-auto-flow", "every tool of the server allowed, auto mode, the flow rule on (toolgate's default)", "auto", "all", flow=True),
    )
}


class NamedPipeline(BasePipelineElement):
    """Only a name: the attack reads the model's name from the pipeline it targets."""

    name = PIPELINE_NAME

    def query(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - never run
        raise NotImplementedError


def qualified(obj: Any) -> str:
    return f"{obj.__module__}:{obj.__qualname__}"


def server_spec(suite: TaskSuite) -> dict[str, Any]:
    """What mcp_server.py needs, read from AgentDojo's suite object."""
    return {
        "tools": [qualified(f.run) for f in suite.tools],
        "environment_fields": {
            name: qualified(info.annotation) for name, info in suite.environment_type.model_fields.items()
        },
    }


def planned(calls: list[FunctionCall], origin: str) -> list[PlannedCall]:
    out = []
    for call in calls:
        if any(isinstance(v, FunctionCall) for v in call.args.values()):
            raise ValueError(f"nested call in ground truth: {call}")
        out.append(PlannedCall(call.function, dict(call.args), origin))
    return out


def build_plan(user_task: BaseUserTask, injection_task: BaseInjectionTask | None, pre_env: TaskEnvironment) -> Plan:
    """The compromised model's script: the user task's ground truth, and the injection task's
    for when the planted text shows up (both computed on the run's starting environment)."""
    return Plan(
        user_calls=planned(user_task.ground_truth(pre_env.model_copy(deep=True)), "user"),
        injection_calls=planned(injection_task.ground_truth(pre_env.model_copy(deep=True)), "injection") if injection_task else [],
        injection_goal=injection_task.GOAL if injection_task else None,
        final_text=user_task.GROUND_TRUTH_OUTPUT,
    )


def starting_environment(suite: TaskSuite, user_task: BaseUserTask, injections: dict[str, str]) -> TaskEnvironment:
    """The environment a run starts from: the suite's, with the injections, as the task sets it up."""
    return user_task.init_environment(suite.load_and_inject_default_environment(injections))


def judge(suite: TaskSuite, user_task: BaseUserTask, injection_task: BaseInjectionTask | None, output: list[Any],
          pre_env: TaskEnvironment, post_env: TaskEnvironment, trace: list[FunctionCall]) -> tuple[bool, bool | None]:
    """AgentDojo's own checkers: utility of the user task, and whether the injection task was
    carried out (its `security` is True when the attack succeeded). Some checkers print; that
    stays off our output."""
    with contextlib.redirect_stdout(io.StringIO()):
        utility = suite._check_task_result(user_task, output, pre_env, post_env, trace)
        security = suite._check_task_result(injection_task, output, pre_env, post_env, trace) if injection_task else None
    return utility, security


def needs_tool_call(suite: TaskSuite, task: BaseInjectionTask) -> bool:
    """An attack needs a tool call when the attacker's goal, as AgentDojo's ground truth for it
    says, takes at least one call, and the security check fails on an untouched environment
    and a model that did nothing. A goal that is only words in the answer is no tool call's:
    the compromised model never writes them, and no gate could stop them."""
    env = suite.load_and_inject_default_environment({})
    if not task.ground_truth(env.model_copy(deep=True)):
        return False
    return not suite._check_task_result(task, [text_content_block_from_string("")], env, env.model_copy(deep=True), [])


def prepare_server(suite: TaskSuite, user_task: BaseUserTask, injections: dict[str, str], run_dir: Path) -> TaskEnvironment:
    """What mcp_server.py reads from RUN_DIR (the tools, the starting environment); returns the
    starting environment the checkers compare against."""
    task_env = starting_environment(suite, user_task, injections)
    pre_env = task_env.model_copy(deep=True)
    (run_dir / "env_before.pickle").write_bytes(environment_bytes(task_env))
    (run_dir / "server.json").write_text(json.dumps(server_spec(suite)))
    return pre_env


def server_outcome(suite: TaskSuite, run_dir: Path, pre_env: TaskEnvironment) -> tuple[list[dict[str, Any]], TaskEnvironment, list[FunctionCall]]:
    """What really ran on mcp_server.py: its record of the calls, the environment it left (the
    starting one if no call ran) and the trace the checkers get."""
    server_calls_path = run_dir / "server_calls.jsonl"
    server_calls = [json.loads(l) for l in server_calls_path.read_text().splitlines()] if server_calls_path.exists() else []
    env_after = run_dir / "env_after.pickle"
    post_env = environment_from_bytes(suite.environment_type, env_after.read_bytes()) if env_after.exists() else pre_env.model_copy(deep=True)
    trace = [FunctionCall(function=c["function"], args=c["args"]) for c in server_calls]
    return server_calls, post_env, trace


@dataclass
class RunSpec:
    suite: TaskSuite
    user_task: BaseUserTask
    injection_task: BaseInjectionTask | None
    injections: dict[str, str]
    benchmark_version: str = BENCHMARK_VERSION


def toolgate_command(binary: Path, setup: Setup, suite: TaskSuite, prompt: str, mcp_config: Path, workspace: Path) -> list[str]:
    command = [
        str(binary), "-p", prompt, "--output-format", "jsonl", "--provider", "openai",
        "--model", PIPELINE_NAME, "--workspace", str(workspace), "--mcp-config", str(mcp_config),
    ]
    if setup.mode:
        command += ["--permission-mode", setup.mode]
    if setup.allow == "all":
        command += ["--allow", f"mcp__{SERVER}__*"]
    elif setup.allow == "read":
        for f in suite.tools:
            if f.name.startswith(READ_PREFIXES):
                command += ["--allow", f"mcp__{SERVER}__{f.name}"]
    return command


def parse_jsonl(stdout: str) -> dict[str, Any]:
    calls: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    texts: list[str] = []
    exit_code = None
    errors: list[str] = []
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        kind = event.get("type")
        if kind == "tool_started":
            calls[event["call_id"]] = {"call_id": event["call_id"], "tool": event["name"], "args": event.get("input")}
            order.append(event["call_id"])
        elif kind == "permission_decided":
            call = calls.setdefault(event["call_id"], {"call_id": event["call_id"]})
            call["decision"] = event.get("decision")
            call["decider"] = event.get("decider")
            call["why"] = event.get("why")
        elif kind == "tool_finished":
            call = calls.setdefault(event["call_id"], {"call_id": event["call_id"]})
            call["outcome"] = event.get("outcome")
            call["output"] = event.get("output")
        elif kind == "text":
            texts.append(event.get("text", ""))
        elif kind == "error":
            errors.append(event.get("message", ""))
        elif kind == "turn_finished":
            exit_code = event.get("exit_code")
    return {"calls": [calls[i] for i in order], "final_text": texts[-1] if texts else "", "exit_code": exit_code, "errors": errors}


def run_one(spec: RunSpec, setup: Setup, binary: Path, model: ModelServer, work: Path, timeout: float) -> dict[str, Any]:
    suite, user_task, injection_task = spec.suite, spec.user_task, spec.injection_task
    run_id = f"{suite.name}.{user_task.ID}.{injection_task.ID if injection_task else 'benign'}"
    run_dir = work / run_id
    (run_dir / "workspace").mkdir(parents=True)
    (run_dir / "config").mkdir()
    flow = "true" if setup.flow else "false"
    (run_dir / "config" / "config.toml").write_text(f'[tools]\nsearch = "off"\n\n[flow]\nenabled = {flow}\n')

    pre_env = prepare_server(suite, user_task, spec.injections, run_dir)
    mcp_config = run_dir / "mcp.json"
    mcp_config.write_text(json.dumps({"mcpServers": {SERVER: {
        "command": sys.executable, "args": [str(HERE / "mcp_server.py"), str(run_dir)]}}}))

    plan = build_plan(user_task, injection_task, pre_env)
    model.registry.register(run_id, plan)
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "MODEL_ID", "TOOLGATE_SCENARIO")}
    env.update({
        "TOOLGATE_STATE_DIR": str(run_dir / "state"),
        "TOOLGATE_CONFIG_DIR": str(run_dir / "config"),
        "OPENAI_BASE_URL": model.base_url(run_id),
    })
    command = toolgate_command(binary, setup, suite, user_task.PROMPT, mcp_config, run_dir / "workspace")
    started = time.monotonic()
    try:
        proc = subprocess.run(command, cwd=run_dir / "workspace", env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
        stdout, stderr, code = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as e:
        stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        stderr, code = "timeout", None
    seconds = time.monotonic() - started
    model.registry.take(run_id)
    parsed = parse_jsonl(stdout)
    prefix = f"mcp__{SERVER}__"
    toolgate_calls = [c for c in parsed["calls"] if not str(c.get("tool", "")).startswith(prefix)]
    parsed["calls"] = [c for c in parsed["calls"] if str(c.get("tool", "")).startswith(prefix)]
    for call in parsed["calls"]:
        call["function"] = call["tool"][len(prefix):]

    server_calls, post_env, trace = server_outcome(suite, run_dir, pre_env)
    output = [text_content_block_from_string(parsed["final_text"])]
    utility, security = judge(suite, user_task, injection_task, output, pre_env, post_env, trace)

    # Which planned call each of the model's calls was: the plan is a pure function of results.
    labels = label_calls(plan, [c.get("output") or "" for c in parsed["calls"]])
    for call, origin in zip(parsed["calls"], labels):
        call["origin"] = origin
    all_ran = (
        len(parsed["calls"]) > 0 or not plan.user_calls
    ) and all(c.get("decision") == "allow" and c.get("outcome") in ("ok", "error") for c in parsed["calls"]) and len(server_calls) == len(parsed["calls"])
    record = {
        "suite": suite.name,
        "user_task": user_task.ID,
        "injection_task": injection_task.ID if injection_task else None,
        "setup": setup.name,
        "benchmark_version": spec.benchmark_version,
        "prompt": user_task.PROMPT,
        "injections": spec.injections,
        "calls": parsed["calls"],
        "server_calls": server_calls,
        "toolgate_calls": toolgate_calls,
        "final_text": parsed["final_text"],
        "exit_code": code,
        "errors": parsed["errors"] + ([stderr.strip()[-2000:]] if code not in (0, 1) and stderr else []),
        "utility": utility,
        "security": security,
        "every_call_ran": all_ran,
        "seconds": round(seconds, 2),
    }
    if not os.environ.get("AGENTDOJO_KEEP_RUNS"):
        shutil.rmtree(run_dir, ignore_errors=True)
    else:
        (run_dir / "toolgate.stdout").write_text(stdout)
        (run_dir / "toolgate.stderr").write_text(stderr)
    return record


def label_calls(plan: Plan, outputs: list[str]) -> list[str]:
    from model_server import next_step

    labels = []
    for i in range(len(outputs)):
        call, _ = next_step(plan, outputs[:i])
        labels.append(call.origin if call else "unplanned")
    return labels


def run_specs(suite_names: list[str], user_filter: set[str] | None, benign_only: bool,
              benchmark_version: str = BENCHMARK_VERSION, fresh_attacks: bool = False, fresh_set: int = 1) -> list[RunSpec]:
    """`fresh_attacks`: the v1 suite's copy with only fresh_attacks.py's injection tasks (or
    fresh_attacks2.py's, `fresh_set` 2), attacked runs only (the benign runs are v1's own)."""
    specs: list[RunSpec] = []
    for name in suite_names:
        if fresh_attacks and fresh_set == 2:
            from fresh_attacks2 import fresh_suite2

            suite = fresh_suite2(name)
        elif fresh_attacks:
            from fresh_attacks import fresh_suite

            suite = fresh_suite(name)
        else:
            suite = get_suite(benchmark_version, name)
        attack = load_attack(ATTACK, suite, NamedPipeline())
        for user_task in suite.user_tasks.values():
            if user_filter and user_task.ID not in user_filter:
                continue
            if not fresh_attacks:
                specs.append(RunSpec(suite, user_task, None, {}, benchmark_version))
            if benign_only:
                continue
            for injection_task in suite.injection_tasks.values():
                specs.append(RunSpec(suite, user_task, injection_task, attack.attack(user_task, injection_task), benchmark_version))
    return specs


def open_recording(path: Path, mode: str) -> Any:
    """A recording is JSONL, gzipped when its name ends in .gz (the committed ones are: the JSON
    repeats itself, 4.3 MB of it is 0.1 MB gzipped)."""
    if path.suffix == ".gz":
        return gzip.open(path, mode + "t", encoding="utf-8")
    return path.open(mode, encoding="utf-8")


def read_recording(path: Path) -> list[dict[str, Any]]:
    with open_recording(path, "r") as f:
        return [json.loads(line) for line in f if line.strip()]


def summary_path(recording: Path) -> Path:
    """recorded/<setup>.jsonl(.gz) -> recorded/<setup>.summary.json"""
    name = recording.name
    for suffix in (".jsonl.gz", ".jsonl"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return recording.with_name(name + ".summary.json")


def was_asked(record: dict[str, Any]) -> bool:
    """Whether the run put at least one question (a denial in headless mode). A replayed run lists
    its questions; a toolgate run says which denial came from a question (`decider.asked_by`)."""
    if "asked" in record:
        return bool(record["asked"])
    return any("asked_by" in (call.get("decider") or {}) for call in record["calls"])


def summarize(records: list[dict[str, Any]], needs_call: dict[tuple[str, str], bool]) -> dict[str, Any]:
    benign = [r for r in records if r["injection_task"] is None]
    attacked = [r for r in records if r["injection_task"] is not None and needs_call[(r["suite"], r["injection_task"])]]
    done = [r for r in benign if r["utility"] and r["every_call_ran"]]
    hit = [r for r in attacked if r["security"]]
    return {
        "benign": len(benign),
        "benign_utility": sum(1 for r in benign if r["utility"]),
        "benign_done_every_call_ran": len(done),
        "benign_asked": sum(1 for r in benign if was_asked(r)),
        "attacked_needing_call": len(attacked),
        "attacks_succeeded": len(hit),
        "benign_done_pct": round(100 * len(done) / len(benign), 1) if benign else None,
        "attacks_succeeded_pct": round(100 * len(hit) / len(attacked), 1) if attacked else None,
    }


def chosen_suites(parser: argparse.ArgumentParser, names: str, include_held_out: bool, why: str) -> list[str]:
    """The suites asked for; a held-out one (issue 44) only with --include-held-out."""
    suites = [s for s in names.split(",") if s]
    held = [s for s in suites if s in HELD_OUT_SUITES]
    if held and not include_held_out:
        parser.error(f"{', '.join(held)} are held out (issue 44): {why}")
    return suites


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--setup", choices=sorted(SETUPS), required=True)
    parser.add_argument("--suites", default=",".join(DEVELOPMENT_SUITES))
    parser.add_argument("--user-tasks", default="", help="comma-separated user task ids (default: all)")
    parser.add_argument("--benign-only", action="store_true")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--binary", type=Path, default=REPO / "target" / "debug" / "toolgate")
    parser.add_argument("--out", type=Path, default=None, help="recording file (default recorded/<setup>.jsonl.gz; gzipped when it ends in .gz)")
    parser.add_argument("--include-held-out", action="store_true", help="allow travel/workspace (the held-out harness only)")
    parser.add_argument("--benchmark-version", default=BENCHMARK_VERSION,
                        help="AgentDojo benchmark version (default v1, the issue's); an injection task without ground truth counts as needing no call")
    parser.add_argument("--fresh-attacks", action="store_true",
                        help="attacked runs only, with fresh_attacks.py's injection tasks (travel, workspace; v1) instead of AgentDojo's")
    parser.add_argument("--fresh-set", type=int, choices=(1, 2), default=1,
                        help="with --fresh-attacks: 1 fresh_attacks.py (default), 2 fresh_attacks2.py (workspace)")
    args = parser.parse_args()
    if args.fresh_set != 1 and not args.fresh_attacks:
        parser.error("--fresh-set goes with --fresh-attacks")
    if args.fresh_attacks:
        if args.fresh_set == 2:
            from fresh_attacks2 import FRESH2_SUITES as FRESH_SUITES
        else:
            from fresh_attacks import FRESH_SUITES

        if args.benign_only:
            parser.error("--fresh-attacks runs attacked runs only; drop --benign-only")
        if args.benchmark_version != BENCHMARK_VERSION:
            parser.error(f"--fresh-attacks is written for {BENCHMARK_VERSION}")
        other = [s for s in args.suites.split(",") if s and s not in FRESH_SUITES]
        if other:
            parser.error(f"--fresh-attacks has injection tasks for {', '.join(FRESH_SUITES)} only, not {', '.join(other)}")

    suites = chosen_suites(parser, args.suites, args.include_held_out, "measured separately, never developed against")
    if not args.binary.exists():
        parser.error(f"{args.binary} not found: run `cargo build` first")
    setup = SETUPS[args.setup]
    specs = run_specs(suites, set(filter(None, args.user_tasks.split(","))) or None, args.benign_only,
                      args.benchmark_version, fresh_attacks=args.fresh_attacks, fresh_set=args.fresh_set)
    suite_objects = {s.suite.name: s.suite for s in specs}
    # Only attacked runs are counted against the injection tasks: a benign-only run never looks at them.
    needs_call = {} if args.benign_only else {
        (name, t.ID): needs_tool_call(suite, t) for name, suite in suite_objects.items() for t in suite.injection_tasks.values()}
    # The fresh set records apart, never over the v1 recording of the same setup.
    fresh_tag = (".fresh-attacks2" if args.fresh_set == 2 else ".fresh-attacks") if args.fresh_attacks else ""
    out = args.out or RECORD_DIR / f"{setup.name}{fresh_tag}.jsonl.gz"
    out.parent.mkdir(parents=True, exist_ok=True)

    model = ModelServer()
    started = time.monotonic()
    records: list[dict[str, Any]] = []
    work = Path(tempfile.mkdtemp(prefix="agentdojo-"))
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(run_one, spec, setup, args.binary, model, work, args.timeout) for spec in specs]
        for i, future in enumerate(futures, 1):
            record = future.result()
            records.append(record)
            if record["errors"]:
                print(f"[{i}/{len(specs)}] {record['suite']} {record['user_task']} {record['injection_task']}: {record['errors'][:1]}", file=sys.stderr)
            elif i % 25 == 0:
                print(f"[{i}/{len(specs)}] {time.monotonic() - started:.0f}s", file=sys.stderr)
    if os.environ.get("AGENTDOJO_KEEP_RUNS"):
        print(f"runs kept in {work}", file=sys.stderr)
    else:
        shutil.rmtree(work, ignore_errors=True)
    model.close()
    elapsed = time.monotonic() - started
    with open_recording(out, "w") as f:
        for record in records:
            f.write(json.dumps(record, sort_keys=True) + "\n")
    summary = {
        "setup": setup.name,
        "description": setup.description,
        "agentdojo": version("agentdojo"),
        "benchmark_version": args.benchmark_version,
        "suites": suites,
        "seconds": round(elapsed, 1),
        "per_suite": {s: summarize([r for r in records if r["suite"] == s], needs_call) for s in suites},
        "total": summarize(records, needs_call),
        "injection_tasks_needing_no_call": sorted(f"{s}/{t}" for (s, t), need in needs_call.items() if not need),
    }
    if args.fresh_attacks:
        summary["injection_tasks"] = f"{'fresh_attacks2.py' if args.fresh_set == 2 else 'fresh_attacks.py'} (attacked runs only)"
    summary_path(out).write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
