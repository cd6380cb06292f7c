//===- WarpSpecOps.td - warpspec operations ----------------*- tablegen -*-===//
//
// Kernel structure (kernel, partition, channel), the channel protocol
// (acquire/commit/close on the producer side, consume/release on the consumer
// side), the persistent tile loop, and the tile operations.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_DIALECT_WARPSPEC_IR_WARPSPECOPS_TD
#define BLOCKATTN_DIALECT_WARPSPEC_IR_WARPSPECOPS_TD

include "blockattn/Dialect/WarpSpec/IR/WarpSpecDialect.td"
include "blockattn/Dialect/WarpSpec/IR/WarpSpecAttrs.td"
include "blockattn/Dialect/WarpSpec/IR/WarpSpecTypes.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/RegionKindInterface.td"

/// Where the rotary ops read a tile's positions: a positions tensor (an i32
/// memref over the tokens, read at `row + r`) or the tile's own positions in
/// a slot of the load ring (a 1-D i32 shared-memory buffer that
/// `warpspec.copy_positions` filled, read at `r`).
def WarpSpec_PositionsSource : AnyTypeOf<[AnyMemRef, WarpSpec_BufferType],
    "an i32 memref over the tokens or a 1-D i32 shared-memory buffer">;

//===----------------------------------------------------------------------===//
// Kernel structure
//===----------------------------------------------------------------------===//

def WarpSpec_KernelOp : WarpSpec_Op<"kernel", [
    SingleBlock, NoTerminator, RecursiveMemoryEffects]> {
  let summary = "a warp-specialized kernel: channels and partitions";
  let description = [{
    The `warpspec.kernel` operation is one GPU kernel, as it runs on one SM of
    `chip` (a `#warpspec<chip ...>`, printed bare: `chip(sm_90a)` or
    `chip(sm_100a)`; any other chip is a parse error). Its body declares the
    channels (`warpspec.channel`) and then the partitions
    (`warpspec.partition`), which run concurrently on disjoint warps of one
    CTA, in the order written: partition 0 gets the first warps. It may also
    hold side-effect-free values the partitions share (`memref.dim` of the
    kernel's memrefs, constants) and, in a traced kernel, the trace's
    `warpspec.trace_anchor start`. Values from above (the enclosing function's
    arguments) are the kernel's parameters.

    The kernel's properties that the launch needs are attributes:
    `smem_bytes` (dynamic shared memory, written by `warpspec-allocate-smem`)
    and `tmem_columns` (tensor memory, written by `warpspec-allocate-tmem`;
    `tmem_base_offset` is where in shared memory `tcgen05.alloc` writes the
    tensor-memory address, followed by the barrier that holds its release
    until every partition is done with it);
    `info` carries what the `blockattn` op described (kind, block size, head
    dim, element type, rotary mode), for the launch manifest.
    `ctas_per_sm` (default 1) is how many CTAs of the kernel share an SM: the
    register file and shared memory are divided among them, so the budgets
    below are per share. `tiles_per_cta`, when present, makes the launch
    chunked instead of persistent: one CTA per `tiles_per_cta` work items
    (the tile loop must then be contiguous), so that the hardware hands out
    the tiles in order as CTAs finish. `trace_records`, when present, makes
    the kernel traced (`warpspec-insert-trace`): each partition replica
    records up to that many `warpspec.trace` events per CTA.

    The verifier checks the hardware budgets (`TargetLimits` in
    WarpSpecOps.h): every partition is made of whole warpgroups
    (`setmaxnreg` works per warpgroup), register budgets are multiples of 8
    in [24, 256] and fit the registers the CTA is launched with (its share
    of the 64K-register file, evenly per thread and rounded down to a
    multiple of 8: `setmaxnreg` only moves registers within that pool, and
    an increase that the pool cannot cover waits forever), the CTA has at
    most 1024 threads, shared memory fits 227 KiB (or the CTA's share of the
    SM's 228 KiB, less 1 KiB the hardware reserves per CTA) and tensor
    memory 512 columns; and the channel protocol: each channel has exactly
    one producer partition, which closes it, and at least one consumer
    partition.

    Example:

    ```mlir
    warpspec.kernel chip(sm_90a) {
      %qkv = warpspec.channel "qkv" depth(4)
          : !warpspec.channel<[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
      warpspec.partition "producer" role(load) warps(4) regs(40) {
        ...
      }
      warpspec.partition "consumer" role(compute) warps(4) regs(232) replicas(2) {
        ...
      }
    }
    ```
  }];
  let arguments = (ins WarpSpec_ChipAttr:$chip,
                       OptionalAttr<I64Attr>:$smem_bytes,
                       OptionalAttr<I64Attr>:$tmem_columns,
                       OptionalAttr<I64Attr>:$tmem_base_offset,
                       OptionalAttr<DictionaryAttr>:$info,
                       OptionalAttr<I64Attr>:$ctas_per_sm,
                       OptionalAttr<I64Attr>:$tiles_per_cta,
                       OptionalAttr<I64Attr>:$trace_records);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat =
      "`chip` `(` custom<Chip>($chip) `)` attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// Partitions in launch order.
    SmallVector<PartitionOp, 4> getPartitions();
    /// Channels in declaration order.
    SmallVector<ChannelOp, 4> getChannels();
    /// Threads per CTA (all partitions and replicas).
    int64_t getNumThreads();
    /// Whether a partition holds an op that accesses tensor memory
    /// (warpspec::isTensorMemoryOp).
    bool usesTensorMemory();
    /// True for the Blackwell target.
    bool isBlackwell() { return getChip() == Chip::sm_100a; }
    /// The trace buffer's layout per CTA, when the kernel is traced.
    std::optional<TraceLayout> getTraceLayout();
    /// CTAs of this kernel that share one SM (1 unless stated).
    int64_t getCtasPerSmOrDefault() { return getCtasPerSm().value_or(1); }
    /// Registers per thread the CTA is launched with.
    int64_t getLaunchRegisterCap() {
      return TargetLimits::launchRegisterCap(getNumThreads(),
                                             getCtasPerSmOrDefault());
    }
  }];
}

