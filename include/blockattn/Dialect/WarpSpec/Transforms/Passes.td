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
    to 1024 bytes at run time):
    1. the slots of every shared-memory channel, each slot 1024-byte aligned
       (the 128-byte swizzle pattern repeats every 1024 bytes; aligned slots
       let descriptors use base offset 0): `buffer_offset`, `slot_stride`;
    2. every partition's scratch buffers (`warpspec.scratch`), one copy per
       replica, 1024-byte aligned: `offset` (replica `r` at
       `offset + r * replica_stride`);
    3. every channel's mbarriers (tensor-memory channels included),
       `full[depth]` then `empty[depth]`, 8 bytes each: `barrier_offset`;
    4. every channel's tile records (row, rows, head, position), 16 bytes
       per slot: `info_offset`;
    5. with tensor-memory channels, the 16 bytes where `tcgen05.alloc`
       writes the tensor-memory address and the barrier that holds its
       release: the kernel's `tmem_base_offset`.

    The barriers, records and tensor-memory address (3 to 5) go into the
    bytes the run-time alignment of the base skips when they fit there, and
    after the buffers otherwise; `smem_bytes` is the buffers (1 and 2) plus
    that slack: at least the largest alignment pad, and enough for 3 to 5
    wherever they land.

    #### Diagnostics
    If the total exceeds what a CTA can have (227 KiB, or with
    `ctas_per_sm` = N its share of the SM, 228 KiB / N less 1 KiB), the
    kernel gets an error with a note per placement: each channel with its
    depth and slot size, each partition's scratch, the barriers and records,
    and the slack.
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

