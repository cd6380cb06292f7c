"""Where blockattn._kernels finds a kernel, and the compile cache's key (no torch, no GPU).

A fake compiler (a shell script that writes a manifest and a PTX file the way
block-attn-compile names them, and counts its runs) stands in for
block-attn-compile; scripts/check_wheel.sh runs the real one from the wheel.
"""

import json
import os
import pathlib
import stat
import sys

import pytest

from blockattn import _kernels
from blockattn._kernels import KernelKey

KEY = KernelKey("forward", 64, 64, "bf16", "sm_90a")

FAKE = """#!/bin/sh
# $VERSION
out=""; name=""; chip=""
for a in "$@"; do
  case "$a" in
    --name=*) name="${a#--name=}" ;;
    --chip=*) chip="${a#--chip=}" ;;
  esac
done
while [ $# -gt 0 ]; do [ "$1" = "-o" ] && out="$2"; shift; done
echo run >> "$COUNT_FILE"
printf '{"kernel": "%s", "chip": "%s", "ptx": "%s.ptx", "params": []}' "$name" "$chip" "$name" > "$out/$name.json"
echo ".entry $name" > "$out/$name.ptx"
"""


def fake_compiler(directory: pathlib.Path, version: str) -> pathlib.Path:
    path = directory / f"fake-compile-{version}"
    path.write_text(FAKE.replace("$VERSION", version))
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("BLOCKATTN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("COUNT_FILE", str(tmp_path / "count"))
    monkeypatch.delenv("BLOCKATTN_KERNEL_DIR", raising=False)
    monkeypatch.setattr(_kernels, "PREBUILT_DIR", tmp_path / "prebuilt")
    monkeypatch.setattr(_kernels, "BUNDLED_COMPILER", tmp_path / "no-bundled-compiler")
    return tmp_path


def runs(tmp_path) -> int:
    count = tmp_path / "count"
    return len(count.read_text().split()) if count.exists() else 0


def write_kernel(directory: pathlib.Path, key: KernelKey, tag: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{key.name}.json").write_text(json.dumps(
        {"kernel": key.name, "chip": key.chip, "ptx": f"{key.name}.ptx", "tag": tag, "params": []}))
    (directory / f"{key.name}.ptx").write_text(tag)


@pytest.mark.skipif(sys.platform != "linux", reason="the fake compiler is a POSIX shell script")
def test_compiles_once_into_a_cache_keyed_by_the_compiler(env, monkeypatch):
    v1 = fake_compiler(env, "v1")
    monkeypatch.setenv("BLOCKATTN_COMPILER", str(v1))
    files = _kernels.find_kernel(KEY)
    assert runs(env) == 1
    assert files.directory == env / "cache" / _kernels.compiler_id(v1) / "sm_90a"
    assert files.manifest["kernel"] == KEY.name
    assert _kernels.find_kernel(KEY).directory == files.directory
    assert runs(env) == 1, "the cached kernel was compiled again"

    # Another compiler (a new version: other bytes) never loads the old kernel.
    v2 = fake_compiler(env, "v2")
    assert _kernels.compiler_id(v2) != _kernels.compiler_id(v1)
    monkeypatch.setenv("BLOCKATTN_COMPILER", str(v2))
    files2 = _kernels.find_kernel(KEY)
    assert runs(env) == 2 and files2.directory != files.directory

    # Rewriting a compiler in place changes its id as well.
    v1.write_text(v1.read_text() + "# rebuilt\n")
    os.utime(v1, ns=(1, 1))
    monkeypatch.setenv("BLOCKATTN_COMPILER", str(v1))
    assert _kernels.cache_dir("sm_90a") != files.directory


