"""block-attn: compiler and runtime for fixed block-diagonal self-attention.

``blockattn.block_attention`` runs the compiled kernels from PyTorch
(``blockattn.Rotary`` describes fused rotary embeddings);
``block_attention_qkvpacked`` and ``block_attention_kvpacked`` take q, k, v
packed in one tensor and return packed gradients; ``blockattn.nn.BlockAttention``
is the whole attention layer. ``blockattn.reference`` is the float64 NumPy
reference they are tested against (it takes the same ``Rotary``).
``import blockattn`` needs neither torch nor a GPU: the runtime is imported
on first use, and the kernel lookup (``blockattn._kernels``) never imports it.
"""

from . import reference
from .reference import Rotary

__version__ = "0.1.0"

__all__ = [
    "Rotary", "block_attention", "block_attention_qkvpacked", "block_attention_kvpacked", "nn",
    "reference", "__version__",
]

_API = ("block_attention", "block_attention_qkvpacked", "block_attention_kvpacked")


def __getattr__(name):
    # Python calls this only for names the module does not have yet: keep
    # what it finds, or every `blockattn.block_attention(...)` pays for an
    # import statement (1.4 us a call, more than a tenth of a small call's
    # host time: issue 22).
    if name in _API:
        from . import api

        value = globals()[name] = getattr(api, name)
        return value
    if name == "nn":
        import importlib

        return importlib.import_module(".nn", __name__)
    raise AttributeError(f"module 'blockattn' has no attribute {name!r}")
