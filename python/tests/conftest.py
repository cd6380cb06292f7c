"""Shared fixtures for the blockattn reference tests."""

import numpy as np
import pytest


@pytest.fixture
def rng():
    """A fresh, seeded generator per test so failures are reproducible."""
    return np.random.default_rng(1234)


def _numeric_grad(f, x, eps=1e-6):
    """Central finite differences of scalar ``f()`` w.r.t. every element of ``x`` (in place)."""
    grad = np.zeros_like(x)
    flat, gflat = x.reshape(-1), grad.reshape(-1)
    for i in range(flat.size):
        orig = flat[i]
        flat[i] = orig + eps
        plus = f()
        flat[i] = orig - eps
        minus = f()
        flat[i] = orig
        gflat[i] = (plus - minus) / (2 * eps)
    return grad


@pytest.fixture
def numeric_grad():
    """Return the central finite-difference helper ``numeric_grad(f, x, eps=1e-6)``."""
    return _numeric_grad


@pytest.fixture(scope="session")
def emulated_kernel(tmp_path_factory):
    """``get(case, chip)``: the path stem of ``case`` compiled for ``chip`` by
    block-attn-compile (``find_compiler()``), compiled once per session, for the
    emulator tests (``emulation.emulate(stem.with_suffix(".ptx"), ...)``)."""
    import subprocess

    from blockattn._kernels import find_compiler

    root = tmp_path_factory.mktemp("emulated")
    cache = {}

    def get(case, chip: str):
        if (case, chip) not in cache:
            out = root / chip
            subprocess.run([find_compiler(), *case.compiler_flags(chip), "-o", str(out), "--quiet"], check=True)
            cache[case, chip] = out / f"k_{case.name}"
        return cache[case, chip]

    return get
