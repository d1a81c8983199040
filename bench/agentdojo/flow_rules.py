"""Candidate flow rules, judged offline by replay.py.

A rule is a function `rule(call, history, request) -> Verdict`:
- `call`: {"function": name, "args": {...}} about to run;
- `history`: the session's earlier calls (Step: function, args, ran, result text when it ran);
- `request`: the person's message (trusted).
Every result is untrusted (the suite's server has no `"trust": "trusted"` entry). A Verdict that
asks is a denial in headless mode, as in the measured setups.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from labels import Seen, argument_strings, normalise_value, tokens_in
from mcp_server import ADDITIVE_PREFIXES, READ_PREFIXES


@dataclass
class Step:
    function: str
    args: dict[str, Any]
    ran: bool
    result: str | None


@dataclass
class Verdict:
    ask: bool
    reason: str = ""


Rule = Callable[[dict[str, Any], list[Step], str], Verdict]

ALLOW = Verdict(False)
CREDENTIAL_ARG = re.compile(r"(password|passwd|passphrase|secret|token|api_?key|pin|otp)", re.I)


def allow_all(call: dict[str, Any], history: list[Step], request: str) -> Verdict:
    """Today's first row: every tool of the server allowed, auto mode."""
    return ALLOW


def string_match(call: dict[str, Any], history: list[Step], request: str) -> Verdict:
    """The obvious rule the issue measured: ask when any argument string appeared in an earlier
    tool result and not in the person's request."""
    results = [s.result.lower() for s in history if s.ran and s.result]
    asked = request.lower()
    for name, value in argument_strings(call["args"]):
        v = value.strip().lower()
        if v and v not in asked and any(v in r for r in results):
            return Verdict(True, f"{name}={value!r} appeared in an earlier result")
    return ALLOW


def seen_before(history: list[Step]) -> Seen:
    seen = Seen()
    for index, step in enumerate(history):
        if step.ran and step.result:
            seen.add_result(index, step.result, step.args)
    return seen


def flow_rule(person_overrides: bool) -> Rule:
    """The candidate of decision 0096.

    - An argument carrying a tracked token (URL or host, e-mail address, account number, long
      digit run) that appeared in the **free text** of an untrusted result before the call asks.
      The same token seen only as **record data** (a sender field, an id, a URL field) does not.
    - A credential argument (password, secret, token, key, PIN) whose value appeared anywhere in
      untrusted content asks.
    - `person_overrides`: a token the person's request names is trusted even if free text also
      carried it. False: free text taints it all the same (the request cannot tell which of the
      two the model followed).
    """

    request_tokens_cache: dict[str, set[Any]] = {}

    def rule(call: dict[str, Any], history: list[Step], request: str) -> Verdict:
        seen = seen_before(history)
        person = request_tokens_cache.setdefault(request, tokens_in(request))
        for name, value in argument_strings(call["args"]):
            for token in sorted(tokens_in(value), key=lambda t: (t.kind, t.value)):
                if person_overrides and token in person:
                    continue
                sources = seen.text_tokens.get(token)
                if sources:
                    index, key = sources[0]
                    return Verdict(True, f"{name}: {token.kind} {token.value} first appeared in free text "
                                         f"({key or 'text'}) of the result of {history[index].function} (call {index + 1})")
            if CREDENTIAL_ARG.search(name):
                v = normalise_value(value)
                if v and (v in seen.record_values or any(v in blob for _, _, blob in seen.text_blobs)):
                    return Verdict(True, f"{name}: a credential value that appeared in untrusted content")
        return ALLOW

    return rule




def whole_value_in_text(value: str, seen: Seen) -> tuple[int, str] | None:
    """Where an argument's whole value first appeared, word-bounded, in untrusted free text."""
    v = normalise_value(value)
    if not v:
        return None
    pattern = re.compile(r"(?<![a-z0-9])" + re.escape(v) + r"(?![a-z0-9])")
    for index, key, blob in seen.text_blobs:
        if pattern.search(blob):
            return index, key
    return None


def flow_values_rule(base: Rule, reads_exempt: bool = True, min_len: int = 1) -> Rule:
    """`base`, and for a call that changes something (not a read by name), any argument whose
    whole value appeared in untrusted free text and not in the request asks: names and short ids
    carry no shape, so only the whole value can be matched."""

    def rule(call: dict[str, Any], history: list[Step], request: str) -> Verdict:
        verdict = base(call, history, request)
        if verdict.ask or (reads_exempt and call["function"].startswith(READ_PREFIXES)):
            return verdict
        seen = seen_before(history)
        asked = normalise_value(request)
        for name, value in argument_strings(call["args"]):
            v = normalise_value(value)
            if len(v) < min_len:
                continue
            if re.search(r"(?<![a-z0-9])" + re.escape(v) + r"(?![a-z0-9])", asked):
                continue
            where = whole_value_in_text(value, seen)
            if where:
                index, key = where
                return Verdict(True, f"{name}={value!r} appeared in free text ({key or 'text'}) of the result of "
                                     f"{history[index].function} (call {index + 1})")
        return ALLOW

    return rule


NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")


