"""Shrinks toolgate's search model file (the output of build_search_model.py) for size.

Usage (standard library only):
    python3 scripts/shrink_search_model.py IN.bin OUT.bin [--dimensions N]

- Keeps the tokens written in ASCII (with SentencePiece's word-start marker). Tool names
  and descriptions are English: the 6,766 other tokens of Llama 2's vocabulary (Cyrillic,
  CJK, accented and other scripts, typographic punctuation, and the `<0xNN>` byte tokens,
  which never match text) were 0.95 MB of the binary. A word outside ASCII in a request
  ranks by its text alone (BM25), as an unknown word always did.
- `--dimensions N` keeps the first N dimensions (not used: at 112, five of the thirteen
  tool-search tests fell below their floors).
Why: docs/decisions/0087-bash-judged-by-a-grammar.md ("Size").
"""

import argparse
import struct
from pathlib import Path

MAGIC = b"TGWL0001"
WORD_START = "\u2581"


def kept(token: str) -> bool:
    if token.startswith("<0x") and token.endswith(">"):
        return False
    return all(ord(ch) < 128 or ch == WORD_START for ch in token)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("input", type=Path)
    ap.add_argument("output", type=Path)
    ap.add_argument("--dimensions", type=int, default=0)
    args = ap.parse_args()
    blob = args.input.read_bytes()
    assert blob[:8] == MAGIC, "not a toolgate search model"
    vocabulary, dimensions = struct.unpack_from("<II", blob, 8)
    keep_dims = args.dimensions or dimensions
    assert keep_dims <= dimensions
    at = 16
    tokens = []
    for _ in range(vocabulary):
        (length,) = struct.unpack_from("<H", blob, at)
        at += 2
        tokens.append(blob[at : at + length])
        at += length
    scales = struct.unpack_from(f"<{vocabulary}f", blob, at)
    at += 4 * vocabulary
    vectors = blob[at : at + vocabulary * dimensions]
    keep = [i for i, t in enumerate(tokens) if kept(t.decode("utf-8", "replace"))]
    out = bytearray(MAGIC)
    out += struct.pack("<II", len(keep), keep_dims)
    for i in keep:
        out += struct.pack("<H", len(tokens[i])) + tokens[i]
    out += struct.pack(f"<{len(keep)}f", *(scales[i] for i in keep))
    for i in keep:
        out += vectors[i * dimensions : i * dimensions + keep_dims]
    args.output.write_bytes(bytes(out))
    print(f"{vocabulary} -> {len(keep)} tokens, {dimensions} -> {keep_dims} dimensions, "
          f"{len(blob):,} -> {len(out):,} bytes")


if __name__ == "__main__":
    main()
