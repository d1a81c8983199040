#!/usr/bin/env python3
"""Builds assets/search/wordllama-l2-supercat-128.bin, the static token embeddings that
tool search (src/pool/search/semantic.rs) ranks by meaning with.

The source is WordLlama's `l2_supercat` model (MIT licence), which its PyPI wheel carries:
a 32,000-token vocabulary (Llama 2's) with a 256-dimension embedding per token, trained so
that a prefix of the dimensions is itself a usable embedding. This keeps the first 128
dimensions and quantises each token's vector to signed bytes with its own scale, which
measured the same recall as the full float16 model (docs/BENCHMARKS.md, run 5).

Usage (standard library only; the wheel comes from PyPI):
    pip download --no-deps wordllama==0.4.0.post1 -d /tmp/wl
    python3 scripts/build_search_model.py /tmp/wl/wordllama-0.4.0.post1-*.whl

Output layout (little-endian), read by semantic.rs:
    8 bytes  magic b"TGWL0001"
    u32      vocabulary size V
    u32      dimensions D
    V times  u16 length + UTF-8 bytes of the token (index = token id)
    V f32    per-token scale
    V*D i8   quantised vectors, row-major
"""

import json
import struct
import sys
import zipfile
from pathlib import Path

DIMENSIONS = 128
WEIGHTS = "wordllama/weights/l2_supercat_256.safetensors"
TOKENIZER = "wordllama/tokenizers/l2_supercat_tokenizer_config.json"
OUT = Path(__file__).resolve().parent.parent / "assets/search/wordllama-l2-supercat-128.bin"


def read_safetensors(blob: bytes):
    (header_len,) = struct.unpack_from("<Q", blob, 0)
    header = json.loads(blob[8 : 8 + header_len])
    (name,) = [k for k in header if k != "__metadata__"]
    entry = header[name]
    if entry["dtype"] != "F16":
        raise SystemExit(f"expected float16 weights, found {entry['dtype']}")
    rows, cols = entry["shape"]
    start, end = entry["data_offsets"]
    data = blob[8 + header_len + start : 8 + header_len + end]
    return rows, cols, data


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    with zipfile.ZipFile(sys.argv[1]) as wheel:
        rows, cols, data = read_safetensors(wheel.read(WEIGHTS))
        tokenizer = json.loads(wheel.read(TOKENIZER))
    vocab = tokenizer["model"]["vocab"]
    tokens = [""] * rows
    for token, token_id in vocab.items():
        if token_id < rows:
            tokens[token_id] = token
    out = bytearray(b"TGWL0001")
    out += struct.pack("<II", rows, DIMENSIONS)
    for token in tokens:
        raw = token.encode("utf-8")
        out += struct.pack("<H", len(raw)) + raw
    scales = []
    vectors = bytearray()
    row_format = f"<{cols}e"
    for r in range(rows):
        row = struct.unpack_from(row_format, data, r * cols * 2)[:DIMENSIONS]
        peak = max(abs(x) for x in row) or 1.0
        scale = peak / 127.0
        scales.append(scale)
        vectors += struct.pack(
            f"<{DIMENSIONS}b", *(max(-127, min(127, round(x / scale))) for x in row)
        )
    out += struct.pack(f"<{rows}f", *scales)
    out += vectors
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(bytes(out))
    print(f"{OUT}: {rows} tokens x {DIMENSIONS} dimensions, {len(out)} bytes")


if __name__ == "__main__":
    main()
