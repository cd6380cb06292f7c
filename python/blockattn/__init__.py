"""block-attn: compiler and runtime for fixed block-diagonal self-attention.

``blockattn.block_attention`` runs the compiled kernels from PyTorch
(``blockattn.Rotary`` describes fused rotary embeddings);
``blockattn.reference`` is the float64 NumPy reference they are tested
against (it takes the same ``Rotary``). ``import blockattn`` needs neither torch nor a GPU: the runtime is
imported on first use.
"""

from . import reference
from .reference import Rotary

__version__ = "0.1.0"

__all__ = ["Rotary", "block_attention", "reference", "__version__"]


def __getattr__(name):
    if name == "block_attention":
        from .api import block_attention

        return block_attention
    raise AttributeError(f"module 'blockattn' has no attribute {name!r}")