def canonical(value: str) -> str:
    """A value as tier 2 compares it: normalised, and a number in one form (10.0 = 10)."""
    v = normalise_value(value)
    if NUMBER.match(v):
        v = v.rstrip("0").rstrip(".") if "." in v else v
    return v


def word_in(v: str, blob: str) -> bool:
    """`v` inside `blob`, not as part of a longer word or number."""
    start = 0
    while (at := blob.find(v, start)) >= 0:
        end = at + len(v)
        before = blob[at - 1] if at > 0 else " "
        before2 = blob[at - 2] if at > 1 else " "
        after = blob[end] if end < len(blob) else " "
        after2 = blob[end + 1] if end + 1 < len(blob) else " "
        cont = after.isalnum() or (after in ".," and after2.isdigit())
        cont_before = before.isalnum() or (before in ".," and before2.isdigit())
        if not cont_before and not cont:
            return True
        start = at + 1
    return False


def is_destructive(function: str) -> bool:
    """What the harness's server says of its tool (mcp_server.annotations): not a read and not
    marked `destructiveHint: false`."""
    return not function.startswith(READ_PREFIXES + ADDITIVE_PREFIXES)


def flow_names_rule(base: Rule, max_len: int = 80, hinted_reads: bool = False, hinted_destructive: bool = False,
                    steered_lookups: bool = False) -> Rule:
    """Tier 2 as the gate builds it: a call (reads too) whose argument's whole value (up to
    max_len characters, one line; booleans aside) appeared in untrusted free text, never as
    record data, and not in the request, asks. `hinted_destructive`: for a destructive tool
    (decision 0104) record data does not excuse a value the free text also names.
    `steered_lookups` (decision 0105): a call whose arguments `base` or this tier would taint
    steers its result; a value only steered results hold as record data asks."""

    def values_verdict(args: dict[str, Any], history: list[Step], request: str, destructive: bool,
                       steered: set[int]) -> Verdict:
        seen = seen_before(history)
        records: set[str] = set()
        steered_records: dict[str, int] = {}
        for key, places in seen.record_values.items():
            if any(index not in steered for index, _ in places):
                records.add(canonical(key))
            else:
                steered_records.setdefault(canonical(key), places[0][0])
        asked = normalise_value(request)
        for name, value in argument_strings(args):
            if isinstance(value, bool) or value in ("True", "False"):
                continue
            raw = str(value).strip()
            v = canonical(value)
            if not v or len(raw) > max_len or "\n" in raw or word_in(v, asked):
                continue
            recorded = v in records
            if recorded and not destructive:
                continue
            for index, key, blob in seen.text_blobs:
                if word_in(v, blob):
                    return Verdict(True, f"{name}={value!r} appeared in free text ({key or 'text'}) of the result of "
                                         f"{history[index].function} (call {index + 1})")
            if not recorded and v in steered_records:
                index = steered_records[v]
                return Verdict(True, f"{name}={value!r} came from the result of {history[index].function} "
                                     f"(call {index + 1}), a lookup steered by untrusted content")
        return ALLOW

    def steered_steps(history: list[Step], request: str) -> set[int]:
        steered: set[int] = set()
        if not steered_lookups:
            return steered
        for index, step in enumerate(history):
            if not step.ran:
                continue
            before = history[:index]
            call = {"function": step.function, "args": step.args}
            if base(call, before, request).ask or values_verdict(step.args, before, request, False, steered).ask:
                steered.add(index)
        return steered

    def rule(call: dict[str, Any], history: list[Step], request: str) -> Verdict:
        verdict = base(call, history, request)
        if verdict.ask or (hinted_reads and call["function"].startswith(READ_PREFIXES)):
            return verdict
        destructive = hinted_destructive and is_destructive(call["function"])
        return values_verdict(call["args"], history, request, destructive, steered_steps(history, request))

    return rule


RULES: dict[str, Rule] = {
    "allow-all": allow_all,
    "string-match": string_match,
    "flow": flow_rule(person_overrides=False),
    "flow-person-overrides": flow_rule(person_overrides=True),
    "flow+values": flow_values_rule(flow_rule(person_overrides=False)),
    "flow+values-all": flow_values_rule(flow_rule(person_overrides=False), reads_exempt=False),
    "flow+names": flow_names_rule(flow_rule(person_overrides=False)),
    "names-only": flow_names_rule(allow_all),
    # As toolgate runs it on the harness's server, which marks the read tools readOnlyHint.
    "flow+names-hinted": flow_names_rule(flow_rule(person_overrides=False), hinted_reads=True),
    # And the server marks its additive tools destructiveHint: false (decision 0104).
    "flow+names-hinted-destructive": flow_names_rule(flow_rule(person_overrides=False), hinted_reads=True, hinted_destructive=True),
    # And a lookup steered by untrusted content taints what it returns (decision 0105).
    "flow+names-hinted-destructive-steered": flow_names_rule(flow_rule(person_overrides=False), hinted_reads=True,
                                                             hinted_destructive=True, steered_lookups=True),
    "flow+values-all-3": flow_values_rule(flow_rule(person_overrides=False), reads_exempt=False, min_len=3),
}