def WarpSpec_ChannelOp : WarpSpec_Op<"channel", [HasParent<"KernelOp">]> {
  let summary = "a ring buffer through which one partition hands tiles on";
  let description = [{
    The `warpspec.channel` operation declares a ring of `depth` slots. Each
    slot holds one buffer of each type in the channel type plus the
    coordinates of the tile in it. One partition produces into the channel
    (`warpspec.acquire` a free slot, fill it, `warpspec.commit` it; finally
    `warpspec.close`), other partitions consume from it
    (`warpspec.consume` iterates over committed slots in order; the body
    gives the slot back with `warpspec.release`). A consumer partition with
    `replicas(R)` takes the slots round-robin: replica `r` gets slots
    `r, r+R, ...`.

    The lowering gives each slot a `full` and an `empty` mbarrier, whose
    phases `warpspec-lower-protocol` makes explicit (`warpspec.ring_slot`);
    `warpspec-allocate-smem` writes where the buffers
    (`buffer_offset`, slot `s` at `buffer_offset + s * slot_stride`), the
    barriers (`barrier_offset`) and the tile coordinates (`info_offset`) live.
    A slot's 1-D buffers (a tile's positions) need none of the tiles'
    1024-byte swizzle alignment: they live apart, slot `s`'s at `rows_offset
    + s * R` (`R` their bytes, a multiple of 16), so that 256 bytes of
    positions do not cost a 1 KiB step of every slot.

    The verifier bounds what later becomes a size or an address: `depth` is
    at most 7264 (every slot takes 32 bytes of shared memory for its
    barriers and record, whatever its buffers, and a CTA has 227 KiB), the
    offsets lie inside those 227 KiB, and each `tmem_slots` entry is a lane
    in [0, 128) and a column range inside the 512 columns of tensor memory.

    Example (q, k, v of a tile, four slots deep):

    ```mlir
    %qkv = warpspec.channel "qkv" depth(4)
        : !warpspec.channel<[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
    ```
  }];
  let arguments = (ins StrAttr:$name,
                       ConfinedAttr<I64Attr, [IntPositive]>:$depth,
                       OptionalAttr<I64Attr>:$buffer_offset,
                       OptionalAttr<I64Attr>:$slot_stride,
                       OptionalAttr<I64Attr>:$barrier_offset,
                       OptionalAttr<I64Attr>:$info_offset,
                       OptionalAttr<DenseI64ArrayAttr>:$tmem_slots,
                       OptionalAttr<I64Attr>:$rows_offset);
  let results = (outs WarpSpec_ChannelType:$channel);
  let assemblyFormat = "$name `depth` `(` $depth `)` attr-dict `:` type($channel)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ChannelType getChannelType() { return getChannel().getType(); }
    bool inTensorMemory() {
      return getChannelType().getMemorySpace() == MemorySpace::tmem;
    }
    /// True once the allocators placed the channel: warpspec-allocate-smem
    /// (barriers, records, shared-memory slots) and, for tensor-memory
    /// channels, warpspec-allocate-tmem (`tmem_slots`: lane and column of
    /// each slot, [lane0, column0, lane1, column1, ...]).
    /// One past the last tensor-memory column the slots of `tmem_slots`
    /// span; none without them.
    std::optional<int64_t> getTmemColumnsEnd();
    bool isAllocated() {
      bool barriers = getBarrierOffset() && getInfoOffset();
      if (inTensorMemory())
        return barriers && getTmemSlots() &&
               getTmemSlots()->size() == 2 * getDepth();
      return barriers && getBufferOffset() && getSlotStride() &&
             (getChannelType().getRowBuffersSizeInBytes() == 0 ||
              getRowsOffset());
    }
  }];
}

def WarpSpec_PartitionOp : WarpSpec_Op<"partition", [
    SingleBlock, NoTerminator, HasParent<"KernelOp">, RecursiveMemoryEffects]> {
  let summary = "a group of warpgroups that plays one role";
  let description = [{
    The `warpspec.partition` operation runs its body on `warps` warps
    (`replicas` times, on disjoint warps: each replica is an independent copy
    that takes its share of the slots of the channels it consumes). `regs` is
    the per-thread register budget the lowering sets with `setmaxnreg` when
    the partition starts. Partitions only talk through channels.

    A partition whose `regs` equal the launch's per-thread budget (what
    every thread starts with) gets no `setmaxnreg`: it keeps what it
    launched with. `explicit` (the unit attribute `explicit_regs`) asks for
    the instruction anyway (`setmaxnreg.inc` at that same count): ptxas
    allocates a warpgroup's code against the count its `setmaxnreg` names,
    and without one it has spilled code that fits the same count with it
    (docs/pipeline.md, "Register budgets"). A plan sets it only where ptxas
    needs it, so other kernels' code is unchanged.

    `pinned_bases` makes the lowering derive every shared-memory address
    of the partition (buffers, barriers, slot records) from the kernel's
    shared-memory bases pinned where it is used (an empty inline asm that
    LLVM can neither hoist nor share), so that LLVM holds no address
    computed from them through the partition, nor computes them once before
    the partitions branch. ptxas keeps the bases themselves (uniform
    registers) and folds the constant offsets into the instructions; where
    LLVM held the addresses, ptxas spilled them at the partition's entry in
    kernels near their register budget (docs/head-dims.md, session 22).
    Its staged stores (`warpspec.store ... via`) likewise derive each
    thread's first copied row where a tile is copied out, not once at the
    partition's entry (session 23). A plan sets it only where it removes
    spills, so other kernels' code is unchanged.

    A CTA has at most 1024 threads, so `warps` is a multiple of 4 up to 32
    and `warps x replicas` at most 32.

    `warpspec-dispatch-partitions` places the partition: `first_warp` is
    its first warp in the CTA (replica `r` runs on warps
    `first_warp + r * warps` to `first_warp + (r + 1) * warps - 1`) and
    `barrier_base` the named barrier of its replica 0 (replica `r` gathers
    at `barrier_base + r`; barrier 0 is the CTA's). The conversion runs the
    body on the warps of that range only.

    Example:

    ```mlir
    warpspec.partition "consumer" role(compute) warps(4) regs(232) replicas(2) {
      warpspec.consume %qkv (%row, %rows, %head, %q, %k, %v) : !qkv {
        ...
      }
    }
    warpspec.partition "accumulate1" role(compute) warps(4) regs(128) explicit {
      ...
    }
    ```
  }];
  let arguments = (ins StrAttr:$name,
                       WarpSpec_RoleAttr:$role,
                       I64Attr:$num_warps,
                       I64Attr:$num_regs,
                       DefaultValuedAttr<I64Attr, "1">:$replicas,
                       OptionalAttr<I64Attr>:$first_warp,
                       OptionalAttr<I64Attr>:$barrier_base,
                       UnitAttr:$explicit_regs,
                       UnitAttr:$pinned_bases);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $name `role` `(` custom<Role>($role) `)` `warps` `(` $num_warps `)` `regs` `(` $num_regs `)`
    (`explicit` $explicit_regs^)?
    (`pinned_bases` $pinned_bases^)?
    (`replicas` `(` $replicas^ `)`)?
    (`first_warp` `(` $first_warp^ `)`)?
    (`barrier_base` `(` $barrier_base^ `)`)? attr-dict-with-keyword $body
  }];
  let builders = [
    // A partition not yet placed (what the specialization builds).
    OpBuilder<(ins "StringAttr":$name, "RoleAttr":$role,
                   "IntegerAttr":$num_warps, "IntegerAttr":$num_regs,
                   "IntegerAttr":$replicas), [{
      build($_builder, $_state, name, role, num_warps, num_regs, replicas,
            IntegerAttr(), IntegerAttr(), UnitAttr(), UnitAttr());
    }]>
  ];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getNumThreads() { return getNumWarps() * 32 * getReplicas(); }
    /// Whether warpspec-dispatch-partitions placed it (`first_warp`,
    /// `barrier_base`) and made its dispatch explicit.
    bool isDispatched() { return getFirstWarp().has_value(); }
    /// Whether its body runs on one thread per replica (load and mma issue
    /// from one elected thread); the other roles run on every thread.
    bool isSingleThreaded() {
      return getRole() == Role::load || getRole() == Role::mma;
    }
    /// Whether its body holds an op that accesses tensor memory
    /// (warpspec::isTensorMemoryOp).
    bool usesTensorMemory();
  }];
}

//===----------------------------------------------------------------------===//
// Persistent schedule
//===----------------------------------------------------------------------===//

def WarpSpec_TileLoopOp : WarpSpec_Op<"tile_loop", [
    SingleBlock, NoTerminator, RecursiveMemoryEffects,
    AttrSizedOperandSegments]> {
  let summary = "the persistent loop over the (block, head) tiles of a jagged batch";
  let description = [{
    The `warpspec.tile_loop` operation runs its body once for each tile this
    CTA owns. The tiles are the blocks of `block_size` tokens of every
    sequence delimited by `cu_seqlens` (i32 `[B+1]`), times `num_heads`
    heads; `num_tokens` is T = `cu_seqlens[B]`. The body receives the tile's
    first token row, its number of valid rows (1 to `block_size`; only a
    sequence's last block is partial) and its head, and, if it takes a
    fourth argument, the position of that first row inside its sequence.

    Tiles are numbered without a prefix sum, so with no host synchronization
    and no preparation kernel: block `j` of sequence `b` gets the virtual
    number `v = floor(cu_seqlens[b] / block_size) + b + j`, which is
    increasing and below `floor(T / block_size) + B`; a few numbers (at most
    one per sequence) name no block and are skipped. With heads innermost,
    the work items `v * num_heads + h` are dealt to the CTAs of the
    persistent grid round-robin (CTA `c` of `G` takes items `c, c + G, ...`),
    so that at any time the grid works on neighbouring rows of memory; with
    `contiguous`, each CTA takes one contiguous range instead. A CTA finds its
    first sequence by binary search over `cu_seqlens`, then walks forward.
    Empty sequences own no block.

    With `packed(k)`, blocks share tiles: tile `t` holds the blocks of the
    `k` virtual numbers `k t ... k t + k - 1` (`k * block_size` is the
    MMA's 64 rows), back to back in memory, so one tile may hold the blocks
    of several sequences. The work items are `ceil(V / k) * num_heads`, with
    `V = floor(T / block_size) + B`. The body then takes a fourth argument
    (there is no position argument): the tile's block ends, byte `q` (of
    the i32) the end row, inside the tile, of its `q`-th virtual number's
    block (a number that names no block ends where the one before it does),
    so the last byte is the tile's valid rows (`warpspec.mask_blocks` reads
    them). Tiles without rows (their numbers name no block) are skipped.

    With `iter_args`, the loop carries values from tile to tile (the ring
    positions that `warpspec-lower-protocol` makes explicit): the body takes
    them after the tile's arguments and ends with a `warpspec.yield` of
    their next values, and the loop returns their values after its last
    tile (the initial ones if the CTA has none).

    Example:

    ```mlir
    warpspec.tile_loop (%row, %rows, %head) in %cu_seqlens : memref<?xi32>
        heads(%h) tokens(%t) block_size(64) {
      ...
    }
    warpspec.tile_loop (%row, %rows, %head) in %cu_seqlens : memref<?xi32>
        heads(%h) tokens(%t) block_size(64)
        dynamic(%schedule : memref<2xi32>) {
      ...
    }
    %last = warpspec.tile_loop (%row, %rows, %head) in %cu_seqlens
        : memref<?xi32> heads(%h) tokens(%t) block_size(64)
        iter_args(%entry = %c0) -> (i32) {
      ...
      warpspec.yield %next : i32
    }
    ```
  }];
  let arguments = (ins AnyMemRef:$cu_seqlens,
                       Index:$num_heads,
                       Index:$num_tokens,
                       Optional<AnyMemRef>:$schedule,
                       Variadic<AnyType>:$inits,
                       I64Attr:$block_size,
                       UnitAttr:$contiguous,
                       OptionalAttr<I64Attr>:$packed);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "Value":$cu_seqlens, "Value":$num_heads,
                   "Value":$num_tokens, "IntegerAttr":$block_size,
                   "UnitAttr":$contiguous), [{
      build($_builder, $_state, TypeRange(), cu_seqlens, num_heads,
            num_tokens, /*schedule=*/Value(), ValueRange(), block_size,
            contiguous, /*packed=*/IntegerAttr());
    }]>
  ];
  let extraClassDeclaration = [{
    /// The body's arguments that carry the iter_args (after the tile's row,
    /// rows, head and optional position).
    Block::BlockArgListType getRegionIterArgs() {
      return getBody().front().getArguments().take_back(getInits().size());
    }
  }];
}

//===----------------------------------------------------------------------===//
// Channel protocol
//===----------------------------------------------------------------------===//

def WarpSpec_AcquireOp : WarpSpec_Op<"acquire", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "producer: wait for the next free slot of a channel";
  let description = [{
    The `warpspec.acquire` operation waits until the producer's next slot is
    free (all its consumers released it) and returns the slot and its
    buffers. The slot must be published exactly once, by a `warpspec.commit`
    of it in the same block, and before the next `warpspec.acquire` or the
    `warpspec.close` of the channel (a producer fills its slots in ring
    order, one at a time).

    With `l2_prefetch`, the producer first asks for the tiles that the
    `warpspec.tma_load` copies into this slot will read to be brought into
    L2 (a bulk tensor prefetch each), then waits for the slot: the reads
    from DRAM start while the slot is still in use, and the copies find the
    data in L2. The copies' coordinates must therefore be known before the
    acquire. It adds loads in flight without shared memory; whether that
    pays depends on the kernel (see the `l2-prefetch` option of
    `blockattn-warp-specialize`).

    ```mlir
    %slot, %q, %k, %v = warpspec.acquire %qkv : !qkv
    %slot, %q, %k, %v = warpspec.acquire %qkv {l2_prefetch} : !qkv
    ```
  }];
  let arguments = (ins WarpSpec_ChannelType:$channel, UnitAttr:$l2_prefetch);
  let results = (outs WarpSpec_SlotType:$slot,
                      Variadic<WarpSpec_BufferType>:$buffers);
  let assemblyFormat = "$channel attr-dict `:` type($channel)";
  let hasVerifier = 1;
}

def WarpSpec_CommitOp : WarpSpec_Op<"commit"> {
  let summary = "producer: publish the acquired slot with its tile coordinates";
  let description = [{
    The `warpspec.commit` operation hands the slot `slot` (the result of a
    `warpspec.acquire`) to the consumers, together with the tile's first
    row, number of valid rows and head. The consumers see the slot once every
    asynchronous copy into it (`warpspec.tma_load` into its buffers) has
    landed: on shared memory the lowering counts the bytes of those copies
    into the slot's `full` barrier.

    With `position(%p)`, the record also carries the position of the tile's
    first row inside its sequence, which consumers read with
    `warpspec.tile_position` (rotary embeddings need it).

    With `landed`, the producer then waits until the slot is complete (the
    copies into it landed), as its consumers do: a producer whose threads
    go on to work on the loaded tiles in place (the sm_90a column-pass
    producer rotating them, and signalling its consumers through another
    channel that they wait on before they read the slot).

    ```mlir
    warpspec.commit %slot tile(%row, %rows, %head)
    warpspec.commit %slot tile(%row, %rows, %head) position(%pos)
    warpspec.commit %slot tile(%row, %rows, %head) landed
    ```
  }];
  let arguments = (ins WarpSpec_SlotType:$slot, I32:$row, I32:$rows,
                       I32:$head, Optional<I32>:$position, UnitAttr:$landed);
  let assemblyFormat = [{
    $slot `tile` `(` $row `,` $rows `,` $head `)`
    (`position` `(` $position^ `)`)? (`landed` $landed^)? attr-dict
  }];
  let builders = [
    OpBuilder<(ins "Value":$slot, "Value":$row, "Value":$rows,
                   "Value":$head), [{
      build($_builder, $_state, slot, row, rows, head, Value(), UnitAttr());
    }]>
  ];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The channel of the committed slot.
    Value getChannel();
  }];
}

def WarpSpec_TilePositionOp : WarpSpec_Op<"tile_position", [Pure]> {
  let summary = "position in its sequence of the first row of the current tile";
  let description = [{
    The `warpspec.tile_position` operation returns the position that the
    producer committed with the slot `slot`, which this consumer holds (the
    slot of a `warpspec.consume` or a `warpspec.get`): the index, inside its
    sequence, of the tile's first row.

    ```mlir
    %pos = warpspec.tile_position %slot
    ```
  }];
  let arguments = (ins WarpSpec_SlotType:$slot);
  let results = (outs I32:$position);
  let assemblyFormat = "$slot attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The channel of the slot.
    Value getChannel();
  }];
}

def WarpSpec_CloseOp : WarpSpec_Op<"close"> {
  let summary = "producer: no more tiles; every consumer loop ends";
  let description = [{
    The `warpspec.close` operation tells every consumer of the channel (every
    replica of every consuming partition) that no slot follows, so that their
    `warpspec.consume` loops end. The producer must close each channel it
    produces after its last commit.

    ```mlir
    warpspec.close %qkv : !qkv
    ```
  }];
  let arguments = (ins WarpSpec_ChannelType:$channel);
  let assemblyFormat = "$channel attr-dict `:` type($channel)";
}

def WarpSpec_ConsumeOp : WarpSpec_Op<"consume", [
    SingleBlock, NoTerminator, RecursiveMemoryEffects]> {
  let summary = "consumer: run the body on every slot of a channel, in order";
  let description = [{
    The `warpspec.consume` operation waits for each slot of `channel` this
    partition replica is due (every `replicas`-th one) until the producer
    closes the channel, and runs the body on it. The body receives the slot,
    the tile's first row, valid rows and head, then one buffer per channel
    buffer type; it must give the slot back with exactly one
    `warpspec.release` of it, directly in the body.

    ```mlir
    warpspec.consume %qkv (%slot, %row, %rows, %head, %q, %k, %v) : !qkv {
      ...
      warpspec.release %slot
    }
    ```
  }];
  let arguments = (ins WarpSpec_ChannelType:$channel);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The body's arguments: the slot, the tile's first row, valid rows and
    /// head, then the slot's buffers.
    BlockArgument getSlot() { return getBody().front().getArgument(0); }
    BlockArgument getRow() { return getBody().front().getArgument(1); }
    BlockArgument getRows() { return getBody().front().getArgument(2); }
    BlockArgument getHead() { return getBody().front().getArgument(3); }
    Block::BlockArgListType getBufferArgs() {
      return getBody().front().getArguments().drop_front(4);
    }
  }];
}

def WarpSpec_GetOp : WarpSpec_Op<"get", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "consumer: wait for the next committed slot of a channel";
  let description = [{
    The `warpspec.get` operation takes the next slot of `channel` this
    partition replica is due (replicas take slots round-robin), waiting until
    the producer committed it, and returns the slot and its buffers. Unlike
    `warpspec.consume`, it takes one slot, inside some other loop (for
    example the MMA warp takes the P of the tile it is working on). The slot
    must be given back exactly once, by a `warpspec.release` of it in the
    same block, before the next `warpspec.get` of the channel.

    ```mlir
    %slot, %p = warpspec.get %pch : !warpspec.channel<[64x64xbf16], tmem>
    ```
  }];
  let arguments = (ins WarpSpec_ChannelType:$channel);
  let results = (outs WarpSpec_SlotType:$slot,
                      Variadic<WarpSpec_BufferType>:$buffers);
  let assemblyFormat = "$channel attr-dict `:` type($channel)";
  let hasVerifier = 1;
}

def WarpSpec_ReleaseOp : WarpSpec_Op<"release"> {
  let summary = "consumer: give the current slot back to the producer";
  let description = [{
    The `warpspec.release` operation tells the producer that this consumer
    is done with the slot `slot` (the slot of a `warpspec.consume` or a
    `warpspec.get`): every read of its buffers has completed. With
    `after_mma`, the reads are the asynchronous tensor-core MMAs this thread
    issued: the slot is released when they complete (a `tcgen05.commit` on
    sm_100a), not when the thread gets here. With `after_stores`, the reads
    include those of the bulk tensor stores that the replica staged in the
    slot's buffers (`warpspec.store ... via(%slot_buffer) bulk`): the thread
    that issued them waits until they have read shared memory
    (`cp.async.bulk.wait_group.read 0`) before it gives the slot back, so
    that the producer's next copy into the slot cannot overwrite a gradient
    still on its way out.

    ```mlir
    warpspec.release %slot
    warpspec.release %slot after_mma
    warpspec.release %slot after_stores
    ```
  }];
  let arguments = (ins WarpSpec_SlotType:$slot, UnitAttr:$after_mma,
                       UnitAttr:$after_stores);
  let assemblyFormat =
      "$slot (`after_mma` $after_mma^)? (`after_stores` $after_stores^)? attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The channel of the released slot.
    Value getChannel();
  }];
}

//===----------------------------------------------------------------------===//
// The lowered protocol (warpspec-lower-protocol)
//===----------------------------------------------------------------------===//
//
// What `warpspec-lower-protocol` turns the channel protocol into: ring
// positions as i32 SSA values that the partitions carry through their loops
// (the `iter_args` of `warpspec.tile_loop`, `scf.while` for a consume loop),
// the slot and phase bit of each position, and one op per mbarrier or tile
// record access on a slot. Each of these ops names its slot as `%ch[%stage]`:
// the channel and the slot index (an i32 in [0, depth)).

def WarpSpec_ReplicaIdOp : WarpSpec_Op<"replica_id", [Pure]> {
  let summary = "which replica of its partition the thread belongs to";
  let description = [{
    The `warpspec.replica_id` operation returns the index, in
    `[0, replicas)`, of the replica of the enclosing `warpspec.partition`
    that runs it. Replica `r` of `R` takes ring entries `r, r + R, ...`, so
    this is where its ring positions start.

    ```mlir
    %r = warpspec.replica_id
    ```
  }];
  let results = (outs I32:$replica);
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Partition dispatch (made explicit by warpspec-dispatch-partitions)
//===----------------------------------------------------------------------===//

def WarpSpec_SetMaxRegistersOp : WarpSpec_Op<"set_max_registers",
    [HasParent<"PartitionOp">]> {
  let summary = "rebalance the partition's registers (setmaxnreg)";
  let description = [{
    The `warpspec.set_max_registers` operation sets the per-thread register
    count of the warpgroups that run it to `count`, up (`increase`) or down
    (`decrease`) from what the CTA was launched with
    (`setmaxnreg.inc/dec.sync.aligned.u32`). `warpspec-dispatch-partitions`
    puts it first in a partition whose `regs` differ from the launch cap,
    and in an `explicit` partition (`explicit_regs`) at the cap too; the
    direction must agree with that cap (`increase` at the cap, only in an
    `explicit` partition), and `count` is a multiple of 8 in [24, 256].

    ```mlir
    warpspec.set_max_registers increase 232
    ```
  }];
  let arguments = (ins WarpSpec_RegisterActionAttr:$action, I64Attr:$count);
  let assemblyFormat = "custom<RegisterAction>($action) $count attr-dict";
  let hasVerifier = 1;
}

def WarpSpec_PartitionIndexOp : WarpSpec_Op<"partition_index",
    [Pure, HasParent<"PartitionOp">]> {
  let summary = "the replica and the thread of a placed partition";
  let description = [{
    The `warpspec.partition_index` operation returns which replica of its
    placed (`first_warp`) partition runs it, in `[0, replicas)`, and the
    thread's index in that replica, in `[0, warps * 32)`. It stands at the
    start of every partition `warpspec-dispatch-partitions` placed (at most
    one per partition): the replica is where the partition's ring positions
    start, the thread is what single-thread regions and the ops that split a
    tile over the replica's threads compare against.

    ```mlir
    %replica, %thread = warpspec.partition_index
    ```
  }];
  let results = (outs I32:$replica, I32:$thread);
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def WarpSpec_SingleThreadOp : WarpSpec_Op<"single_thread", [
    SingleBlock, NoTerminator, HasParent<"PartitionOp">,
    RecursiveMemoryEffects]> {
  let summary = "a region only thread 0 of each replica runs";
  let description = [{
    The `warpspec.single_thread` operation runs its body on the thread whose
    index in its replica (`thread`, the result of the partition's
    `warpspec.partition_index`) is 0; the others skip it. Load and MMA
    partitions issue from one thread: `warpspec-dispatch-partitions` wraps
    their body in one, and their slot ops then arrive without gathering the
    replica first.

    ```mlir
    %replica, %thread = warpspec.partition_index
    warpspec.single_thread %thread {
      warpspec.tile_loop ... { ... }
    }
    ```
  }];
  let arguments = (ins I32:$thread);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$thread attr-dict-with-keyword $body";
  let hasVerifier = 1;
}

def WarpSpec_WaitBulkStoresOp : WarpSpec_Op<"wait_bulk_stores",
    [HasParent<"SingleThreadOp">]> {
  let summary = "wait until this thread's bulk tensor stores have completed";
  let description = [{
    The `warpspec.wait_bulk_stores` operation waits until every bulk tensor
    store the thread issued has completed (`cp.async.bulk.wait_group 0`).
    Bulk stores read shared memory asynchronously, so a partition that made
    any (`warpspec.store ... bulk`) must wait before the CTA exits and frees
    that memory: `warpspec-dispatch-partitions` puts one at its end, in a
    `warpspec.single_thread` (thread 0 issued the stores).

    ```mlir
    warpspec.single_thread %thread {
      warpspec.wait_bulk_stores
    }
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def WarpSpec_TmemReleaseOp : WarpSpec_Op<"tmem_release",
    [HasParent<"PartitionOp">]> {
  let summary = "the teardown of the kernel's tensor-memory allocation";
  let description = [{
    The `warpspec.tmem_release` operation ends a partition's use of tensor
    memory. With `arrive`, the replica's tensor-memory work is ordered
    before the teardown barrier (a `tcgen05.fence::before_thread_sync`) and
    thread `thread` 0 arrives on it, after the replica's threads gathered at
    its named barrier if `gather` (a partition whose every thread ran tensor
    memory ops). With `dealloc` (the partition of warp 0, which allocated the
    tensor memory), warp 0 then waits until every user arrived and frees the
    allocation. `warpspec-dispatch-partitions` puts one at the end of every
    partition of a kernel that uses tensor memory, where one is needed.

    ```mlir
    warpspec.tmem_release %thread arrive gather
    warpspec.tmem_release %thread dealloc
    ```
  }];
  let arguments = (ins I32:$thread, UnitAttr:$arrive, UnitAttr:$gather,
                       UnitAttr:$dealloc);
  let assemblyFormat = [{
    $thread (`arrive` $arrive^)? (`gather` $gather^)? (`dealloc` $dealloc^)?
    attr-dict
  }];
  let hasVerifier = 1;
}

def WarpSpec_RingSlotOp : WarpSpec_Op<"ring_slot", [Pure]> {
  let summary = "the slot and the phase bit of a ring position";
  let description = [{
    The `warpspec.ring_slot` operation returns where ring entry `entry` of
    `channel` lives: the slot `entry % depth` and the phase bit
    `(entry / depth) & 1` of that slot's barriers (which lap of the ring the
    entry is on). A partition carries its ring positions as SSA values and
    advances them by its replica count (CUTLASS's `PipelineState`, with the
    stage and phase recomputed from one counter).

    ```mlir
    %stage, %phase = warpspec.ring_slot %qkv[%entry] : !qkv
    ```
  }];
  let arguments = (ins WarpSpec_ChannelType:$channel, I32:$entry);
  let results = (outs I32:$stage, I32:$phase);
  let assemblyFormat = "$channel `[` $entry `]` attr-dict `:` type($channel)";
  let hasVerifier = 1;
}

def WarpSpec_WaitEmptyOp : WarpSpec_Op<"wait_empty"> {
  let summary = "producer: wait until the consumers freed a slot";
  let description = [{
    The `warpspec.wait_empty` operation waits on the `empty` mbarrier of slot
    `stage` until every consumer partition released the slot's previous lap:
    for an entry on phase `phase`, the completion of phase `phase ^ 1` (a
    fresh barrier counts as having completed the phase before phase 0, so
    the first lap does not wait). On a tensor-memory channel the wait is
    followed by `tcgen05.fence::after_thread_sync`, which orders the
    consumers' `tcgen05.ld` of the slot before the MMAs that overwrite it.

    ```mlir
    warpspec.wait_empty %qkv[%stage] phase(%phase) : !qkv
    ```
  }];
  let arguments = (ins WarpSpec_ChannelType:$channel, I32:$stage,
                       I32:$phase);
  let assemblyFormat = [{
    $channel `[` $stage `]` `phase` `(` $phase `)` attr-dict `:` type($channel)
  }];
  let hasVerifier = 1;
}

def WarpSpec_WaitFullOp : WarpSpec_Op<"wait_full"> {
  let summary = "consumer: wait until the producer published a slot";
  let description = [{
    The `warpspec.wait_full` operation waits on the `full` mbarrier of slot
    `stage` until phase `phase` completes: the producer published the slot's
    record and every asynchronous copy (or MMA) into it landed. On sm_100a,
    when the slot lives in tensor memory or the waiting partition issues
    MMAs, the wait is followed by `tcgen05.fence::after_thread_sync`, which
    orders the producer's tcgen05 work before this partition's.

    With `landed`, the waiting partition is the slot's producer (a
    `warpspec.commit ... landed`): it waits for its own copies, and the wait
    does not make it a consumer of the channel.

    ```mlir
    warpspec.wait_full %qkv[%stage] phase(%phase) : !qkv
    warpspec.wait_full %qkv[%stage] phase(%phase) landed : !qkv
    ```
  }];
  let arguments = (ins WarpSpec_ChannelType:$channel, I32:$stage,
                       I32:$phase, UnitAttr:$landed);
  let assemblyFormat = [{
    $channel `[` $stage `]` `phase` `(` $phase `)` (`landed` $landed^)?
    attr-dict `:` type($channel)
  }];
  let hasVerifier = 1;
}

def WarpSpec_ExpectTxOp : WarpSpec_Op<"expect_tx"> {
  let summary = "producer: announce the bytes the copies into a slot deliver";
  let description = [{
    The `warpspec.expect_tx` operation adds `bytes` to the transaction count
    of the `full` mbarrier of slot `stage`, before the `warpspec.tma_load`
    copies into the slot are issued: the phase then completes only once
    they delivered that many bytes (and the producer arrived), and the count
    never underflows. Only shared-memory slots are filled by copies; the
    bytes are at most the slot's.

    ```mlir
    warpspec.expect_tx %qkv[%stage] bytes(49152) : !qkv
    ```
  }];
  let arguments = (ins WarpSpec_ChannelType:$channel, I32:$stage,
                       I64Attr:$bytes);
  let assemblyFormat = [{
    $channel `[` $stage `]` `bytes` `(` $bytes `)` attr-dict `:` type($channel)
  }];
  let hasVerifier = 1;
}

def WarpSpec_SlotBuffersOp : WarpSpec_Op<"slot_buffers", [
    Pure, DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "the buffers of one slot of a channel";
  let description = [{
    The `warpspec.slot_buffers` operation returns the buffers of slot
    `stage` of `channel`, one per buffer type of the channel: in shared
    memory at `buffer_offset + stage * slot_stride`, in tensor memory at the
    slot's `tmem_slots` lane and column. A `warpspec.tma_load` into one of
    them completes on that slot's `full` barrier.

    ```mlir
    %q, %k, %v = warpspec.slot_buffers %qkv[%stage] : !qkv
    ```
  }];
  let arguments = (ins WarpSpec_ChannelType:$channel, I32:$stage);
  let results = (outs Variadic<WarpSpec_BufferType>:$buffers);
  let assemblyFormat = "$channel `[` $stage `]` attr-dict `:` type($channel)";
  let hasVerifier = 1;
}

def WarpSpec_PublishOp : WarpSpec_Op<"publish"> {
  let summary = "producer: write a slot's tile record and arrive on its full barrier";
  let description = [{
    The `warpspec.publish` operation hands slot `stage` to the consumers:
    the partition's threads make their writes of the slot visible to the
    async proxy (`fence.proxy.async`) or, for a tensor-memory slot, wait for
    their `tcgen05.st` (`tcgen05.wait::st`, `tcgen05.fence::before_thread_sync`),
    meet at the replica's named barrier, then one thread writes the record
    (row, rows, head and `position`, 0 without it) and arrives on the slot's
    `full` barrier, with release semantics. A role(mma) producer also
    arrives through `tcgen05.commit` once its MMAs into the slot complete,
    which is why its `full` barriers count two arrivals.

    ```mlir
    warpspec.publish %qkv[%stage] tile(%row, %rows, %head) : !qkv
    warpspec.publish %qkv[%stage] tile(%row, %rows, %head) position(%p) : !qkv
    ```
  }];
  let arguments = (ins WarpSpec_ChannelType:$channel, I32:$stage, I32:$row,
                       I32:$rows, I32:$head, Optional<I32>:$position);
  let assemblyFormat = [{
    $channel `[` $stage `]` `tile` `(` $row `,` $rows `,` $head `)`
    (`position` `(` $position^ `)`)? attr-dict `:` type($channel)
  }];
  let hasVerifier = 1;
}

def WarpSpec_PublishCloseOp : WarpSpec_Op<"publish_close"> {
  let summary = "producer: publish the record that ends one consumer's loop";
  let description = [{
    The `warpspec.publish_close` operation publishes slot `stage` with the
    record `(0, -1, 0, 0)`: a tile of -1 rows, which ends the consume loop
    of the consumer replica whose entry the slot holds. The slot carries no
    data, so nothing is fenced first, and a role(mma) producer makes both
    arrivals of its `full` barrier at once. `warpspec-lower-protocol`
    lowers a `warpspec.close` to one per consumer replica.

    ```mlir
    warpspec.publish_close %qkv[%stage] : !qkv
    ```
  }];
  let arguments = (ins WarpSpec_ChannelType:$channel, I32:$stage);
  let assemblyFormat = "$channel `[` $stage `]` attr-dict `:` type($channel)";
  let hasVerifier = 1;
}

def WarpSpec_ReadTileOp : WarpSpec_Op<"read_tile"> {
  let summary = "consumer: read the tile record of a published slot";
  let description = [{
    The `warpspec.read_tile` operation reads the record the producer wrote
    into slot `stage` before publishing it: the tile's first row, its valid
    rows (-1 for the record of `warpspec.publish_close`), its head and the
    position of its first row in its sequence. It follows the
    `warpspec.wait_full` of the slot, whose acquire orders it after the
    producer's write.

    ```mlir
    %row, %rows, %head, %pos = warpspec.read_tile %qkv[%stage] : !qkv
    ```
  }];
  let arguments = (ins WarpSpec_ChannelType:$channel, I32:$stage);
  let results = (outs I32:$row, I32:$rows, I32:$head, I32:$position);
  let assemblyFormat = "$channel `[` $stage `]` attr-dict `:` type($channel)";
  let hasVerifier = 1;
}

def WarpSpec_ArriveEmptyOp : WarpSpec_Op<"arrive_empty"> {
  let summary = "consumer: arrive on a slot's empty barrier";
  let description = [{
    The `warpspec.arrive_empty` operation gives slot `stage` back to the
    producer: the replica's threads meet at its named barrier (after a
    `tcgen05.fence::before_thread_sync` on a tensor-memory slot) and one of
    them arrives on the slot's `empty` barrier, so the producer's next write
    of the slot is ordered after every thread's reads. A role(load) or
    role(mma) partition runs on one thread and arrives directly. With
    `after_mma` (sm_100a, role(mma) only) the arrival is a `tcgen05.commit`:
    it comes when the MMAs this thread issued, those reading the slot
    included, complete. With `after_stores` (a `warpspec.release
    after_stores`), the arriving thread, which issued the replica's bulk
    tensor stores, first waits until they have read shared memory
    (`cp.async.bulk.wait_group.read 0`): some were staged in the slot.

    ```mlir
    warpspec.arrive_empty %qkv[%stage] : !qkv
    warpspec.arrive_empty %p[%stage] after_mma : !p
    warpspec.arrive_empty %qkvdo[%stage] after_stores : !qkvdo
    ```
  }];
  let arguments = (ins WarpSpec_ChannelType:$channel, I32:$stage,
                       UnitAttr:$after_mma, UnitAttr:$after_stores);
  let assemblyFormat = [{
    $channel `[` $stage `]` (`after_mma` $after_mma^)? (`after_stores` $after_stores^)?
    attr-dict `:` type($channel)
  }];
  let hasVerifier = 1;
}

