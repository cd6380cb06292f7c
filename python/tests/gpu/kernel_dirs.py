"""Kernels of a compiler option, taken from their own directory for the tests that check it
(test_large_block_rings_gpu.py, test_grouped_query_halves_gpu.py)."""

from __future__ import annotations

import pathlib

from blockattn import _driver, _kernels, api


def kernels_from(directory, takes, monkeypatch):
    """Generator for a fixture: every kernel key that `takes` accepts is loaded from
    `directory`/sm_90a (the other kernels as usual), with the API's and the driver's kernel
    caches empty before and restored after. Yields that directory."""
    find = _kernels.find_kernel
    directory = pathlib.Path(directory) / "sm_90a"

    def find_from_directory(key):
        if takes(key):
            files = _kernels._load(directory, key)
            assert files is not None, f"no {key.name} in {directory}"
            return files
        return find(key)

    monkeypatch.setattr(_kernels, "find_kernel", find_from_directory)
    caches = (api._KERNELS, api._SMALL, _driver._LOADED)
    saved = [dict(cache) for cache in caches]
    for cache in caches:
        cache.clear()
    yield directory
    for cache, old in zip(caches, saved):
        cache.clear()
        cache.update(old)


def kernels_with_flag(tmp_path_factory, env: str, flag: str, keys, jobs: int = 4) -> str:
    """The directory of `keys` compiled with `flag` appended to their flags: $`env` if set (a
    prebuilt one, for a GPU machine without the compiler), else built here by a wrapper of
    the project's block-attn-compile; skips when neither is there."""
    import os

    import pytest

    directory = os.environ.get(env)
    if directory is not None:
        return directory
    compiler = _kernels.find_compiler()
    if compiler is None:
        pytest.skip(f"no block-attn-compile and no {env}")
    root = tmp_path_factory.mktemp("flagged")
    wrapper = root / "compile.sh"
    wrapper.write_text(f'#!/bin/sh\nexec "{compiler}" "$@" {flag}\n')
    wrapper.chmod(0o755)
    _kernels.prebuild(root, list(keys), cubin=True, jobs=jobs, compiler=str(wrapper))
    return str(root)
