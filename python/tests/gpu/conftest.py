"""GPU tests: skipped unless PyTorch, cuda.bindings and an sm_90a/sm_100a GPU exist."""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("cuda.bindings")

if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)
if torch.cuda.get_device_capability() not in ((9, 0), (10, 0)):
    pytest.skip("blockattn kernels need an sm_90a or sm_100a GPU", allow_module_level=True)
