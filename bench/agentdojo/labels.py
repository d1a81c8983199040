"""Flow labels over tool results and call arguments (decision 0096): the analysis the gate would
do, in Python, so candidate rules can be judged offline before any of it is written in Rust.

A result is read as a tree (JSON, else YAML, else one string). Each string leaf is either
**free text** (prose: a memo, a message body, a file's or a page's content, or any value with
several words or a line break, whatever its key) or **record data** (an atomic value: an id, an
IBAN, a name, a date, an amount, a URL field). Tokens worth tracking are taken from both:
URLs and hosts, e-mail addresses, account numbers (IBAN-like), long digit runs. An argument is
then judged by the tokens it carries and by where each token was seen before the call.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterator

import yaml

# File names look like hosts (`bill-2023.txt`); these endings are files, not top-level domains.
FILE_ENDINGS = {
    "txt", "pdf", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "csv", "json", "md", "py", "rs",
    "png", "jpg", "jpeg", "gif", "zip", "tar", "gz", "html", "htm", "xml", "yaml", "yml", "log", "js",
    "ts", "sh", "toml", "ics", "eml",
}
EMAIL = re.compile(r"[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)+", re.I)
URL = re.compile(r"(?:https?://)?(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,24}(?::\d+)?(?:/[^\s'\"<>)\]]*)?", re.I)
ACCOUNT = re.compile(r"\b[a-z]{2}\d{2}[a-z0-9]{10,30}\b", re.I)
# An account printed in groups of four (`LT60 3250 0447 1928 3345`), compared without spaces.
GROUPED_ACCOUNT = re.compile(r"\b[a-z]{2}\d{2}(?: [a-z0-9]{4}){2,7}(?: [a-z0-9]{1,3})?\b", re.I)
DIGITS = re.compile(r"(?<![\d.])\d{8,}(?![\d.])")
WORD = re.compile(r"\S+")
# Keys whose values are prose even when short (a one-word memo can still carry an order).
PROSE_KEYS = re.compile(r"(subject|body|content|text|message|description|memo|note|comment|review|snippet|summary|bio|about)", re.I)
FREE_TEXT_WORDS = 4


@dataclass(frozen=True)
class Token:
    kind: str  # "url" | "email" | "account" | "digits"
    value: str  # normalised


def normalise_url(value: str) -> str:
    value = value.lower().strip().rstrip(".,;:!?")
    value = re.sub(r"^https?://", "", value)
    return value.rstrip("/")


def tokens_in(text: str) -> set[Token]:
    """The tracked tokens in a string, normalised for case and punctuation."""
    found: set[Token] = set()
    emails = list(EMAIL.finditer(text))
    for m in emails:
        found.add(Token("email", m.group(0).lower()))
    masked = EMAIL.sub(" ", text)
    for m in URL.finditer(masked):
        url = normalise_url(m.group(0))
        host = url.split("/")[0].split(":")[0]
        if host.rsplit(".", 1)[-1] in FILE_ENDINGS:
            continue
        found.add(Token("url", url))
        if "/" in url:
            found.add(Token("url", host))
    accounts = [m.group(0) for m in ACCOUNT.finditer(text)]
    accounts += [m.group(0).replace(" ", "") for m in GROUPED_ACCOUNT.finditer(text)]
    for account in accounts:
        if any(c.isdigit() for c in account[4:]):
            found.add(Token("account", account.upper()))
    for m in DIGITS.finditer(text):
        found.add(Token("digits", m.group(0)))
    return found


def parse_result(text: str) -> Any:
    """A result as data: JSON, else YAML (AgentDojo's tools answer in YAML), else the string."""
    try:
        return json.loads(text)
    except (json.JSONDecodeError, ValueError):
        pass
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return data if isinstance(data, (dict, list)) else text


def leaves(data: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """(key, string value) for every scalar leaf of a result; a mapping's keys are leaves too
    (decision 0103: a result keyed by name carries the names as its data)."""
    if isinstance(data, dict):
        for k, v in data.items():
            yield key, str(k)
            yield from leaves(v, str(k))
    elif isinstance(data, list):
        for item in data:
            yield from leaves(item, key)
    elif data is not None:
        yield key, str(data)


def is_free_text(key: str, value: str) -> bool:
    return "\n" in value.strip() or len(WORD.findall(value)) >= FREE_TEXT_WORDS or bool(PROSE_KEYS.search(key))


def normalise_value(value: Any) -> str:
    return re.sub(r"\s+", " ", str(value).strip().lower())


@dataclass
class Seen:
    """Where values were seen before a call: in free text or as record data of a result (with the
    call index and key), and in the person's request."""

    text_tokens: dict[Token, list[tuple[int, str]]] = field(default_factory=dict)
    record_tokens: dict[Token, list[tuple[int, str]]] = field(default_factory=dict)
    # Whole atomic leaves (normalised) and whole free-text leaves, for value-level matching.
    record_values: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    text_blobs: list[tuple[int, str, str]] = field(default_factory=list)

    def add_result(self, call_index: int, text: str, own_args: Any = None) -> None:
        """Labels what a result carries. What the call's own arguments put there (a sent
        message echoed back, a confirmation naming the recipient) keeps its own provenance:
        an echo is not a new source."""
        own_values = [normalise_value(v) for _, v in argument_strings(own_args)]
        own_values = [v for v in own_values if v]
        own_tokens: set[Token] = set()
        for _, v in argument_strings(own_args):
            own_tokens |= tokens_in(v)
        for key, value in leaves(parse_result(text)):
            if is_free_text(key, value):
                blob = normalise_value(value)
                for own in own_values:
                    blob = blob.replace(own, " ")
                self.text_blobs.append((call_index, key, blob))
                for token in tokens_in(value) - own_tokens:
                    self.text_tokens.setdefault(token, []).append((call_index, key))
            else:
                if normalise_value(value) not in own_values:
                    self.record_values.setdefault(normalise_value(value), []).append((call_index, key))
                for token in tokens_in(value) - own_tokens:
                    self.record_tokens.setdefault(token, []).append((call_index, key))


def argument_strings(args: Any, name: str = "") -> Iterator[tuple[str, str]]:
    """(argument name, string value) for every scalar in a call's arguments."""
    if isinstance(args, dict):
        for k, v in args.items():
            yield from argument_strings(v, str(k))
    elif isinstance(args, list):
        for item in args:
            yield from argument_strings(item, name)
    elif args is not None:
        yield name, str(args)
