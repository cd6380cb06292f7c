"""``blockattn-compile``: the console entry of the wheel's bundled compiler.

It runs ``blockattn/_native/block-attn-compile`` (in a source checkout
without one: whatever :func:`blockattn._kernels.find_compiler` finds) with
the same arguments, so its flags are those of ``block-attn-compile``
(``blockattn-compile --help``).
"""

from __future__ import annotations

import os
import sys

from . import _kernels


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if _kernels.BUNDLED_COMPILER.is_file():
        compiler = str(_kernels.BUNDLED_COMPILER)
    else:
        compiler = _kernels.find_compiler()
    if compiler is None:
        print("blockattn-compile: no block-attn-compile found (this blockattn has no bundled "
              "compiler; set BLOCKATTN_COMPILER)", file=sys.stderr)
        return 1
    sys.stdout.flush()
    os.execv(compiler, [compiler, *args])
    return 1  # not reached


if __name__ == "__main__":
    sys.exit(main())
