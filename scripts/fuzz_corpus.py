#!/usr/bin/env python3
"""Regenerates the seed corpus of the fuzz targets (fuzz/corpus/<target>/).

    python3 scripts/fuzz_corpus.py [--build build] [--targets parse,...]

The seeds are the tests and examples, split at `// -----` and at split-file's
`//--- name` markers, and what the tools make of the blockattn kernels among
them at each stage (warp-specialized for both chips, then planned by the
allocators), so that every target starts from inputs that reach deep into its
pass; block-attn-compile's command lines in the tests seed the compile-flags
target (one argument per line). Seed files are named by the SHA-1 of their contents (as libFuzzer names
what it adds); other files in the corpus directories (the crash reproducers,
named after what they found) are kept. `make check` replays the whole corpus
(test/Fuzz/replay.test).
"""

import argparse
import hashlib
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHIPS = ("sm_90a", "sm_100a")
# blockattn-to-ptx runs NVPTX on every kernel: a few seeds keep the replay fast.
MAX_PTX_SEEDS = 16
# The campaigns run with -max_len=65536 (Makefile: FUZZ_FLAGS); a larger seed
# would be cut there anyway, and slows every mutation.
MAX_SEED_BYTES = 65536


def chunks_of(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    parts = re.split(r"^//--- .*$", text, flags=re.M)
    for part in parts:
        for chunk in re.split(r"^// -----\s*$", part, flags=re.M):
            if chunk.strip():
                yield chunk.strip() + "\n"


def sources():
    for top in ("test", "examples"):
        for dirpath, _, files in sorted(os.walk(os.path.join(ROOT, top))):
            for name in sorted(files):
                if name.endswith(".mlir"):
                    yield os.path.join(dirpath, name)


def compile_flag_seeds():
    """block-attn-compile's command lines in the tests, one argument per line
    (the compile-flags target's input), with lit's substitutions replaced by
    plain paths."""
    seeds = []
    for dirpath, _, files in sorted(os.walk(os.path.join(ROOT, "test"))):
        for name in sorted(files):
            text = open(os.path.join(dirpath, name), encoding="utf-8",
                        errors="replace").read()
            for line in re.findall(r"block-attn-compile( [^|>%\n]*)", text):
                line = re.sub(r"%\S*", "out", line)
                try:
                    args = shlex.split(line)
                except ValueError:
                    continue
                if args:
                    seeds.append("\n".join(args) + "\n")
    return seeds


def run_opt(opt, text, pipeline):
    result = subprocess.run(
        [opt, "-", f"--pass-pipeline={pipeline}"],
        input=text, capture_output=True, text=True, timeout=120)
    return result.stdout if result.returncode == 0 else None


def write_seeds(target, seeds):
    directory = os.path.join(ROOT, "fuzz", "corpus", target)
    os.makedirs(directory, exist_ok=True)
    for name in os.listdir(directory):
        if re.fullmatch(r"[0-9a-f]{40}", name):
            os.remove(os.path.join(directory, name))
    unique = {hashlib.sha1(s.encode()).hexdigest(): s for s in seeds
              if len(s.encode()) <= MAX_SEED_BYTES}
    for digest, seed in unique.items():
        with open(os.path.join(directory, digest), "w", encoding="utf-8") as f:
            f.write(seed)
    print(f"{target}: {len(unique)} seeds")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--targets", default=None,
                        help="comma-separated targets to regenerate (all)")
    args = parser.parse_args()
    wanted = set(args.targets.split(",")) if args.targets else None
    if wanted == {"compile-flags"}:
        write_seeds("compile-flags", compile_flag_seeds())
        return
    opt = os.path.join(args.build, "bin", "block-attn-opt")
    if not os.path.exists(opt):
        sys.exit(f"{opt} not found: build first (make build)")

    chunks = [c for path in sources() for c in chunks_of(path)]
    recipes = [c for c in chunks if "blockattn.forward" in c or "blockattn.backward" in c]
    kernels = [c for c in chunks if "warpspec.kernel" in c]
    specialized = []
    compiles = []  # recipes that warp-specialize for both chips
    for recipe in recipes:
        outs = [run_opt(opt, recipe,
                        f"builtin.module(func.func(blockattn-warp-specialize{{chip={chip}}}))")
                for chip in CHIPS]
        specialized += [out for out in outs if out]
        if all(outs):
            compiles.append(recipe)
    planned = []
    for kernel in kernels + specialized:
        out = run_opt(opt, kernel,
                      "builtin.module(warpspec-allocate-tmem,warpspec-allocate-smem)")
        if out:
            planned.append(out)

    if wanted is None or "parse" in wanted:
        write_seeds("parse", chunks + specialized)
    if wanted is None or "warp-specialize" in wanted:
        write_seeds("warp-specialize", recipes)
    if wanted is None or "allocate-smem" in wanted:
        write_seeds("allocate-smem", kernels + specialized)
    if wanted is None or "allocate-tmem" in wanted:
        write_seeds("allocate-tmem", kernels + specialized)
    if wanted is None or "convert-to-nvvm" in wanted:
        write_seeds("convert-to-nvvm", kernels + planned)
    # The smallest recipes that compile for both chips.
    small = sorted(set(compiles), key=len)[:MAX_PTX_SEEDS]
    if wanted is None or "blockattn-to-ptx" in wanted:
        write_seeds("blockattn-to-ptx", small)
    if wanted is None or "compile-flags" in wanted:
        write_seeds("compile-flags", compile_flag_seeds())


if __name__ == "__main__":
    main()