def WarpSpec_TmaPrefetchOp : WarpSpec_Op<"tma_prefetch"> {
  let summary = "bring the tile of a future TMA copy into L2";
  let description = [{
    The `warpspec.tma_prefetch` operation asks for rows `[row, row + R)` of
    head `head` of `source` to be brought into L2 (a bulk tensor prefetch
    per 128-byte column chunk), where `tile` is the `R x D` shared-memory
    buffer type a later `warpspec.tma_load` of the same coordinates copies
    into. `warpspec-lower-protocol` emits them for an `l2_prefetch` acquire,
    before its wait for a free slot. `col_offset` and `pair_halves` name the
    columns as the load's do (`warpspec.tma_load`), so that the prefetch
    brings the boxes the load will copy.

    ```mlir
    warpspec.tma_prefetch %k[%row, %head]
        : memref<?x4x128xbf16>, !warpspec.buffer<64x128xbf16, smem>
    warpspec.tma_prefetch %q[%row, %head] {col_offset = 64 : i64, pair_halves}
        : memref<?x4x256xbf16>,
          !warpspec.buffer<64x64xbf16, smem, chunk_cols = 32>
    ```
  }];
  let arguments = (ins AnyMemRef:$source, I32:$row, I32:$head,
                       TypeAttrOf<WarpSpec_BufferType>:$tile,
                       OptionalAttr<I64Attr>:$col_offset,
                       UnitAttr:$pair_halves);
  let assemblyFormat = [{
    $source `[` $row `,` $head `]` attr-dict `:` type($source) `,` $tile
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    BufferType getTileType() { return cast<BufferType>(getTile()); }
  }];
}

