"""block-attn: compiler and runtime for fixed block-diagonal self-attention.

Only the float64 NumPy reference lives here for now. Keep this module importable without
torch or a GPU: a later GPU runtime must be imported lazily (or from its own submodule) so
that ``import blockattn`` keeps working on CPU-only machines.
"""

from . import reference

__version__ = "0.1.0"

__all__ = ["reference", "__version__"]
