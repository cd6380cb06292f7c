#!/usr/bin/env python3
"""Records the H200's outputs on the emulator tests' problems (python/tests/test_emulator.py).

Runs on a machine with an sm_90a GPU, PyTorch and cuda-bindings, with kernels compiled
elsewhere (block-attn-compile <Case.compiler_flags> -o KERNELS --cubin):

    python3 scripts/record_emulator_fixture.py KERNELS OUT.npz

For every case of CASES it builds the problem of blockattn.emulation.make_problem (outputs
poisoned with 0xFFFF, with poisoned guard rows before and after), launches the kernel on
every SM as the runtime does, and stores the raw output bits, the inputs' digest and whether
the guard rows stayed untouched.
"""

import datetime
import json
import pathlib
import sys

import numpy as np
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "python"))

from blockattn import emulation  # noqa: E402
from blockattn._driver import LoadedKernel  # noqa: E402
from blockattn._kernels import KernelFiles  # noqa: E402

CASES = emulation.FIXTURE_CASES
GUARD = 3
TORCH = {"bf16": torch.bfloat16, "f16": torch.float16}


def to_device(name, array, dtype):
    if array.dtype == np.uint16:
        return torch.from_numpy(array.view(np.int16).copy()).cuda().view(TORCH[dtype])
    return torch.from_numpy(array.copy()).cuda()


def main(argv):
    kernels, out = pathlib.Path(argv[0]), pathlib.Path(argv[1])
    props = torch.cuda.get_device_properties(0)
    record = {"meta": np.array(json.dumps({
        "device": props.name, "sms": props.multi_processor_count, "torch": torch.__version__,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}))}
    for case in CASES:
        name = f"k_{case.name}"
        files = KernelFiles(json.loads((kernels / f"{name}.json").read_text()), kernels)
        kernel = LoadedKernel(files, 0)
        tensors = emulation.make_problem(case)
        record[f"{case.name}/digest"] = np.array(emulation.inputs_digest(tensors))
        dev, buffers = {}, {}
        for tname, array in tensors.items():
            if tname in case.outputs:
                T, H, D = array.shape
                buf = torch.full((T + 2 * GUARD, H, D), -1, dtype=torch.int16, device="cuda").view(TORCH[case.dtype])
                buffers[tname] = buf
                dev[tname] = buf[GUARD:GUARD + T]
            else:
                dev[tname] = to_device(tname, array, case.dtype)
        scale = 1.0 / case.head_dim ** 0.5
        kernel.launch(kernel.grid(props.multi_processor_count, dev), dev, {"softmax_scale": scale})
        torch.cuda.synchronize()
        for tname, buf in buffers.items():
            bits = buf.view(torch.int16).cpu().numpy().view(np.uint16)
            guards = np.concatenate([bits[:GUARD], bits[-GUARD:]])
            record[f"{case.name}/{tname}"] = bits[GUARD:-GUARD]
            record[f"{case.name}/{tname}_guards_untouched"] = np.array(bool((guards == 0xFFFF).all()))
            written = int((bits[GUARD:-GUARD] != 0xFFFF).sum())
            print(f"{case.name} {tname}: {written} of {bits[GUARD:-GUARD].size} elements written, "
                  f"guards untouched: {bool((guards == 0xFFFF).all())}")
        got = {t: record[f"{case.name}/{t}"] for t in case.outputs}
        failures = emulation.check_close(case, got, emulation.reference_outputs(case, tensors))
        print(f"{case.name}: against the float64 reference: {failures or 'within the GPU tests tolerances'}")
    np.savez_compressed(out, **record)


if __name__ == "__main__":
    main(sys.argv[1:])
