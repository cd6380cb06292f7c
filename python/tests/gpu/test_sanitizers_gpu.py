"""compute-sanitizer over the GPU test kernels: every tool clean.

Each test runs tests/gpu/sanitize_driver.py (every forward and backward kernel
of the GPU tests on one jagged batch) under one compute-sanitizer tool and
requires a clean report. docs/sanitizers.md explains each choice below:

- memcheck, synccheck: no report at all (`--report-api-errors no` hides
  cuda-bindings' cuGetProcAddress probes of driver entry points the installed
  driver does not have: host-side, not ours).
- initcheck: the outputs are allocated initialized (NaN), because initcheck
  does not see writes made by the bulk-copy engine (TMA stores): a read of a
  TMA-stored element counts as uninitialized (scripts/sanitizer_probes.cu
  shows it on a 20-line kernel). The driver checks that no NaN is left, so
  every element is still proven written by the kernel.
- racecheck: none but the hazards docs/sanitizers.md explains, recognized by
  their instructions (a 16-byte tile-record store followed by the slot's
  mbarrier arrival, and the 16-byte load of the same record offset).

Skipped where compute-sanitizer or cuobjdump is not installed.
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

PYTHON_DIR = pathlib.Path(__file__).resolve().parents[2]


def _tool(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidate = pathlib.Path("/usr/local/cuda/bin") / name
    return str(candidate) if candidate.exists() else None


SANITIZER = _tool("compute-sanitizer")
CUOBJDUMP = _tool("cuobjdump")
pytestmark = pytest.mark.skipif(SANITIZER is None, reason="compute-sanitizer is not installed")


def sanitize(tool: str, *flags: str, driver: tuple[str, ...] = ()) -> str:
    cmd = [SANITIZER, "--tool", tool, *flags, sys.executable, "-m", "tests.gpu.sanitize_driver", *driver]
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR))
    result = subprocess.run(cmd, cwd=PYTHON_DIR, env=env, capture_output=True, text=True, timeout=900)
    output = result.stdout + result.stderr
    assert "ran backward d128 interleaved" in output, f"the driver did not finish:\n{output[-4000:]}"
    return output


def error_count(output: str) -> int:
    match = re.search(r"ERROR SUMMARY: (\d+) error", output)
    assert match, output[-2000:]
    return int(match.group(1))


def test_memcheck_clean():
    output = sanitize("memcheck", "--report-api-errors", "no", "--kernel-name", "kns=blockattn")
    assert error_count(output) == 0, output[-4000:]


def test_synccheck_clean():
    output = sanitize("synccheck", "--kernel-name", "kns=blockattn")
    assert error_count(output) == 0, output[-4000:]


def test_initcheck_clean():
    output = sanitize("initcheck", driver=("--out-mode", "poisoned"))
    assert error_count(output) == 0, output[-4000:]


# "Race reported between Write access at KERNEL+0xW\n and Read access at KERNEL+0xR [N hazards]"
# (the first access may be the read; several second accesses may follow).
_RACE = re.compile(r"Race reported between (Read|Write) access at (\w+)\+(0x[0-9a-f]+)")
_PAIR = re.compile(r"^=+\s+and (Read|Write) access at (\w+)\+(0x[0-9a-f]+)")


def race_pairs(output: str) -> list[tuple[str, int, int]]:
    """(kernel, write offset, read offset) of every racecheck analysis record."""
    pairs, first = [], None
    for line in output.splitlines():
        if m := _RACE.search(line):
            first = (m.group(1), m.group(2), int(m.group(3), 16))
        elif first and (m := _PAIR.search(line)):
            kind, kernel, offset = m.group(1), m.group(2), int(m.group(3), 16)
            assert kind != first[0] and kernel == first[1], line
            pairs.append((kernel, *((first[2], offset) if first[0] == "Write" else (offset, first[2]))))
    return pairs


def sass_of(kernel: str, chip: str = "sm_90a") -> dict[int, str]:
    """offset -> instruction of the kernel's cubin, the one the runtime loaded
    (`<dir>/<chip>/` or `<dir>/`, as the runtime searches)."""
    root = pathlib.Path(os.environ["BLOCKATTN_KERNEL_DIR"])
    cubins = [p for p in (root / chip / f"{kernel}.cubin", root / f"{kernel}.cubin") if p.exists()]
    assert cubins, f"no {kernel}.cubin under BLOCKATTN_KERNEL_DIR"
    text = subprocess.run([CUOBJDUMP, "-sass", str(cubins[0])], capture_output=True, text=True,
                          check=True).stdout
    return {int(m.group(1), 16): " ".join(m.group(2).split())
            for m in re.finditer(r"/\*([0-9a-f]{4,})\*/\s+([^;]*);", text)}


_RECORD_STORE = re.compile(r"^STS\.128 \[[^\]]*\+(0x[0-9a-f]+)\]")
_RECORD_LOAD = re.compile(r"^LDS\.128 R\d+, \[[^\]]*\+(0x[0-9a-f]+)\]")


def is_tile_record_pair(sass: dict[int, str], write: int, read: int) -> bool:
    """The write publishes a slot's 16-byte tile record (the store right before
    the arrival on the slot's full barrier) and the read loads that record."""
    store, load = _RECORD_STORE.match(sass.get(write, "")), _RECORD_LOAD.match(sass.get(read, ""))
    after = sass.get(write + 0x10, "")
    return bool(store and load and store.group(1) == load.group(1) and after.startswith("SYNCS.ARRIVE"))


@pytest.mark.skipif(CUOBJDUMP is None, reason="cuobjdump is not installed")
@pytest.mark.skipif(not os.environ.get("BLOCKATTN_KERNEL_DIR"), reason="needs the prebuilt cubins (BLOCKATTN_KERNEL_DIR)")
def test_racecheck_only_the_explained_hazards():
    output = sanitize("racecheck", "--kernel-name", "kns=blockattn", "--racecheck-report", "analysis",
                      "--print-limit", "100000")
    pairs = race_pairs(output)
    import torch

    chip = "sm_90a" if torch.cuda.get_device_capability() == (9, 0) else "sm_100a"
    sass = {}
    unexplained = []
    for kernel, write, read in pairs:
        sass.setdefault(kernel, sass_of(kernel, chip))
        if not is_tile_record_pair(sass[kernel], write, read):
            unexplained.append(f"{kernel}: write +{write:#x} ({sass[kernel].get(write)}), "
                               f"read +{read:#x} ({sass[kernel].get(read)})")
    assert not unexplained, "racecheck hazards docs/sanitizers.md does not explain:\n" + "\n".join(unexplained)
