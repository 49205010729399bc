#!/usr/bin/env python3
"""Zero every floating-point tensor of a safetensors file in place.

For timing-only artifacts (scripts/gpu-check.sh prepare): a kernel's cost
does not depend on its weights' values, and zeroed weights compress to
almost nothing, so native artifacts built here travel to a machine
without clang inside the device tool's size limit. Integer tensors (index
tables, shapes) keep their values: they steer what a kernel reads.

    python3 zero_weights.py FILE.safetensors
"""
import json
import struct
import sys

FLOATS = {"F64", "F32", "F16", "BF16"}

with open(sys.argv[1], "r+b") as f:
    (n,) = struct.unpack("<Q", f.read(8))
    header = json.loads(f.read(n))
    base = 8 + n
    for name, t in header.items():
        if name == "__metadata__" or t["dtype"] not in FLOATS:
            continue
        b, e = t["data_offsets"]
        f.seek(base + b)
        f.write(bytes(e - b))
