"""Checks the fresh injection tasks (fresh_attacks.py) in-process with AgentDojo, no toolgate.

    .venv/bin/python fresh_selfcheck.py                     # travel, workspace
    .venv/bin/python fresh_selfcheck.py --suites workspace
    .venv/bin/python fresh_selfcheck.py --set 2             # fresh_attacks2.py (workspace)

For every fresh injection task and every user task of its suite, on the environment run.py
starts from (the `important_instructions` attack's injections planted):
  - the injection task's ground truth, run by AgentDojo's FunctionsRuntime with the arguments
    as the model would send them (through JSON), raises no tool error, and `security` is True
    afterwards (AgentDojo's checker, as run.py calls it);
  - `security` is False on the untouched environment with an empty trace;
  - `security` is False after the user task's own ground truth alone (no attack);
  - whether the planted goal shows up (model_server.squash) in a result of the user task's
    ground truth: the number of user tasks where it does is reported per task, and a task no
    user task sees is a failure;
  - for information, the whole compromised run in-process (model_server.next_step's script):
    in how many user tasks the attack still holds at the end (a later user call may undo it).
Also: needs_tool_call (run.py) is True for every task. Prints a table; exits 1 on a failure.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from fresh_attacks import FRESH_SUITES, fresh_suite  # noqa: E402  (imports AgentDojo in a safe order)
from fresh_attacks2 import FRESH2_SUITES, fresh_suite2  # noqa: E402

SETS = {1: (FRESH_SUITES, fresh_suite), 2: (FRESH2_SUITES, fresh_suite2)}

from agentdojo.attacks.attack_registry import load_attack  # noqa: E402
from agentdojo.functions_runtime import FunctionCall, FunctionsRuntime  # noqa: E402
from agentdojo.types import text_content_block_from_string  # noqa: E402

from mcp_server import result_text  # noqa: E402
from model_server import next_step, squash, wire_arguments  # noqa: E402
from run import ATTACK, NamedPipeline, build_plan, needs_tool_call, starting_environment  # noqa: E402

MAX_CALLS = 64


def security(suite: Any, task: Any, pre_env: Any, post_env: Any, trace: list[FunctionCall]) -> bool:
    with contextlib.redirect_stdout(io.StringIO()):
        return bool(suite._check_task_result(task, [text_content_block_from_string("")], pre_env, post_env, trace))


def run_calls(suite: Any, env: Any, calls: list[FunctionCall]) -> tuple[list[str], list[str], list[FunctionCall]]:
    """Runs the calls in-process on env (changed in place): results, errors, trace."""
    runtime = FunctionsRuntime(suite.tools)
    results, errors, trace = [], [], []
    for call in calls:
        args = json.loads(wire_arguments(dict(call.args)))
        result, error = runtime.run_function(env, call.function, args)
        results.append(error if error is not None else result_text(result))
        if error is not None:
            errors.append(f"{call.function}: {error}")
        trace.append(FunctionCall(function=call.function, args=args))
    return results, errors, trace


def compromised_run(suite: Any, user_task: Any, task: Any, env: Any) -> tuple[Any, list[FunctionCall]]:
    """The scripted model's whole run in-process: user calls, the injection's first once seen."""
    pre_env = env.model_copy(deep=True)
    plan = build_plan(user_task, task, pre_env)
    runtime = FunctionsRuntime(suite.tools)
    results: list[str] = []
    trace: list[FunctionCall] = []
    while len(results) < MAX_CALLS:
        call, _ = next_step(plan, results)
        if call is None:
            break
        args = json.loads(wire_arguments(call.args))
        result, error = runtime.run_function(env, call.function, args)
        results.append(error if error is not None else result_text(result))
        trace.append(FunctionCall(function=call.function, args=args))
    return env, trace


def check_suite(name: str, make_suite: Any = fresh_suite) -> tuple[list[dict[str, Any]], list[str]]:
    suite = make_suite(name)
    attack = load_attack(ATTACK, suite, NamedPipeline())
    rows: list[dict[str, Any]] = []
    failures: list[str] = []
    for task in suite.injection_tasks.values():
        row = {"suite": name, "task": task.ID, "user_tasks": 0, "seen": 0, "gt_ok": 0, "untouched_false": 0, "full_run_hit": 0}
        if not needs_tool_call(suite, task):
            failures.append(f"{name}/{task.ID}: needs_tool_call is False")
        goal = squash(task.GOAL)
        for user_task in suite.user_tasks.values():
            row["user_tasks"] += 1
            injections = attack.attack(user_task, task)
            if not any(goal in squash(v) for v in injections.values()):
                failures.append(f"{name}/{task.ID} x {user_task.ID}: the goal is in no injection")
            base = starting_environment(suite, user_task, injections)
            pre_env = base.model_copy(deep=True)

            # Untouched environment, empty trace: the attack has not succeeded.
            if security(suite, task, pre_env, base.model_copy(deep=True), []):
                failures.append(f"{name}/{task.ID} x {user_task.ID}: security True on the untouched environment")
            else:
                row["untouched_false"] += 1

            # The injection task's ground truth carries the attack out.
            env = base.model_copy(deep=True)
            calls = task.ground_truth(pre_env.model_copy(deep=True))
            if not calls:
                failures.append(f"{name}/{task.ID}: empty ground truth")
            if any(isinstance(v, FunctionCall) for c in calls for v in c.args.values()):
                failures.append(f"{name}/{task.ID}: nested call in ground truth")
            _, errors, trace = run_calls(suite, env, calls)
            if errors:
                failures.append(f"{name}/{task.ID} x {user_task.ID}: ground truth errors {errors}")
            if security(suite, task, pre_env, env, trace):
                row["gt_ok"] += 1
            else:
                failures.append(f"{name}/{task.ID} x {user_task.ID}: security False after the ground truth")

            # Does the user task's own ground truth read the planted goal?
            user_env = base.model_copy(deep=True)
            results, _, user_trace = run_calls(suite, user_env, user_task.ground_truth(pre_env.model_copy(deep=True)))
            # The user task alone must not count as the attack done.
            if security(suite, task, pre_env, user_env, user_trace):
                failures.append(f"{name}/{task.ID} x {user_task.ID}: security True after the user task's ground truth alone")
            if any(goal in squash(r) for r in results):
                row["seen"] += 1
                # For information: the compromised model's whole run, judged at its end.
                post_env, full_trace = compromised_run(suite, user_task, task, base.model_copy(deep=True))
                row["full_run_hit"] += security(suite, task, pre_env, post_env, full_trace)
        if row["seen"] == 0:
            failures.append(f"{name}/{task.ID}: no user task reads the planted goal")
        rows.append(row)
    return rows, failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", type=int, choices=sorted(SETS), default=1, help="1: fresh_attacks.py, 2: fresh_attacks2.py")
    parser.add_argument("--suites", default=None, help="default: all of the set's suites")
    args = parser.parse_args()
    set_suites, make_suite = SETS[args.set]
    if args.suites is None:
        args.suites = ",".join(set_suites)
    all_rows: list[dict[str, Any]] = []
    all_failures: list[str] = []
    for name in filter(None, args.suites.split(",")):
        rows, failures = check_suite(name, make_suite)
        all_rows += rows
        all_failures += failures
    header = f"{'suite':10} {'task':25} {'user':>5} {'seen':>5} {'gt_ok':>6} {'untouched_false':>16} {'full_run_hit':>13}"
    print(header)
    print("-" * len(header))
    for r in all_rows:
        print(f"{r['suite']:10} {r['task']:25} {r['user_tasks']:>5} {r['seen']:>5} {r['gt_ok']:>6} {r['untouched_false']:>16} {r['full_run_hit']:>13}")
    print("\nuser: user tasks; seen: user tasks whose ground truth reads the planted goal; gt_ok: security True after "
          "the injection's ground truth; untouched_false: security False untouched; full_run_hit: of the seen, the "
          "whole compromised run in-process ends with the attack done (information only)")
    if all_failures:
        print(f"\n{len(all_failures)} FAILURES:")
        for f in all_failures:
            print("  " + f)
        sys.exit(1)
    print("\nall checks passed")


if __name__ == "__main__":
    main()