def WarpSpec_YieldOp : WarpSpec_Op<"yield", [
    Pure, Terminator, HasParent<"TileLoopOp">]> {
  let summary = "the values a tile loop carries to its next tile";
  let description = [{
    The `warpspec.yield` operation ends the body of a `warpspec.tile_loop`
    with `iter_args`: its operands are the body's arguments for the next
    tile, and the loop's results after the last one.

    ```mlir
    warpspec.yield %next : i32
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

//===----------------------------------------------------------------------===//
// Rotary embeddings
//===----------------------------------------------------------------------===//

def WarpSpec_RotateOp : WarpSpec_Op<"rotate", [AttrSizedOperandSegments]> {
  let summary = "rotary embedding of shared-memory tiles, in f32";
  let description = [{
    The `warpspec.rotate` operation applies the rotary embedding to rows
    `[0, rows)` of each 16-bit shared-memory tile of `sources` and writes the
    results to the tiles of `dests` (a destination may be its source). Row
    `r` has position `position + r`, or `positions[row + r]` when
    `positions` (an i32 memref over the tokens) is given; positions are
    clamped into the table. Pair `i` of a row turns by the angle whose
    cosine and sine are `cos[p, i]` and `sin[p, i]` (f32 tables
    `[max_position, head_dim / 2]`), or, with `theta` instead of tables, by
    `p * theta^(-2i / head_dim)`. Without `interleaved` (the half-split
    layout) element `i` pairs with `i + head_dim / 2`; with it, element `2i`
    with `2i + 1`. The arithmetic is f32 with one rounding to the tile's
    type; every tile of a row shares one table lookup. Rows past `rows` are
    rotated too (by their clamped positions): they are not tokens of the
    tile, but a destination then holds finite values in every row, which the
    products read whole and mask. Every thread of the partition replica
    takes part; the results are visible to the tensor cores afterwards (an
    async-proxy fence and a barrier over the replica).

    By default the tiles are whole rows: their width is the head dim. A tile
    may instead be a part of wider rows, as for `warpspec.rotate_tile`:
    `head_dim` is the rows' head dim and `pair_offset` the index of the
    tile's first pair; half-split, the tile's first half holds columns
    `[pair_offset, pair_offset + N / 2)` of the rows and its second half
    their partners, `head_dim / 2` on; interleaved, it holds columns
    `[2 pair_offset, 2 pair_offset + N)`. The sm_90a backward at block size
    128 above head dim 128 streams q and k in 64-column chunks
    (docs/head-dims.md) and rotates each interleaved chunk in place this way.

    The threads turn the tile in passes of a few rows each, unrolled. With
    `pass_loop` the passes are one loop that neither LLVM nor ptxas unrolls
    (`.pragma "nounroll"`), one pass's angles computed in its body: from
    `theta` the angles are arithmetic on the position alone, and across
    unrolled passes ptxas computed many passes' angles ahead of their turns
    and spilled the registers that held them (the grouped-query backward above
    head dim 128, docs/rotary.md). A tile of more than 64 rows wider than 128
    columns from `theta`, and one of more than 64 rows that is a part of wider
    rows (`head_dim`: the column-pass backward's k and v chunks at block size
    128), are turned in such a loop without the attribute; only with it does
    each pass also recompute the thread's addresses from a pinned thread index
    (the sm_90a column-pass backward marks every chunk part, the 64-row query
    halves too, since session 20: held from the consumer's entry, those
    addresses were what ptxas spilled).

    With `split_items` (half-split, `pass_loop`) each thread turns its item
    (a unit of the first half and its partner unit, 8 pairs) in two runs of
    4 pairs, 8 bytes of each unit and 4 cosines and sines at a time, in an
    inner loop that is not unrolled either: half the live values of a pass.
    The sm_90a grouped block-128 backward above head dim 128 with
    `rotate_v` turns V's chunks next to P and dP (64 + 64 registers), where
    whole items spilled the scores warpgroup 4-44 bytes (docs/head-dims.md,
    "Session 26").

    ```mlir
    warpspec.rotate(%q, %k) into(%q, %k) rows(%rows) row(%row)
        position(%pos) cos(%cos, %sin : memref<?x64xf32>, memref<?x64xf32>)
        {interleaved = false}
        : !warpspec.buffer<64x128xbf16, smem>, !warpspec.buffer<64x128xbf16, smem>
          into !warpspec.buffer<64x128xbf16, smem>, !warpspec.buffer<64x128xbf16, smem>
    // Columns 64-127 of interleaved rows of head dim 256 (pairs 32-63).
    warpspec.rotate(%k1) into(%k1) rows(%rows) row(%row) position(%pos)
        cos(%cos, %sin : memref<?x128xf32>, memref<?x128xf32>)
        {interleaved = true, head_dim = 256 : i64, pair_offset = 32 : i64}
        : !warpspec.buffer<128x64xbf16, smem> into !warpspec.buffer<128x64xbf16, smem>
    ```
  }];
  let arguments = (ins Variadic<WarpSpec_BufferType>:$sources,
                       Variadic<WarpSpec_BufferType>:$dests, I32:$rows,
                       I32:$row, I32:$position, Optional<AnyMemRef>:$cos,
                       Optional<AnyMemRef>:$sin,
                       Optional<WarpSpec_PositionsSource>:$positions,
                       BoolAttr:$interleaved,
                       OptionalAttr<F32Attr>:$theta,
                       OptionalAttr<I64Attr>:$head_dim,
                       OptionalAttr<I64Attr>:$pair_offset,
                       UnitAttr:$pass_loop, UnitAttr:$split_items);
  let extraClassDeclaration = [{
    /// The head dim of the rows the tiles are a part of (their width by
    /// default).
    int64_t getRowHeadDim() {
      if (std::optional<uint64_t> headDim = getHeadDim())
        return static_cast<int64_t>(*headDim);
      return cast<BufferType>(getSources().front().getType()).getShape()[1];
    }
    /// The index of the tiles' first rotary pair among their rows' pairs.
    int64_t getFirstPair() {
      return static_cast<int64_t>(getPairOffset().value_or(0));
    }
  }];
  let assemblyFormat = [{
    `(` $sources `)` `into` `(` $dests `)` `rows` `(` $rows `)`
    `row` `(` $row `)` `position` `(` $position `)`
    (`cos` `(` $cos^ `,` $sin `:` type($cos) `,` type($sin) `)`)?
    (`positions` `(` $positions^ `:` type($positions) `)`)? attr-dict
    `:` type($sources) `into` type($dests)
  }];
  let hasVerifier = 1;
}

def WarpSpec_RotateTileOp : WarpSpec_Op<"rotate_tile",
                                        [AttrSizedOperandSegments]> {
  let summary = "rotary embedding (or its transpose) of an f32 register tile";
  let description = [{
    The `warpspec.rotate_tile` operation rotates rows `[0, rows)` of the f32
    register tile `value` as `warpspec.rotate` does a shared-memory tile,
    or, with `inverse`, by the opposite angles: the transpose of the
    rotation, which turns the gradient with respect to a rotated q or k into
    the gradient with respect to the un-rotated input. Both elements of a
    pair are held by one thread in the tile layouts of both targets, so it
    exchanges no data. In a tile of whole rows, the rows past `rows` are
    turned too, by their clamped positions, as `warpspec.rotate` turns them:
    they are not tokens of the tile, and every user of the result stores
    rows `[0, rows)` only (keeping them as they were cost a select per
    element on the consumer's path); a part of wider rows (below) returns
    them as they are.

    By default the tile is whole rows: its width is the head dim. Above head
    dim 128 the products are made in 64-column chunks of the head dim, and a
    half-split pair's two columns are `head_dim / 2` apart, in different
    chunks. Such a tile is then a part of the rows, `head_dim` the rows'
    head dim and `pair_offset` the index of its first pair: half-split, its
    first half holds columns `[pair_offset, pair_offset + N / 2)` of the rows
    and its second half their partners, `head_dim / 2` on (for example
    chunks 0 and 2 of a 256-column row side by side,
    `warpspec.concat_columns`); interleaved, it holds columns
    `[2 pair_offset, 2 pair_offset + N)`. Pair `i` of the tile turns by the
    angle of pair `pair_offset + i` of the rows (table column
    `pair_offset + i`, or the frequency `theta^(-2 (pair_offset + i) /
    head_dim)`), so the rotation of a part equals that part of the whole
    rows' rotation.

    With `narrow_index` (tables) a thread's table element, row times stride
    plus column, is computed in 32 bits (unsigned), then widened: the tables
    must hold fewer than 2^32 elements (the Python API checks). In 64 bits
    ptxas folds the loop-invariant part, table base plus the thread's
    column, into 64-bit registers of its own, one pair per table, held
    across the kernel's loops (the sm_90a grouped block-128 backward's
    accumulate warpgroups above head dim 128 with `rotate_v` spilled them,
    24 bytes each); widened after the sum, it cannot split it. With
    `pinned_table_rows` (tables) the tables' row count, the smaller of the
    two, is computed from counts pinned at the rotation: hoisted out of the
    kernel's loops it was held, and spilled, in those warpgroups at G = 4.

    ```mlir
    %dq = warpspec.rotate_tile %dqr rows(%rows) row(%row) position(%pos)
        cos(%cos, %sin : memref<?x64xf32>, memref<?x64xf32>)
        {interleaved = false, inverse}
        : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x128xf32>
    // Columns 64-127 and 192-255 of rows of head dim 256 (pairs 64-127).
    %dq1 = warpspec.rotate_tile %dqr13 rows(%rows) row(%row) position(%pos)
        cos(%cos, %sin : memref<?x128xf32>, memref<?x128xf32>)
        {interleaved = false, inverse, head_dim = 256 : i64,
         pair_offset = 64 : i64}
        : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x128xf32>
    ```
  }];
  let arguments = (ins WarpSpec_AccType:$value, I32:$rows, I32:$row,
                       I32:$position, Optional<AnyMemRef>:$cos,
                       Optional<AnyMemRef>:$sin,
                       Optional<AnyMemRef>:$positions,
                       Optional<WarpSpec_AccType>:$angles,
                       BoolAttr:$interleaved, OptionalAttr<F32Attr>:$theta,
                       UnitAttr:$inverse, OptionalAttr<I64Attr>:$head_dim,
                       OptionalAttr<I64Attr>:$pair_offset,
                       UnitAttr:$narrow_index, UnitAttr:$pinned_table_rows);
  let extraClassDeclaration = [{
    /// The head dim of the rows the tile is a part of (its width by
    /// default).
    int64_t getRowHeadDim() {
      if (std::optional<uint64_t> headDim = getHeadDim())
        return static_cast<int64_t>(*headDim);
      return getValue().getType().getShape()[1];
    }
    /// The index of the tile's first rotary pair among its rows' pairs.
    int64_t getFirstPair() {
      return static_cast<int64_t>(getPairOffset().value_or(0));
    }
  }];
  let results = (outs WarpSpec_AccType:$result);
  let assemblyFormat = [{
    $value `rows` `(` $rows `)` `row` `(` $row `)` `position` `(` $position `)`
    (`cos` `(` $cos^ `,` $sin `:` type($cos) `,` type($sin) `)`)?
    (`positions` `(` $positions^ `:` type($positions) `)`)?
    (`angles` `(` $angles^ `:` type($angles) `)`)? attr-dict
    `:` type($value) `->` type($result)
  }];
  let hasVerifier = 1;
}

def WarpSpec_RotaryAnglesOp : WarpSpec_Op<"rotary_angles",
                                          [AttrSizedOperandSegments]> {
  let summary = "cosines and sines of a register tile's rotary pairs";
  let description = [{
    The `warpspec.rotary_angles` operation looks up (or, with `theta`,
    computes) the angles of the rotary pairs of rows `[0, rows)` of an f32
    register tile of its result's type, as `warpspec.rotate_tile` does: the
    first element of each pair holds the cosine, the second the sine.
    `warpspec.rotate_tile ... angles(%angles)` uses them instead of reading
    the tables itself, so the table reads can be issued early (before the
    products whose results they turn, hiding their latency) and shared by
    several tiles of the same rows (the backward's dk and dq).

    ```mlir
    %angles = warpspec.rotary_angles rows(%rows) row(%row) position(%pos)
        cos(%cos, %sin : memref<?x64xf32>, memref<?x64xf32>)
        {interleaved = false} : !warpspec.acc<64x128xf32>
    %dq = warpspec.rotate_tile %dqr rows(%rows) row(%row) position(%pos)
        angles(%angles : !warpspec.acc<64x128xf32>)
        {interleaved = false, inverse}
        : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x128xf32>
    ```

    With `row_positions`, the rows' positions are those a
    `warpspec.load_positions` read before (instead of `positions`, which
    this op would read itself, just before the table reads that need them):
    the positions' round trip then overlaps whatever runs between the two.

    ```mlir
    %p = warpspec.load_positions %positions[%row]
        : memref<?xi32> -> !warpspec.rows<64xi32>
    %angles = warpspec.rotary_angles rows(%rows) row(%row) position(%pos)
        cos(%cos, %sin : memref<?x64xf32>, memref<?x64xf32>)
        row_positions(%p : !warpspec.rows<64xi32>)
        {interleaved = true} : !warpspec.acc<64x128xf32>
    ```
  }];
  let arguments = (ins I32:$rows, I32:$row, I32:$position,
                       Optional<AnyMemRef>:$cos, Optional<AnyMemRef>:$sin,
                       Optional<WarpSpec_PositionsSource>:$positions,
                       Optional<WarpSpec_RowsType>:$row_positions,
                       BoolAttr:$interleaved, OptionalAttr<F32Attr>:$theta);
  let results = (outs WarpSpec_AccType:$angles);
  let assemblyFormat = [{
    `rows` `(` $rows `)` `row` `(` $row `)` `position` `(` $position `)`
    (`cos` `(` $cos^ `,` $sin `:` type($cos) `,` type($sin) `)`)?
    (`positions` `(` $positions^ `:` type($positions) `)`)?
    (`row_positions` `(` $row_positions^ `:` type($row_positions) `)`)?
    attr-dict `:` type($angles)
  }];
  let hasVerifier = 1;
}

def WarpSpec_LoadPositionsOp : WarpSpec_Op<"load_positions"> {
  let summary = "the positions of a register tile's rows";
  let description = [{
    The `warpspec.load_positions` operation reads `positions[row + i]` for
    every row `i` of a register tile into per-row values held by the threads
    that hold row `i` (the layout of `!warpspec.rows`). Rows past the
    tile's valid ones are read too, clamped into the tensor
    (`min(row + i, len - 1)`), as `warpspec.rotary_angles` clamps the
    positions it reads itself; the table row is clamped where the angles
    are read.

    It splits `warpspec.rotary_angles ... positions(...)` in two: the
    positions read as the tile arrives, the tables later, at
    `warpspec.rotary_angles ... row_positions(%p)`. Read in one op, the
    table reads wait for the positions' round trip, and the warpgroup with
    them (the sm_90a rotary backward's consumer: docs/rotary.md).

    ```mlir
    %p = warpspec.load_positions %positions[%row]
        : memref<?xi32> -> !warpspec.rows<64xi32>
    ```
  }];
  let arguments = (ins Arg<WarpSpec_PositionsSource, "[T] i32, or the tile's",
                           [MemRead]>:$positions,
                       I32:$row);
  let results = (outs WarpSpec_RowsType:$value);
  let assemblyFormat = [{
    $positions `[` $row `]` attr-dict `:` type($positions) `->` type($value)
  }];
  let hasVerifier = 1;
}

def WarpSpec_ConcatColumnsOp : WarpSpec_Op<"concat_columns", [Pure]> {
  let summary = "f32 register tiles of the same rows, side by side";
  let description = [{
    The `warpspec.concat_columns` operation joins f32 register tiles of the
    same rows into one tile whose columns are the first input's, then the
    second's, and so on. It moves no data: in the register layout of both
    targets (the wgmma accumulator's, which `tcgen05.ld` reproduces) a
    thread holds the same rows and the same columns modulo 8 of every tile,
    so the result's registers are the inputs' registers.

    It lets an operation see columns of several column chunks at once: above
    head dim 128 the outputs are made in 64-column chunks, and the
    half-split rotation of a gradient pairs each column with the one
    `head_dim / 2` on, in another chunk (`warpspec.rotate_tile` with
    `head_dim` and `pair_offset`).

    ```mlir
    %t = warpspec.concat_columns %c0, %c2
        : !warpspec.acc<64x64xf32>, !warpspec.acc<64x64xf32>
          -> !warpspec.acc<64x128xf32>
    ```
  }];
  let arguments = (ins Variadic<WarpSpec_AccType>:$inputs);
  let results = (outs WarpSpec_AccType:$result);
  let assemblyFormat = [{
    $inputs attr-dict `:` type($inputs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def WarpSpec_ExtractColumnsOp : WarpSpec_Op<"extract_columns", [Pure]> {
  let summary = "columns of an f32 register tile, as a tile of their own";
  let description = [{
    The `warpspec.extract_columns` operation takes columns
    `[offset, offset + N)` of the f32 register tile `source` as a tile of
    `N` columns: the inverse of `warpspec.concat_columns`, and, like it,
    a choice of registers that moves no data. `offset` and `N` are
    multiples of 8 (a thread's columns repeat every 8).

    ```mlir
    %c2 = warpspec.extract_columns %t[64]
        : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x64xf32>
    ```
  }];
  let arguments = (ins WarpSpec_AccType:$source, I64Attr:$offset);
  let results = (outs WarpSpec_AccType:$result);
  let assemblyFormat = [{
    $source `[` $offset `]` attr-dict `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tensor memory (sm_100a)
//===----------------------------------------------------------------------===//

// The ops that access tensor memory through tcgen05: the kernel verifier
// accepts them on sm_100a only, a partition holding one arrives on the
// tensor-memory teardown barrier (warpspec-dispatch-partitions), and a kernel
// holding one allocates tensor memory (PartitionOp/KernelOp::
// usesTensorMemory, warpspec::isTensorMemoryOp).
def WarpSpec_TensorMemoryOp : NativeOpTrait<"TensorMemoryOp"> {
  let cppNamespace = "::mlir::warpspec";
}

def WarpSpec_MmaAsyncOp : WarpSpec_Op<"mma_async", [WarpSpec_TensorMemoryOp]> {
  let summary = "asynchronous tensor-core MMA into a tensor-memory buffer";
  let description = [{
    The `warpspec.mma_async` operation starts `D = A * B` (`A * B^T` with
    `transpose_b`, `A^T * B` with `transpose_a`) into the tensor-memory
    buffer `dest`, with f32 accumulation, issued by one thread (the `mma`
    role). `A` is a shared-memory buffer or a 16-bit tensor-memory buffer
    (P, read K-major); `B` a shared-memory buffer. It completes
    asynchronously: the next `warpspec.commit` of `dest`'s channel (or a
    `warpspec.release ... after_mma`) tracks it. On sm_100a this is
    `tcgen05.mma` with `M = 64` (the accumulator occupies the half of the
    tensor-memory lanes the M = 64 data path uses). With `accumulate` it
    computes `D += A * B` instead (enable-input-d from the first K step on):
    the grouped-query backward sums dK and dV over a group this way.

    ```mlir
    warpspec.mma_async %q, %k into %s {transpose_b}
        : !warpspec.buffer<64x128xbf16, smem>, !warpspec.buffer<64x128xbf16, smem>,
          !warpspec.buffer<64x64xf32, tmem>
    ```
  }];
  let arguments = (ins WarpSpec_BufferType:$a, WarpSpec_BufferType:$b,
                       WarpSpec_BufferType:$dest, UnitAttr:$transpose_a,
                       UnitAttr:$transpose_b, UnitAttr:$accumulate);
  let assemblyFormat = [{
    $a `,` $b `into` $dest attr-dict `:` type($a) `,` type($b) `,` type($dest)
  }];
  let hasVerifier = 1;
}

def WarpSpec_TmemLoadOp : WarpSpec_Op<"tmem_load", [WarpSpec_TensorMemoryOp]> {
  let summary = "read a tensor-memory buffer into a register tile";
  let description = [{
    The `warpspec.tmem_load` operation reads the M = 64 tensor-memory
    buffer `source` into a register tile of the warpgroup (each warp reads
    the 16 rows in its quarter of the lanes; `tcgen05.ld` 16x256b, so the
    registers have the same layout as a wgmma accumulator) and waits for the
    load to complete.

    ```mlir
    %s = warpspec.tmem_load %sbuf : !warpspec.buffer<64x64xf32, tmem> -> !warpspec.acc<64x64xf32>
    ```
  }];
  let arguments = (ins WarpSpec_BufferType:$source);
  let results = (outs WarpSpec_AccType:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def WarpSpec_TmemStoreOp
    : WarpSpec_Op<"tmem_store", [WarpSpec_TensorMemoryOp]> {
  let summary = "write a 16-bit register tile into a tensor-memory buffer";
  let description = [{
    The `warpspec.tmem_store` operation writes the 16-bit register tile
    `value` (P) into the tensor-memory buffer `dest`, two elements per
    32-bit column (the layout `tcgen05.mma` reads an A operand in), with
    `tcgen05.st` 16x128b. The commit of `dest`'s channel waits for the
    stores to complete.

    ```mlir
    warpspec.tmem_store %p, %pbuf : !warpspec.acc<64x64xbf16>, !warpspec.buffer<64x64xbf16, tmem>
    ```
  }];
  let arguments = (ins WarpSpec_AccType:$value, WarpSpec_BufferType:$dest);
  let assemblyFormat = "$value `,` $dest attr-dict `:` type($value) `,` type($dest)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Private buffers
//===----------------------------------------------------------------------===//

def WarpSpec_ScratchOp : WarpSpec_Op<"scratch", [HasParent<"PartitionOp">]> {
  let summary = "a buffer private to each replica of a partition";
  let description = [{
    The `warpspec.scratch` operation declares a shared-memory buffer that
    each replica of the enclosing partition owns alone (for example P staged
    for the tensor cores). `warpspec-allocate-smem` writes its `offset`;
    replica `r` uses `offset + r * replica_stride`.

    ```mlir
    %pbuf = warpspec.scratch : !warpspec.buffer<64x64xbf16, smem>
    ```
  }];
  let arguments = (ins OptionalAttr<I64Attr>:$offset,
                       OptionalAttr<I64Attr>:$replica_stride);
  let results = (outs WarpSpec_BufferType:$buffer);
  let assemblyFormat = "attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}

def WarpSpec_SubviewOp : WarpSpec_Op<"subview", [Pure]> {
  let summary = "whole column chunks of a buffer, as a buffer";
  let description = [{
    The `warpspec.subview` operation views columns `[offset, offset + N)` of
    the buffer `source` (`R x C`) as an `R x N` buffer of the same element
    type and memory space, without moving data. In shared memory a tile is
    stored in column chunks (64 columns with the 128-byte swizzle, 32 with
    the 64-byte swizzle), each a complete tile of its own, so the view must
    cover whole chunks of the source's width and keep its swizzle: its
    start is the source's plus `offset / W` chunks. In tensor memory the
    view starts `offset` columns (of 32-bit cells) further. Products whose
    N is the head dimension use it to work in column chunks of the head
    dimension (docs/head-dims.md, head dims 192 and 256).

    ```mlir
    %v1 = warpspec.subview %v[64]
        : !warpspec.buffer<64x256xbf16, smem> -> !warpspec.buffer<64x64xbf16, smem>
    ```
  }];
  let arguments = (ins WarpSpec_BufferType:$source, I64Attr:$offset);
  let results = (outs WarpSpec_BufferType:$result);
  let assemblyFormat = [{
    $source `[` $offset `]` attr-dict `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tile operations
//===----------------------------------------------------------------------===//

def WarpSpec_WriteOp : WarpSpec_Op<"write"> {
  let summary = "write a register tile into a buffer for the tensor cores";
  let description = [{
    The `warpspec.write` operation stores the register tile `value`
    (converted to the buffer's 16-bit element type if it is f32)
    into the shared-memory buffer `dest` in the layout `warpspec.mma` reads
    (the same 128-byte-swizzled chunks TMA writes), then makes the writes
    visible to the tensor cores (an async-proxy fence and a barrier over the
    warpgroup).

    With `stmatrix` (in the attribute dictionary) the lowering writes the
    pairs with `stmatrix.sync.aligned.m8n8.x4` (four 8x8 matrices a warp, 16
    bytes a thread per instruction) instead of a 4-byte `st.shared` a pair:
    the same bytes in the same places. The tile's width must be a multiple
    of 16 columns (two matrices side by side).

    ```mlir
    warpspec.write %p, %pbuf : !warpspec.acc<64x64xbf16>, !warpspec.buffer<64x64xbf16, smem>
    warpspec.write %p, %pbuf {stmatrix} : !warpspec.acc<64x64xbf16>, !warpspec.buffer<64x64xbf16, smem>
    ```
  }];
  let arguments = (ins WarpSpec_AccType:$value, WarpSpec_BufferType:$dest,
                       UnitAttr:$stmatrix);
  let assemblyFormat = "$value `,` $dest attr-dict `:` type($value) `,` type($dest)";
  let hasVerifier = 1;
}

def WarpSpec_ColumnChunkOp : WarpSpec_Op<"column_chunk", [Pure]> {
  let summary = "one swizzled column chunk of a shared-memory buffer";
  let description = [{
    The `warpspec.column_chunk` operation views columns
    `[index * C, index * C + C)` of the shared-memory buffer `source` as a
    buffer of its own, where `C` is the width of the buffer's swizzled chunks
    (64 columns of 16-bit elements with the 128-byte swizzle, 32 with the
    64-byte one). A buffer is stored chunk after chunk, so the view is the
    chunk's start address, and an MMA reads it like any buffer of its shape
    (for example the A operand `P[:, 64 j : 64 j + 64]^T` of the
    block-size-128 backward's `dV_j`).

    ```mlir
    %p1 = warpspec.column_chunk %p[1]
        : !warpspec.buffer<64x128xbf16, smem> -> !warpspec.buffer<64x64xbf16, smem>
    ```
  }];
  let arguments = (ins WarpSpec_BufferType:$source, I64Attr:$index);
  let results = (outs WarpSpec_BufferType:$result);
  let assemblyFormat = [{
    $source `[` $index `]` attr-dict `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

def WarpSpec_PinOp : WarpSpec_Op<"pin", [AllTypesMatch<["source", "result"]>]> {
  let summary = "a shared-memory buffer's address (or an i32), recomputed here";
  let description = [{
    The `warpspec.pin` operation returns `source` unchanged, but its address
    is taken where the op is (the lowering passes it through an empty
    side-effecting asm, as CUTLASS's `warpgroup_fence_operand` does for
    registers). A buffer at a fixed shared-memory address (a scratch buffer,
    or the slot of a one-slot ring) is loop invariant, and LLVM hoists every
    MMA descriptor and store address derived from it out of the tile loop,
    where each holds registers for the whole loop; derived from a pinned
    address, they are recomputed (a few integer adds) next to their use.
    The block-size-128 backward, with about a hundred such values, spilled
    without it.

    An `i32` is pinned the same way: the grouped-query backward at block
    size 128 rotates each query head's Q at the item's rows and position,
    the same for every head of the group, and LLVM hoisted the rotary
    tables' addresses derived from them out of the loop over the heads
    (ptxas spilled the scores warpgroup); pinned in the loop, they are
    recomputed there.

    With `after(%v)` (an i32 the caller knows is not negative, such as a
    query head), the result is `source` plus `min(v, 0)`, zero at run time:
    the empty asm stops LLVM but not ptxas, which sees through it and hoists
    the descriptors derived from a fixed address out of the loops around
    their use (the sm_100a grouped backward at block size 128 in passes
    over column chunks, whose MMA warp then spilled at 256 registers);
    derived from a value that changes with `v`, they are recomputed where
    `v` does.

    ```mlir
    %q0 = warpspec.pin %q : !warpspec.buffer<64x128xbf16, smem>
    %row = warpspec.pin %r : i32
    %k0 = warpspec.pin %k after(%head) : !warpspec.buffer<128x128xbf16, smem>
    ```
  }];
  let arguments = (ins AnyTypeOf<[WarpSpec_BufferType, I32]>:$source,
                       Optional<I32>:$anchor);
  let results = (outs AnyTypeOf<[WarpSpec_BufferType, I32]>:$result);
  // The builders without an anchor (a plain pin).
  let builders = [
    OpBuilder<(ins "Value":$source), [{
      build($_builder, $_state, source.getType(), source, Value());
    }]>,
    OpBuilder<(ins "Type":$type, "Value":$source), [{
      build($_builder, $_state, type, source, Value());
    }]>
  ];
  let assemblyFormat = [{
    $source (`after` `(` $anchor^ `)`)? attr-dict `:` type($source)
  }];
  let hasVerifier = 1;
}

def WarpSpec_CopyPositionsOp : WarpSpec_Op<"copy_positions"> {
  let summary = "asynchronous copy of a tile's positions into a channel slot";
  let description = [{
    The `warpspec.copy_positions` operation copies `positions[row + i]` for
    every row `i` of the 1-D i32 shared-memory buffer `dest` (a buffer of a
    slot the producer acquired), clamped into the tensor as
    `warpspec.load_positions` clamps them (`min(row + i, len - 1)`). Like a
    `warpspec.tma_load` it completes on the slot's `full` barrier: the
    consumers that wait for the slot find the positions there, one
    shared-memory read away, instead of a dependent global read before their
    table reads (the sm_90a rotary warpgroup and the backward's consumer,
    docs/rotary.md). It lowers to 4-byte `cp.async` copies issued by the
    thread that issues the slot's TMA copies, then
    `cp.async.mbarrier.arrive` on the slot's `full` barrier, which holds
    the barrier's phase until they land (the arrival raises the pending
    count first, so the barrier's expected count is unchanged).

    ```mlir
    %slot, %q, %k, %pos = warpspec.acquire %ring
        : !warpspec.channel<[64x128xbf16, 64x128xbf16, 64xi32], smem>
    warpspec.copy_positions %positions[%row] into %pos
        : memref<?xi32>, !warpspec.buffer<64xi32, smem>
    ```
  }];
  let arguments = (ins Arg<AnyMemRef, "[T] i32", [MemRead]>:$positions,
                       I32:$row, WarpSpec_BufferType:$dest);
  let assemblyFormat = [{
    $positions `[` $row `]` `into` $dest attr-dict `:` type($positions) `,`
    type($dest)
  }];
  let hasVerifier = 1;
}

def WarpSpec_TmaLoadOp : WarpSpec_Op<"tma_load"> {
  let summary = "asynchronous bulk copy of one tile into a channel buffer";
  let description = [{
    The `warpspec.tma_load` operation copies rows `[row, row + R)` of head
    `head` of `source` (a `[T, H, D]` memref) into the shared-memory buffer
    `dest` of shape `R x D`, with the tensor memory accelerator. Rows past
    the end of `source` are filled with zeros; rows past the end of the
    tile's sequence are the next sequence's rows: consumers mask them. The
    copy completes asynchronously on the slot's `full` barrier.

    ```mlir
    warpspec.tma_load %q[%row, %head] into %qbuf
        : memref<?x4x128xbf16>, !warpspec.buffer<64x128xbf16, smem>
    ```

    With `col_offset = c`, the copy is columns `[c, c + N)` of the head
    dimension into the `R x N` buffer (a slot that holds part of the head
    dimension: the sm_90a backward's half-depth slots above head dim 128,
    docs/head-dims.md); `c` is a multiple of the buffer's chunk width (64
    columns where N is a multiple of 64, else 32).

    ```mlir
    warpspec.tma_load %q[%row, %head] into %qhi {col_offset = 128 : i64}
        : memref<?x4x256xbf16>, !warpspec.buffer<64x128xbf16, smem>
    ```

    With `pair_halves` the buffer holds half-split pairs whole: its layout
    is `chunk_cols = C` (pieces of C columns, each an ordinary box of the
    tensor map whose inner extent fills its swizzle span), and chunk `i` of
    2 C columns from `col_offset = 2 C j` is piece `2 i`, columns
    `[C (j + i), C (j + i + 1))`, then piece `2 i + 1`, their partners
    `D / 2` columns on: pairs `C (j + i)` to `C (j + i + 1) - 1` whole (the
    half-split rotary backward's pair-complete chunks, docs/head-dims.md,
    "Pair-complete chunks as 64-byte-swizzled pieces"). The tensor map is
    the ordinary one of `C`-column boxes.

    ```mlir
    warpspec.tma_load %q[%row, %head] into %qc {col_offset = 64 : i64,
        pair_halves} : memref<?x4x256xbf16>,
        !warpspec.buffer<64x64xbf16, smem, chunk_cols = 32>
    ```
  }];
  let arguments = (ins AnyMemRef:$source, I32:$row, I32:$head,
                       WarpSpec_BufferType:$dest,
                       OptionalAttr<I64Attr>:$col_offset,
                       UnitAttr:$pair_halves);
  // The builder without a column offset (the whole head dimension).
  let builders = [
    OpBuilder<(ins "Value":$source, "Value":$row, "Value":$head,
                   "Value":$dest), [{
      build($_builder, $_state, source, row, head, dest,
            /*col_offset=*/IntegerAttr(), /*pair_halves=*/UnitAttr());
    }]>
  ];
  let assemblyFormat = [{
    $source `[` $row `,` $head `]` `into` $dest attr-dict `:` type($source) `,` type($dest)
  }];
  let hasVerifier = 1;
}

def WarpSpec_MmaOp : WarpSpec_Op<"mma"> {
  let summary = "tile matrix multiply on the tensor cores";
  let description = [{
    The `warpspec.mma` operation computes `D = A * B` (`A * B^T` with
    `transpose_b`, `A^T * B` with `transpose_a`) with f32 accumulation. `A`
    is `M x K` (a buffer stored `K x M` with `transpose_a`), either a
    shared-memory buffer or a 16-bit register tile; `B` is a shared-memory
    buffer, `K x N` (or `N x K` with `transpose_b`). Transposes cost nothing:
    they select the major-ness the tensor cores read the buffer with. The result is a
    register tile of the warpgroup that issues it (the wgmma accumulator on
    sm_90a). With `acc`, an f32 tile of the result's type, it computes
    `D = acc + A * B` (wgmma's scale-d from the first K step on, the result
    in `acc`'s registers): the grouped-query backward sums dK and dV over a
    group this way (A must then be in shared memory).

    ```mlir
    // dV += P^T dO
    %dv1 = warpspec.mma %p, %do plus %dv0 : !warpspec.acc<64x128xf32>
        {transpose_a} : !warpspec.buffer<64x64xbf16, smem>, !warpspec.buffer<64x128xbf16, smem>
          -> !warpspec.acc<64x128xf32>
    // S = Q K^T
    %s = warpspec.mma %q, %k {transpose_b}
        : !warpspec.buffer<64x128xbf16, smem>, !warpspec.buffer<64x128xbf16, smem>
          -> !warpspec.acc<64x64xf32>
    // O = P V, P from registers
    %o = warpspec.mma %p, %v
        : !warpspec.acc<64x64xbf16>, !warpspec.buffer<64x128xbf16, smem>
          -> !warpspec.acc<64x128xf32>
    ```

    With `acc(%c)`, the product is added to `%c` (a tile of the result's
    type): `D = C + A * B`. A product whose K is split across buffers (the
    block-size-128 backward's `dV = P^T dO` over two 64-row query halves)
    is two `warpspec.mma`, the second accumulating onto the first.

    ```mlir
    %dv = warpspec.mma %p1, %do1 acc(%dv0 : !warpspec.acc<64x128xf32>) {transpose_a}
        : !warpspec.buffer<64x64xbf16, smem>, !warpspec.buffer<64x128xbf16, smem>
          -> !warpspec.acc<64x128xf32>
    ```
  }];
  let arguments = (ins AnyTypeOf<[WarpSpec_BufferType, WarpSpec_AccType]>:$a,
                       WarpSpec_BufferType:$b, UnitAttr:$transpose_a,
                       UnitAttr:$transpose_b,
                       Optional<WarpSpec_AccType>:$acc);
  let results = (outs WarpSpec_AccType:$result);
  let assemblyFormat = [{
    $a `,` $b (`plus` $acc^ `:` type($acc))? attr-dict `:` type($a) `,`
    type($b) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "Type":$result, "Value":$a, "Value":$b,
                   "bool":$transpose_a, "bool":$transpose_b), [{
      build($_builder, $_state, result, a, b, transpose_a, transpose_b,
            Value());
    }]>
  ];
  let hasVerifier = 1;
}

def WarpSpec_MaskBlocksOp : WarpSpec_Op<"mask_blocks", [Pure,
    AllTypesMatch<["scores", "result"]>]> {
  let summary = "masks the scores across the packed blocks of a tile";
  let description = [{
    The `warpspec.mask_blocks` operation returns `scores` (the f32 `S = Q K^T`
    of a tile whose query and key rows are the same tokens) with `-inf` where
    row `i` and column `j` lie in different attention blocks. The tile holds
    up to `N / block` blocks of at most `block` rows, back to back (the
    blocks of several sequences: `warpspec.tile_loop ... packed`); byte `q`
    of the i32 `ends` is the end (exclusive) of block `q`, the ends are
    nondecreasing (an empty block ends where the one before it does), and
    the last is the tile's valid rows. Row `i` keeps the columns
    `[e(i), e'(i))` of its block. Rows at or past the valid rows take the last
    valid row's block, so that a following `warpspec.softmax` sees a finite
    maximum in every row. The cost is a few integer operations per row slot
    and two compares per element.

    ```mlir
    %m = warpspec.mask_blocks %s ends(%ends) block(16) : !warpspec.acc<64x64xf32>
    ```
  }];
  let arguments = (ins WarpSpec_AccType:$scores, I32:$ends, I64Attr:$block);
  let results = (outs WarpSpec_AccType:$result);
  let assemblyFormat = [{
    $scores `ends` `(` $ends `)` `block` `(` $block `)` attr-dict `:` type($scores)
  }];
  let hasVerifier = 1;
}

def WarpSpec_SoftmaxOp : WarpSpec_Op<"softmax", [Pure,
                                                  AttrSizedOperandSegments]> {
  let summary = "exact row softmax of a register tile";
  let description = [{
    The `warpspec.softmax` operation computes, for every row `i` of the f32
    tile `scores` and the columns `j < valid_cols`,

    ```
    P[i, j] = exp(scale * (S[i, j] - max_j' S[i, j']))     (0 for j >= valid_cols)
    L[i]    = sum_j P[i, j]                                (in f32)
    ```

    and returns `P` converted to the result's element type, and `L`. The
    whole row is one tile, so there is no online rescaling. The lowering
    folds `scale * log2(e)` into one fused multiply-add per element feeding
    `ex2`. By default P is left unnormalized: dividing the `M x N` output of
    `P V` by `L` (`warpspec.store ... divide_by`) is cheaper than dividing the
    `M x M` P. With `normalize`, P is divided by `L` (the backward needs the
    true probabilities). With `valid_rows`, rows `i >= valid_rows` of P are
    zero: those query rows belong to another sequence, and in the backward
    they must not contribute to `P^T dO` or `dS^T Q`.

    With `causal`, column `j > i` of row `i` is masked as well (causal
    attention inside the block: the tile's rows and columns are the same
    block's tokens, so query `i` sees keys `0..i`). With `row_offset(R)`
    as well, the tile's rows are the block's tokens `R..R + M - 1` (a later
    query half of a block larger than the MMA tile) and its columns the
    block's tokens from 0: column `j > R + i` of row `i` is masked.
    `dynamic_row_offset(%r)` is the same offset as an i32 value, for a tile
    whose query half is known only at run time: on sm_100a a 128-token
    block's two halves go to two softmax replicas that run one body, so
    replica `r` offsets its rows by `64 * warpspec.replica_id`. The value
    must lie in `[0, N)` for an `M x N` tile (not checked when it is not a
    constant). At most one of the two offsets is given.

    With `pin_columns` (in the attribute dictionary) each register's column
    index is computed from `valid_cols` as well (plus `min(valid_cols, 0)`,
    zero at run time, since `valid_cols` is not negative), so that it is
    recomputed wherever `valid_cols` is: a softmax in a loop whose columns
    depend on the thread alone would have them hoisted out of the loop and
    held across it (a register each), which a consumer that holds
    accumulators across the loop cannot afford; give it a `valid_cols`
    pinned in the loop (`warpspec.pin ... after(...)`).

    With `full_tile_path` (in the attribute dictionary) the lowering
    branches on whether the tile is full (`valid_cols` at least the tile's
    columns and, with `valid_rows`, that at least its rows; uniform across
    the warpgroup) to a copy of the softmax without the column and row
    masks: a compare and a select fewer per element, for twice the
    softmax's code. Neither `causal` nor `block` goes with it (their masks
    apply to full tiles too).

    With the optional result `lse`, the softmax also returns each row's
    log-sum-exp in natural-log units, `log(sum_j exp(scale * S[i, j]))` over
    the unmasked columns (`scale * max + log(L)`).

    With `block(B)` the tile holds several attention blocks of `B` rows
    each, and row `i` sees only the columns of its own block: scores with
    `floor(i / B) != floor(j / B)` are masked like the columns past
    `valid_cols` (P is 0 there, so are dS and every product of them). `B`
    is a power of two below the tile's rows that divides them. Rows at or
    past `valid_cols` (never stored) take the last valid row's block, so
    that every row's maximum is finite.

    ```mlir
    %p, %l = warpspec.softmax %s valid_cols(%rows) scale(%scale)
        : !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xbf16>, !warpspec.rows<64xf32>
    %pn, %l2 = warpspec.softmax %s valid_cols(%rows) valid_rows(%rows) scale(%scale) normalize
        : !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xf32>, !warpspec.rows<64xf32>
    %pc, %l3, %lse = warpspec.softmax %s valid_cols(%rows) scale(%scale) causal
        : !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xbf16>, !warpspec.rows<64xf32>, !warpspec.rows<64xf32>
    %pb, %lb = warpspec.softmax %s valid_cols(%rows) scale(%scale) block(16)
        : !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xbf16>, !warpspec.rows<64xf32>
    %ph, %lh = warpspec.softmax %s valid_cols(%rows) valid_rows(%half) scale(%scale) normalize causal row_offset(64)
        : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x128xf32>, !warpspec.rows<64xf32>
    %pf, %lf = warpspec.softmax %s valid_cols(%rows) valid_rows(%rows) scale(%scale) normalize {full_tile_path}
        : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x128xf32>, !warpspec.rows<64xf32>
    %r = warpspec.replica_id
    %c64 = arith.constant 64 : i32
    %off = arith.muli %r, %c64 : i32
    %pd, %ld, %lsed = warpspec.softmax %s valid_cols(%rows) scale(%scale) causal dynamic_row_offset(%off)
        : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x128xbf16>, !warpspec.rows<64xf32>, !warpspec.rows<64xf32>
    ```
  }];
  let arguments = (ins WarpSpec_AccType:$scores, I32:$valid_cols,
                       Optional<I32>:$valid_rows, F32:$scale,
                       UnitAttr:$normalize, UnitAttr:$causal,
                       OptionalAttr<I64Attr>:$block,
                       OptionalAttr<I64Attr>:$row_offset,
                       Optional<I32>:$dynamic_row_offset,
                       UnitAttr:$pin_columns, UnitAttr:$full_tile_path);
  let results = (outs WarpSpec_AccType:$probs, WarpSpec_RowsType:$row_sums,
                      Optional<WarpSpec_RowsType>:$lse);
  let assemblyFormat = [{
    $scores `valid_cols` `(` $valid_cols `)` (`valid_rows` `(` $valid_rows^ `)`)?
    `scale` `(` $scale `)` (`normalize` $normalize^)? (`causal` $causal^)?
    (`row_offset` `(` $row_offset^ `)`)?
    (`dynamic_row_offset` `(` $dynamic_row_offset^ `)`)?
    (`block` `(` $block^ `)`)? attr-dict
    `:` type($scores) `->` type($probs) `,` type($row_sums) (`,` type($lse)^)?
  }];
  // Without a row offset (every tile but a large block's later query
  // halves; warpspec::SoftmaxOp::setRowOffsetAttr sets a static one,
  // getDynamicRowOffsetMutable().assign a dynamic one).
  let builders = [
    OpBuilder<(ins "Type":$probs, "Type":$row_sums, "Type":$lse,
                   "Value":$scores, "Value":$valid_cols, "Value":$valid_rows,
                   "Value":$scale, "bool":$normalize, "bool":$causal,
                   "IntegerAttr":$block), [{
      build($_builder, $_state, probs, row_sums, lse, scores, valid_cols,
            valid_rows, scale, normalize, causal, block, IntegerAttr(),
            /*dynamic_row_offset=*/Value(), /*pin_columns=*/false,
            /*full_tile_path=*/false);
    }]>
  ];
  let hasVerifier = 1;
}

def WarpSpec_SoftmaxGradOp : WarpSpec_Op<"softmax_grad", [Pure]> {
  let summary = "dS = scale * P * (dP - rowsum(P * dP)) of register tiles";
  let description = [{
    The `warpspec.softmax_grad` operation computes the gradient of the
    attention scores from the (normalized) probabilities `probs` and their
    gradient `dprobs` = dO V^T, both f32 tiles of one shape:

    ```
    D[i]     = sum_j P[i, j] * dP[i, j]                    (= rowsum(dO * O))
    dS[i, j] = scale * P[i, j] * (dP[i, j] - D[i])
    ```

    converted to the result's element type. `probs` may also be a 16-bit
    tile (the probabilities as rounded for the products that read them from
    shared memory), widened to f32 as it is read: half the registers of
    f32 probabilities while dP's product runs, for a consumer that holds
    accumulators next to them (the sm_90a grouped block-128 backward with
    `group-roles=query-halves`). `D` is computed inline from the
    tiles, so the forward output O is never read and no preprocessing pass
    is needed. The softmax scale is folded in, so that dK = dS^T Q and
    dQ = dS K need no further scaling.

    With `dlse(%g)`, the gradient of each row's log-sum-exp (an output of
    the forward) adds its term, `d lse[i] / d S[i, j] = scale * P[i, j]`:
    `dS[i, j] = scale * P[i, j] * (dP[i, j] - D[i] + g[i])`.

    ```mlir
    %ds = warpspec.softmax_grad %p, %dp scale(%scale)
        : !warpspec.acc<64x64xf32>, !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xbf16>
    %ds2 = warpspec.softmax_grad %p, %dp scale(%scale) dlse(%g : !warpspec.rows<64xf32>)
        : !warpspec.acc<64x64xf32>, !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xbf16>
    %ds3 = warpspec.softmax_grad %p16, %dp scale(%scale)
        : !warpspec.acc<64x128xbf16>, !warpspec.acc<64x128xf32> -> !warpspec.acc<64x128xbf16>
    ```
  }];
  let arguments = (ins WarpSpec_AccType:$probs, WarpSpec_AccType:$dprobs,
                       F32:$scale, Optional<WarpSpec_RowsType>:$dlse);
  let results = (outs WarpSpec_AccType:$grad);
  let assemblyFormat = [{
    $probs `,` $dprobs `scale` `(` $scale `)`
    (`dlse` `(` $dlse^ `:` type($dlse) `)`)? attr-dict
    `:` type($probs) `,` type($dprobs) `->` type($grad)
  }];
  let hasVerifier = 1;
}

def WarpSpec_StoreRowsOp : WarpSpec_Op<"store_rows"> {
  let summary = "store of per-row values to an f32 [H, T] memref";
  let description = [{
    The `warpspec.store_rows` operation writes value `i` of the per-row
    values `value` to `dest[head, row + i]` for `i < rows` (the tile's valid
    rows; the rest belong to the next sequence). `dest` is an f32 memref
    `[H, T]` with a unit-stride token dimension, such as the forward's
    log-sum-exp. One thread per row stores (plain stores: a row's 4 bytes
    are too few for TMA, whose strides must be 16-byte aligned, which
    `[H, T]` rows are not for every T).

    ```mlir
    warpspec.store_rows %lse, %out[%row, %head] rows(%rows)
        : !warpspec.rows<64xf32>, memref<?x?xf32>
    ```
  }];
  let arguments = (ins WarpSpec_RowsType:$value,
                       Arg<AnyMemRef, "[H, T] f32", [MemWrite]>:$dest,
                       I32:$row, I32:$head, I32:$rows);
  let assemblyFormat = [{
    $value `,` $dest `[` $row `,` $head `]` `rows` `(` $rows `)` attr-dict
    `:` type($value) `,` type($dest)
  }];
  let hasVerifier = 1;
}

def WarpSpec_LoadRowsOp : WarpSpec_Op<"load_rows"> {
  let summary = "load of per-row values from an f32 [H, T] memref";
  let description = [{
    The `warpspec.load_rows` operation reads `source[head, row + i]` for the
    tile's valid rows `i < rows`, and 0 for the others, into per-row values
    held by the threads that hold row `i` of a register tile (for example
    the backward's log-sum-exp gradient). `source` is an f32 memref
    `[H, T]` with a unit-stride token dimension.

    With `pinned_rows`, the thread's rows are pinned where they are read (as
    `warpspec.pin` pins an i32): the offsets of the thread's rows are
    kernel constants, which LLVM hoists out of every loop around the read
    and holds (a 64-bit pair a row); the sm_90a grouped block-128 backward's
    scores warpgroup above head dim 128 held them across its chunk loops and
    ptxas spilled one (4 bytes, with rotate_v and dlse at head dim 192).

    ```mlir
    %g = warpspec.load_rows %dlse[%row, %head] rows(%rows)
        : memref<?x?xf32> -> !warpspec.rows<64xf32>
    ```
  }];
  let arguments = (ins Arg<AnyMemRef, "[H, T] f32", [MemRead]>:$source,
                       I32:$row, I32:$head, I32:$rows,
                       UnitAttr:$pinned_rows);
  let results = (outs WarpSpec_RowsType:$value);
  let assemblyFormat = [{
    $source `[` $row `,` $head `]` `rows` `(` $rows `)` attr-dict
    `:` type($source) `->` type($value)
  }];
  let hasVerifier = 1;
}

def WarpSpec_StoreOp : WarpSpec_Op<"store", [AttrSizedOperandSegments]> {
  let summary = "masked store of a register tile's valid rows";
  let description = [{
    The `warpspec.store` operation writes rows `[0, rows)` of the register
    tile `value` to `dest[row + i, head, :]` (a `[T, H, D]` memref),
    converting to `dest`'s element type; with `divide_by`, row `i` is first
    divided by `divide_by[i]`. Rows `>= rows` are not written, so a
    sequence's partial last block never touches the next sequence.

    With `via(%staging)` (a shared-memory buffer of the tile's shape and the
    destination's element type, private to the warpgroup), the tile is first
    written there, then copied out in whole 128-byte row segments with 16-byte
    stores: every global store instruction writes full cache lines, instead of
    the 16-byte pieces a thread's accumulator fragment holds. With `bulk`
    too, a tile with all its rows valid leaves the buffer through the tensor
    memory accelerator (an asynchronous bulk tensor store issued by one
    thread) and only a sequence's partial last tile is copied out by the
    threads. With `stmatrix` (in the attribute dictionary) the tile is
    written to the staging buffer with `stmatrix` instead of `st.shared`, as
    `warpspec.write {stmatrix}` does.

    The staging buffer is a `warpspec.scratch` of the partition, or a buffer
    of a ring slot the partition holds (a `warpspec.consume` body's buffer
    argument; once the protocol is lowered, a `warpspec.slot_buffers`
    result) whose tile no partition reads any more, such as q's once the
    backward's last product that reads it has completed (`o-store=slot`).
    A bulk store so staged still reads the slot after the store, so the
    slot's `warpspec.release`, later in the same block, must be
    `after_stores` (the verifier checks it).

    With `col_offset = c`, the tile is columns `[c, c + N)` of the head
    dimension (an output computed in column chunks of the head dimension);
    `c` is a multiple of 32.

    With `bulk` and `pending_reads = n` (0 or 1), the store waits for all
    but the `n` most recent bulk stores of the warpgroup to have read their
    staging buffers before it writes its own (`cp.async.bulk.wait_group.read
    n`): with two staging buffers that alternate, the store before last,
    whose buffer this one reuses. Without it, 0.

    With `via` and `pinned_steps`, the copy-out's row steps (a thread copies
    rows r, r + s, r + 2 s, ... of the tile) are pinned at the store (as
    `warpspec.pin` pins an i32): the address `s` rows on, `dest` plus s times
    its row stride, is a kernel constant, which LLVM hoists out of every loop
    around the store and holds, one 64-bit register pair per output. The
    sm_100a softmax warpgroup of the grouped block-128 rotary backward in
    column passes, at its registers' limit, spilled those of dQ, dV and dK
    (8-24 bytes at head dim 96); pinned, they are recomputed where a partial
    tile is copied out. Without `via`, `pinned_steps` pins the thread's
    column and rows at the store (each thread stores its fragment's rows):
    the addresses of the thread's rows, `dest` plus the row times its
    stride, are kernel constants too, which LLVM held (a 64-bit pair a row)
    from the partition's entry across the loops around the store (the
    sm_90a grouped block-128 backward's accumulate warpgroups above head dim
    128 spilled them with rotate_v and positions, 20-24 bytes). With
    `wide_offsets` too, the pairs' column offsets are added to the pinned
    column in 64 bits, so that they become the stores' immediate offsets
    (added in 32 bits to a value LLVM cannot bound, each stays a register
    through the store: with them ptxas spilled the item loop's counter of the
    interleaved accumulate warpgroups at head dim 256 with positions and
    rotate_v, G >= 4). Which of the two spills depends on the kernel (the
    half-split rotate_v ones at head dim 192 spill 48 bytes with 64-bit
    offsets), so the plan chooses.

    ```mlir
    warpspec.store %o to %out[%row, %head] rows(%rows) divide_by(%l) via(%stage)
        : !warpspec.acc<64x128xf32>, memref<?x4x128xbf16>, !warpspec.rows<64xf32>,
          !warpspec.buffer<64x128xbf16, smem>
    // dK staged in q's buffer of the slot %slot, which the consume holds.
    warpspec.store %dk to %dkey[%row, %head] rows(%rows) via(%q) bulk {pending_reads = 1 : i64}
        : !warpspec.acc<64x128xf32>, memref<?x4x128xbf16>,
          !warpspec.buffer<64x128xbf16, smem>
    warpspec.release %slot after_stores
    ```
  }];
  let arguments = (ins WarpSpec_AccType:$value, AnyMemRef:$dest, I32:$row,
                       I32:$head, I32:$rows,
                       Optional<WarpSpec_RowsType>:$divide_by,
                       Optional<WarpSpec_BufferType>:$staging,
                       UnitAttr:$bulk, OptionalAttr<I64Attr>:$col_offset,
                       OptionalAttr<I64Attr>:$pending_reads,
                       UnitAttr:$pinned_steps, UnitAttr:$wide_offsets,
                       UnitAttr:$stmatrix);
  // The builder without a column offset (a whole-width tile).
  let builders = [
    OpBuilder<(ins "Value":$value, "Value":$dest, "Value":$row, "Value":$head,
                   "Value":$rows, "Value":$divide_by, "Value":$staging,
                   "UnitAttr":$bulk), [{
      build($_builder, $_state, value, dest, row, head, rows, divide_by,
            staging, bulk, /*col_offset=*/IntegerAttr(),
            /*pending_reads=*/IntegerAttr(), /*pinned_steps=*/UnitAttr(),
            /*wide_offsets=*/UnitAttr(), /*stmatrix=*/UnitAttr());
    }]>
  ];
  let assemblyFormat = [{
    $value `to` $dest `[` $row `,` $head `]` `rows` `(` $rows `)`
    (`divide_by` `(` $divide_by^ `)`)? (`via` `(` $staging^ `)`)? (`bulk` $bulk^)? attr-dict
    `:` type($value) `,` type($dest) ``
    custom<StoreOptionalTypes>(type($divide_by), type($staging))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tracing
//===----------------------------------------------------------------------===//

def WarpSpec_TraceAnchorOp : WarpSpec_Op<"trace_anchor",
    [ParentOneOf<["KernelOp", "PartitionOp"]>]> {
  let summary = "the CTA's clock against the global timer";
  let description = [{
    The `warpspec.trace_anchor` operation has thread 0 of the CTA read the
    global nanosecond timer (`%globaltimer`) and the SM's cycle counter
    (`%clock64`) together and write them into the header of the CTA's region
    of the trace buffer `buffer`, with the SM's index (`%smid`): `start`
    when the CTA starts, `end` when the partition of warp 0 ends.
    `%clock64` is precise but counts the cycles of one SM from an arbitrary
    origin; `%globaltimer` is shared by the whole GPU but coarse (it ticks
    every microsecond on some GPUs): the anchors of the CTAs that ran on one
    SM map that SM's clock onto nanoseconds. The kernel must be traced
    (`trace_records`). `start` stands directly in the kernel, before its
    partitions: it is read before the barrier that releases every role, so
    no role records an event before the CTA's start (warp 0's partition
    may begin after the other roles' first events). `end` stands in the
    placed partition that runs on warp 0. The header layout is
    `TraceLayout`'s (WarpSpecOps.h), which the manifest describes.

    ```mlir
    warpspec.kernel chip(sm_90a) trace_records(256) {
      warpspec.trace_anchor %trace start : memref<?xi64>
      warpspec.partition "producer" role(load) warps(1) ... {
        ...
        warpspec.trace_anchor %trace end : memref<?xi64>
      }
      ...
    }
    ```
  }];
  let arguments = (ins MemRefRankOf<[I64], [1]>:$buffer, UnitAttr:$start,
                       UnitAttr:$end);
  let assemblyFormat = [{
    $buffer (`start` $start^)? (`end` $end^)? attr-dict `:` type($buffer)
  }];
  let hasVerifier = 1;
}

def WarpSpec_TraceLaneOp : WarpSpec_Op<"trace_lane",
    [HasParent<"PartitionOp">]> {
  let summary = "the lane of the trace buffer one partition replica records into";
  let description = [{
    The `warpspec.trace_lane` operation returns the lane of the trace buffer
    `buffer` that replica `replica` of the enclosing (placed) partition
    records into: lanes are numbered across the kernel's partitions and
    their replicas in warp order, and each holds the kernel's
    `trace_records` records of 16 bytes in every CTA's region, after the
    header's slot of as many (`TraceLayout`). Only the replica's thread 0
    (`thread` is the partition_index's thread) records, so that a trace
    costs one thread a clock read and a 16-byte store per event; the others,
    and a CTA whose region lies past the buffer's end, write nothing. Its
    operands are those of the partition's `warpspec.partition_index`.

    ```mlir
    %replica, %thread = warpspec.partition_index
    %lane = warpspec.trace_lane %trace[%replica] thread(%thread) : memref<?xi64>
    ```
  }];
  let arguments = (ins MemRefRankOf<[I64], [1]>:$buffer, I32:$replica,
                       I32:$thread);
  let results = (outs WarpSpec_TraceType:$lane);
  let assemblyFormat = [{
    $buffer `[` $replica `]` `thread` `(` $thread `)` attr-dict `:` type($buffer)
  }];
  let hasVerifier = 1;
}

def WarpSpec_TraceOp : WarpSpec_Op<"trace"> {
  let summary = "record a pipeline event with the SM's clock";
  let description = [{
    The `warpspec.trace` operation appends one record to `lane` (a
    `warpspec.trace_lane` of the same partition): the SM's cycle counter
    (`%clock64`, 8 bytes), the event code (4 bytes: `event` in the low
    byte, `detail` in the next, e.g. which channel a wait is on) and
    `value` (4 bytes, 0 without it; the tile's first row at `tile_begin`).
    A lane that is full records nothing more, so the buffer is bounded: a
    CTA keeps the first `trace_records` events of each lane.
    `warpspec-insert-trace` brackets the pipeline's ops with them.

    ```mlir
    warpspec.trace %lane wait_begin detail(0)
    warpspec.wait_full %qkv[%stage] phase(%phase) : !qkv
    warpspec.trace %lane wait_end detail(0)
    warpspec.trace %lane tile_begin value(%row)
    ```
  }];
  let arguments = (ins WarpSpec_TraceType:$lane,
                       WarpSpec_TraceEventAttr:$event,
                       DefaultValuedAttr<I64Attr, "0">:$detail,
                       Optional<I32>:$value);
  let assemblyFormat = [{
    $lane `` $event (`detail` `(` $detail^ `)`)? (`value` `(` $value^ `)`)?
    attr-dict
  }];
  let hasVerifier = 1;
}

#endif // BLOCKATTN_DIALECT_WARPSPEC_IR_WARPSPECOPS_TD
