//===- Passes.td - warpspec transforms ---------------------*- tablegen -*-===//

#ifndef BLOCKATTN_DIALECT_WARPSPEC_TRANSFORMS_PASSES_TD
#define BLOCKATTN_DIALECT_WARPSPEC_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def WarpSpecAllocateSmemPass : Pass<"warpspec-allocate-smem", "ModuleOp"> {
  let summary = "Place every channel buffer, barrier and tile record in shared memory";
  let description = [{
    Gives every `warpspec.channel` in shared memory its offsets in the
    kernel's dynamic shared memory, and writes the kernel's total
    (`smem_bytes`).

    Layout, from offset 0 (the lowering aligns the dynamic shared memory base
    to 1024 bytes at run time and the total includes that slack):
    1. the slots of every shared-memory channel, each slot 1024-byte aligned
       (the 128-byte swizzle pattern repeats every 1024 bytes; aligned slots
       let descriptors use base offset 0): `buffer_offset`, `slot_stride`;
    2. every partition's scratch buffers (`warpspec.scratch`), one copy per
       replica, 1024-byte aligned: `offset` (replica `r` at
       `offset + r * replica_stride`);
    3. every channel's mbarriers (tensor-memory channels included),
       `full[depth]` then `empty[depth]`, 8 bytes each: `barrier_offset`;
    4. every channel's tile records (row, rows, head), 16 bytes per slot:
       `info_offset`.

    #### Diagnostics
    If the total exceeds the 227 KiB a CTA can have, the kernel gets an
    error with a note per placement: each channel with its depth and slot
    size, each partition's scratch, the barriers and records, and the slack.
  }];
}

#endif // BLOCKATTN_DIALECT_WARPSPEC_TRANSFORMS_PASSES_TD
