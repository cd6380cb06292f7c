"""Checks the rotary parameters of a launch manifest, in any order.

    check-rotary-params.py MANIFEST [cos sin] [positions]

The named tensors must have exactly these parameters (what python/blockattn/_driver.py
builds launch arguments from): a table "cos"/"sin" is a pointer, its i32 row count and
its i64 row stride; "positions" is a pointer and its i32 length. Tensors not named must
have no parameter at all.
"""

import json
import sys

EXPECTED = {
    "cos": [
        {"name": "cos", "tensor": "cos", "kind": "pointer", "value": "base"},
        {"name": "cos_size0", "tensor": "cos", "kind": "i32", "value": "size", "dim": 0},
        {"name": "cos_stride0", "tensor": "cos", "kind": "i64", "value": "stride", "dim": 0},
    ],
    "sin": [
        {"name": "sin", "tensor": "sin", "kind": "pointer", "value": "base"},
        {"name": "sin_size0", "tensor": "sin", "kind": "i32", "value": "size", "dim": 0},
        {"name": "sin_stride0", "tensor": "sin", "kind": "i64", "value": "stride", "dim": 0},
    ],
    "positions": [
        {"name": "positions", "tensor": "positions", "kind": "pointer", "value": "base"},
        {"name": "positions_size0", "tensor": "positions", "kind": "i32", "value": "size", "dim": 0},
    ],
}


def main(path, *wanted):
    params = json.load(open(path))["params"]
    errors = []
    for tensor, expected in EXPECTED.items():
        got = sorted(
            ({k: v for k, v in p.items() if k != "dtype"} for p in params if p.get("tensor") == tensor),
            key=lambda p: p["name"],
        )
        want = sorted(expected, key=lambda p: p["name"]) if tensor in wanted else []
        if got != want:
            errors.append(f"{tensor}: expected {want}, got {got}")
    if errors:
        sys.exit("error: " + "\n".join(errors))
    print("ok")


if __name__ == "__main__":
    main(*sys.argv[1:])
