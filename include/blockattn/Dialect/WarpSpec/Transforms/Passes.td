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

def WarpSpecAllocateTmemPass : Pass<"warpspec-allocate-tmem", "ModuleOp"> {
  let summary = "Place every tensor-memory buffer in the 128 lanes x 512 columns";
  let description = [{
    Gives every slot of every tensor-memory channel of a kernel a lane
    alignment and a column (`tmem_slots` on the channel: `[lane, column]` per
    slot) and writes the kernel's allocation (`tmem_columns`: a power of two
    of at least 32, what `tcgen05.alloc` takes).

    An M = 64 accumulator uses half of the 128 lanes (the M = 64 data path:
    rows 16q..16q+15 in lanes 32q + a .. 32q + a + 15, a = 0 or 16), so two
    buffers of the same width share one column range, one at each lane
    alignment: slots 2k and 2k+1 of a ring are packed so. f32 buffers take one
    column per element, 16-bit ones (P, a tensor-memory A operand) one per two
    elements. A ring's slot s has lane alignment 16 (s % 2) in every channel,
    so the P and the O of one tile share their alignment, as `tcgen05.mma`
    with A in tensor memory requires.

    Lifetimes: every channel is a ring reused by the persistent tile loop, so
    all its slots are live for the whole kernel and buffers of different
    channels never share columns; the budget check is therefore over all of
    them.

    #### Diagnostics
    Over 512 columns, the kernel gets an error listing every buffer live at
    the peak (all of them) with its columns.
  }];
}

#endif // BLOCKATTN_DIALECT_WARPSPEC_TRANSFORMS_PASSES_TD
