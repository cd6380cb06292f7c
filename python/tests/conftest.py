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
