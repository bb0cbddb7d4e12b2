"""Helpers of the python/ tests: the package on sys.path (no install needed), a PNG writer
with a chosen filter per row (to test the reader on every filter), a writer of run-length rows
(inline plan masks, JSON mask files), and whether torch + CUDA are present. Used by every
test_*.py here."""

import os
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python"))


def png_bytes(rows, color=0, depth=8, filters=(0,), interlace=0):
    """rows: list of lists of sample values per row (already channel-interleaved). Each row is
    written with filters[y % len(filters)] (0 None, 1 Sub, 2 Up, 3 Average, 4 Paeth)."""
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[color]
    bps = depth // 8
    bpp = channels * bps
    height = len(rows)
    width = len(rows[0]) // channels
    raw_rows = []
    for r in rows:
        b = bytearray()
        for s in r:
            b += s.to_bytes(bps, "big")
        raw_rows.append(bytes(b))
    out = bytearray()
    prev = bytes(len(raw_rows[0]))
    for y, cur in enumerate(raw_rows):
        f = filters[y % len(filters)]
        line = bytearray([f])
        for x in range(len(cur)):
            a = cur[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 0:
                pred = 0
            elif f == 1:
                pred = a
            elif f == 2:
                pred = b
            elif f == 3:
                pred = (a + b) >> 1
            else:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            line.append((cur[x] - pred) & 255)
        out += line
        prev = cur

    def chunk(t, body):
        return struct.pack(">I", len(body)) + t + body + struct.pack(">I", zlib.crc32(t + body))
    ihdr = struct.pack(">IIBBBBB", width, height, depth, color, 0, 0, interlace)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(out)) +
            chunk(b"IEND", b""))


def array_to_runs(arr):
    """bool [R, C] -> the run-length object of mask_json.h, adjacent runs merged (what the
    engine writes)."""
    import numpy as np
    rows = []
    for row in arr:
        padded = np.concatenate(([False], row, [False])).astype(np.int8)
        edges = np.flatnonzero(np.diff(padded))
        starts, ends = edges[0::2], edges[1::2]
        rows.append([int(x) for pair in zip(starts, ends - starts) for x in pair])
    return {"rows": int(arr.shape[0]), "cols": int(arr.shape[1]), "runs": rows}


def have_torch_cuda():
    try:
        import torch
    except ImportError:
        return False, "torch is not installed"
    if not torch.cuda.is_available():
        return False, "torch has no CUDA device"
    return True, ""
