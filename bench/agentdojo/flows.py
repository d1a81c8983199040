"""Where the arguments of the calls come from, benign runs against attacks (decision 0096).

    bench/agentdojo/.venv/bin/python bench/agentdojo/flows.py recorded/allow-all-auto.jsonl.gz > flows.md

Replays every recorded run with nothing denied (replay.py) and labels each argument of each call:
`person` (the request names it), `text` (it appeared in the free text of an earlier result),
`record` (it appeared as record data of an earlier result), `new` (none of these: the model made
it, e.g. a sum or a summary). Labels are given for the whole value and for the tracked tokens in
it (URLs, e-mail addresses, account numbers). Prints Markdown tables: arguments of the user
task's calls in benign runs (the intended flows), arguments of the calls the planted text caused
in attacked runs, and which result fields are free text and which record data.
"""

from __future__ import annotations

import re
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from flow_rules import allow_all  # noqa: E402
from labels import is_free_text, leaves, normalise_value, parse_result, tokens_in  # noqa: E402
from replay import replay_one  # noqa: E402
from run import BENCHMARK_VERSION, get_suite, read_recording  # noqa: E402


def bounded(needle: str, haystack: str) -> bool:
    return bool(needle) and re.search(r"(?<![a-z0-9])" + re.escape(needle) + r"(?![a-z0-9])", haystack) is not None


def labels_of(value: str, request: str, earlier: list[tuple[str, str, dict[str, Any]]]) -> str:
    """The provenance labels of one argument value, given the earlier calls (function, result
    text, arguments); a result that only echoes its own call's argument is no source."""
    v = normalise_value(value)
    found: set[str] = set()
    if bounded(v, normalise_value(request)):
        found.add("person")
    value_tokens = tokens_in(value)
    if value_tokens & tokens_in(request):
        found.add("person")
    for function, text, args in earlier:
        if any(normalise_value(a) == v for a in map(str, args.values())):
            continue
        for key, leaf in leaves(parse_result(text)):
            kind = "text" if is_free_text(key, leaf) else "record"
            leaf_n = normalise_value(leaf)
            if (kind == "record" and leaf_n == v) or (kind == "text" and bounded(v, leaf_n)) or (value_tokens & tokens_in(leaf)):
                found.add(f"{kind}({function}.{key or '-'})")
    return ", ".join(sorted(found)) or "new"


def main() -> None:
    recording = Path(sys.argv[1])
    records = read_recording(recording)
    suites = {name: get_suite(version, name) for name, version in sorted({(r["suite"], r.get("benchmark_version", BENCHMARK_VERSION)) for r in records})}
    # (suite, function, argument) -> Counter of label strings, for benign user calls and attack calls.
    benign: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    attack: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    fields: dict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    for record in records:
        run = replay_one(record, allow_all, suites)
        request = suites[record["suite"]].get_user_task_by_id(record["user_task"]).PROMPT
        earlier: list[tuple[str, str, dict[str, Any]]] = []
        for call in run["calls"]:
            table = benign if record["injection_task"] is None and call["origin"] == "user" else attack if call["origin"] == "injection" else None
            if table is not None:
                for name, value in call["args"].items():
                    table[(record["suite"], call["function"], name)][labels_of(str(value), request, earlier)] += 1
            if record["injection_task"] is None:
                for key, leaf in leaves(parse_result(call["result"])):
                    fields[(record["suite"], call["function"], key or "(whole result)")]["free text" if is_free_text(key, leaf) else "record"] += 1
            earlier.append((call["function"], call["result"], call["args"]))

    def table(title: str, rows: dict[tuple[str, str, str], Counter[str]]) -> None:
        print(f"### {title}\n\n| suite | call | argument | where the value came from (calls) |\n|---|---|---|---|")
        for (suite, function, arg), counts in sorted(rows.items()):
            where = "; ".join(f"{label} ×{n}" for label, n in counts.most_common())
            print(f"| {suite} | {function} | {arg} | {where} |")
        print()

    table("Intended flows: the user task's calls in benign runs", benign)
    table("Attacks: the calls the planted text caused", attack)
    print("### Result fields (benign runs): free text or record data\n\n| suite | call | field | leaves |\n|---|---|---|---|")
    for (suite, function, key), counts in sorted(fields.items()):
        print(f"| {suite} | {function} | {key} | {', '.join(f'{k} ×{n}' for k, n in counts.most_common())} |")


if __name__ == "__main__":
    main()