@pytest.mark.skipif(sys.platform != "linux", reason="the fake compiler is a POSIX shell script")
def test_a_compiled_kernel_appears_with_its_manifest_last(env, monkeypatch):
    """Processes that compile the same kernel at once (ranks of one job sharing a cache) read
    each other's files: whenever another process could find the manifest, the files it names
    are already in place. Checked at every file the compile moves into the cache."""
    fake = fake_compiler(env, "v1")
    # The fake writes a cubin too, named in its manifest (as --cubin does).
    fake.write_text(fake.read_text().replace(
        '"params": []}', '"params": [], "cubin": "%s.cubin"}').replace(
        '"$name" > "$out/$name.json"',
        '"$name" "$name" > "$out/$name.json"; echo cubin > "$out/$name.cubin"'))
    monkeypatch.setenv("BLOCKATTN_COMPILER", str(fake))
    directory = _kernels.cache_dir("sm_90a")
    real_replace, moved = os.replace, []

    def replace(src, dst):
        real_replace(src, dst)
        moved.append(pathlib.Path(dst).name)
        files = _kernels._load(directory, KEY)
        if files is not None:
            named = [files.manifest["ptx"], files.manifest["cubin"]]
            assert all((directory / n).exists() for n in named), f"manifest visible before {named}"

    monkeypatch.setattr(_kernels.os, "replace", replace)
    # Directories list in whatever order the file system keeps; the manifest first is the
    # order that exposes a half-moved kernel.
    real_iterdir = pathlib.Path.iterdir
    monkeypatch.setattr(pathlib.Path, "iterdir", lambda self: iter(
        sorted(real_iterdir(self), key=lambda e: e.suffix != ".json")))
    files = _kernels.compile_kernel(KEY, cubin=True)
    assert moved[-1] == f"{KEY.name}.json" and len(moved) == 3
    assert files.image() == b"cubin\n"


def test_lookup_order_kernel_dir_then_prebuilt_then_cache(env, monkeypatch):
    v1 = fake_compiler(env, "v1")
    monkeypatch.setenv("BLOCKATTN_COMPILER", str(v1))
    write_kernel(_kernels.cache_dir("sm_90a"), KEY, "cache")
    assert _kernels.find_kernel(KEY).manifest["tag"] == "cache"
    write_kernel(_kernels.PREBUILT_DIR / "sm_90a", KEY, "prebuilt")
    assert _kernels.find_kernel(KEY).manifest["tag"] == "prebuilt"
    monkeypatch.setenv("BLOCKATTN_KERNEL_DIR", str(env / "kernels"))
    write_kernel(env / "kernels" / "sm_90a", KEY, "kernel-dir")
    assert _kernels.find_kernel(KEY).manifest["tag"] == "kernel-dir"
    # A manifest for another chip in the flat directory is not taken.
    other = KernelKey("forward", 64, 64, "bf16", "sm_100a")
    write_kernel(env / "kernels", KEY, "wrong-chip")
    assert _kernels.find_kernel(other).manifest["chip"] == "sm_100a"
    assert runs(env) == 1


def test_bundled_compiler_preferred_over_path(env, monkeypatch):
    monkeypatch.delenv("BLOCKATTN_COMPILER", raising=False)
    bundled = fake_compiler(env, "bundled")
    monkeypatch.setattr(_kernels, "BUNDLED_COMPILER", bundled)
    assert _kernels.find_compiler() == str(bundled)
    monkeypatch.setenv("BLOCKATTN_COMPILER", "/somewhere/block-attn-compile")
    assert _kernels.find_compiler() == "/somewhere/block-attn-compile"


def test_no_compiler_is_an_error_that_says_what_to_set(env, monkeypatch):
    monkeypatch.delenv("BLOCKATTN_COMPILER", raising=False)
    monkeypatch.setattr(_kernels, "_REPO_ROOT", env)
    monkeypatch.setenv("PATH", str(env / "empty"))
    assert _kernels.find_compiler() is None
    with pytest.raises(RuntimeError, match=r"BLOCKATTN_KERNEL_DIR .* BLOCKATTN_COMPILER"):
        _kernels.find_kernel(KEY)


def test_console_entry_runs_the_compiler(env, monkeypatch, capfd):
    """blockattn-compile execs the compiler with the same arguments (in a child, as exec replaces)."""
    import subprocess

    bundled = fake_compiler(env, "bundled")
    out = env / "out"
    out.mkdir()
    code = ("import sys; from blockattn import _compile_main, _kernels; import pathlib; "
            f"_kernels.BUNDLED_COMPILER = pathlib.Path({str(bundled)!r}); "
            "sys.exit(_compile_main.main(sys.argv[1:]))")
    python_dir = pathlib.Path(_kernels.__file__).resolve().parents[1]
    subprocess.run([sys.executable, "-c", code, *KEY.compiler_flags(), "-o", str(out)], check=True,
                   env={**os.environ, "PYTHONPATH": str(python_dir)})
    assert (out / f"{KEY.name}.json").exists() and runs(env) == 1