def WarpSpecLowerProtocolPass : Pass<"warpspec-lower-protocol", "ModuleOp"> {
  let summary = "Lower the channel protocol to ring positions and mbarrier-level ops";
  let description = [{
    Replaces the channel protocol of every `warpspec.kernel` (acquire,
    commit, close, get, consume, release, tile_position, and the slot values
    they pass) by what it means on the mbarriers, with the ring state as SSA
    values, so that the NVVM conversion keeps no state of its own:

    - each partition carries one ring position (an i32 entry number) per
      channel it acquires, gets or closes: `warpspec.replica_id` (or 0 for
      a single replica) at its start, advanced by its own partition's
      replica count at each commit or get (consumer partitions of one
      channel may have different counts), carried through
      `warpspec.tile_loop` as `iter_args` and through consume loops as
      `scf.while` values;
    - `warpspec.ring_slot` splits a position into the slot and the phase
      bit, `warpspec.wait_empty` / `warpspec.wait_full` wait on the slot's
      barriers, `warpspec.expect_tx` announces the bytes of the TMA copies
      into it, `warpspec.slot_buffers` gives its buffers,
      `warpspec.publish` / `warpspec.publish_close` write its record and
      arrive, `warpspec.read_tile` reads the record and
      `warpspec.arrive_empty` gives the slot back;
    - a `warpspec.consume` becomes an `scf.while` that waits for the next
      slot due to the replica and reads its record before each iteration,
      and leaves on the `publish_close` record (-1 rows); a close
      publishes one such record per replica of the most replicated
      consumer partition;
    - an `l2_prefetch` acquire becomes `warpspec.tma_prefetch` ops for the
      copies into its slot, then the wait.

    Example: a producer's loop

    ```mlir
    warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32> ... {
      %slot, %b = warpspec.acquire %x : !one
      warpspec.tma_load %q[%row, %head] into %b : !act, !tile
      warpspec.commit %slot tile(%row, %rows, %head)
    }
    warpspec.close %x : !one
    ```

    becomes

    ```mlir
    %c0 = arith.constant 0 : i32
    %last = warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32> ...
        iter_args(%e = %c0) -> (i32) {
      %stage, %phase = warpspec.ring_slot %x[%e] : !one
      warpspec.wait_empty %x[%stage] phase(%phase) : !one
      warpspec.expect_tx %x[%stage] bytes(8192) : !one
      %b = warpspec.slot_buffers %x[%stage] : !one
      warpspec.tma_load %q[%row, %head] into %b : !act, !tile
      warpspec.publish %x[%stage] tile(%row, %rows, %head) : !one
      %c1 = arith.constant 1 : i32
      %next = arith.addi %e, %c1 : i32
      warpspec.yield %next : i32
    }
    %s, %p = warpspec.ring_slot %x[%last] : !one
    warpspec.wait_empty %x[%s] phase(%p) : !one
    warpspec.publish_close %x[%s] : !one
    ```

    #### Diagnostics
    A protocol op nested in an op other than `warpspec.tile_loop` and
    `warpspec.consume` (an `scf.if`, say) is reported: the pass would have
    to carry the ring position through a region it does not know.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def WarpSpecDispatchPartitionsPass
    : Pass<"warpspec-dispatch-partitions", "ModuleOp"> {
  let summary = "Place every partition on its warps and make its dispatch explicit";
  let description = [{
    Gives every `warpspec.partition` of a kernel its warps and its named
    barriers, in the order of the partitions: `first_warp` (the partitions
    and their replicas on consecutive warps from warp 0) and `barrier_base`
    (one named barrier per replica, from 1; barrier 0 is the CTA's). Then it
    writes what a partition does on the warps it runs on as ops, so that the
    NVVM conversion lowers each on its own:

    - `warpspec.set_max_registers` first, where `regs` differs from the
      registers the kernel is launched with (`setmaxnreg` waits until the
      registers other warpgroups released are available, so this comes
      before anything else);
    - `warpspec.partition_index`: the replica and the thread in the replica,
      which replaces every `warpspec.replica_id`;
    - for a `load` or `mma` partition, the body in a `warpspec.single_thread`
      (one thread issues the copies and the MMAs), but its
      `warpspec.scratch` buffers, which belong to the partition itself (one
      copy per replica): they come before the region, in their order;
    - the teardown: a `warpspec.wait_bulk_stores` on thread 0 where the
      partition made bulk tensor stores, and, in a kernel that uses tensor
      memory, `warpspec.tmem_release` in every partition that uses it
      (`arrive`) and in the partition of warp 0 (`dealloc`).

    Example: with a launch cap of 168 registers,

    ```mlir
    warpspec.partition "producer" role(load) warps(4) regs(40) {
      %r = warpspec.replica_id
      warpspec.tile_loop ... { ... }
    }
    ```

    becomes

    ```mlir
    warpspec.partition "producer" role(load) warps(4) regs(40)
        first_warp(0) barrier_base(1) {
      warpspec.set_max_registers decrease 40
      %replica, %thread = warpspec.partition_index
      warpspec.single_thread %thread {
        warpspec.tile_loop ... { ... }      // %r replaced by %replica
      }
    }
    ```

    Kernels whose partitions are all placed already are left alone.

    #### Diagnostics
    A kernel with some partitions placed and others not is reported (the
    pass places a kernel's partitions together), and so is one whose
    partitions have more replicas than the 15 named barriers a CTA has
    besides barrier 0 (each replica gathers its threads at its own barrier;
    the 32 warps of a CTA already keep a verified kernel within them).
  }];
}

def WarpSpecInsertTracePass : Pass<"warpspec-insert-trace", "ModuleOp"> {
  let summary = "Record the pipeline events of every warp role into a trace buffer";
  let description = [{
    Makes every `warpspec.kernel` traced: its function gets the suffix
    `_trace` (so that the traced kernel, its PTX and its manifest never pass
    for the untraced one) and one more argument, the trace buffer (`memref<?xi64>`, named `trace`, which
    becomes a kernel parameter), the kernel `trace_records` = `records`,
    and each placed partition records its pipeline events with
    `warpspec.trace`:

    - a `warpspec.trace_lane` after its `warpspec.partition_index` (one
      lane per replica, recorded by the replica's thread 0);
    - `warpspec.trace_anchor start` in the kernel, before its partitions
      (the barrier that releases them follows it), and, in the partition of
      warp 0, `warpspec.trace_anchor end` last;
    - `tile_begin` (with the tile's row) and `tile_end` around the body of
      every tile loop and consume loop (the `scf.while` of a lowered
      `consume`);
    - `wait_begin` / `wait_end` around every `wait_empty` and `wait_full`,
      with the channel's index as the detail;
    - `arrive` after every `publish`, `publish_close` and `arrive_empty`
      (the channel's index), `copy` after every `tma_load`;
    - `mma_begin` / `mma_end` around `mma` and `mma_async`,
      `softmax_begin` / `softmax_end` around `softmax` and `softmax_grad`,
      `store_begin` / `store_end` around `store` and `write`,
      `rotate_begin` / `rotate_end` around `rotate`, `rotate_tile` and
      `rotary_angles`, `tmem_begin` / `tmem_end` around `tmem_load` and
      `tmem_store`.

    It runs on lowered, dispatched kernels (after
    `warpspec-dispatch-partitions`), only when a trace is asked for
    (`blockattn-to-ptx{trace-records=N}`, `block-attn-compile --trace`): an
    untraced kernel has none of these ops, so it is unchanged.

    Example: a consumer's wait

    ```mlir
    %replica, %thread = warpspec.partition_index
    ...
    warpspec.wait_full %qkv[%stage] phase(%phase) : !qkv
    ```

    becomes

    ```mlir
    %replica, %thread = warpspec.partition_index
    %lane = warpspec.trace_lane %trace[%replica] thread(%thread) : memref<?xi64>
    ...
    warpspec.trace %lane wait_begin
    warpspec.wait_full %qkv[%stage] phase(%phase) : !qkv
    warpspec.trace %lane wait_end
    ```

    #### Diagnostics
    A kernel that is traced already, whose partitions are not placed, or
    whose function is not `warpspec.kernel; return` is reported.
  }];
  let options = [
    Option<"records", "records", "int64_t", /*default=*/"256",
           "Records per lane (partition replica) and CTA, a power of two "
           "from 4 to 65536; later events of a full lane are dropped">
  ];
}

#endif // BLOCKATTN_DIALECT_WARPSPEC_TRANSFORMS_PASSES_TD
