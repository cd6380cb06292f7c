//===- WarpSpecTypes.td - warpspec types -------------------*- tablegen -*-===//

#ifndef BLOCKATTN_DIALECT_WARPSPEC_IR_WARPSPECTYPES_TD
#define BLOCKATTN_DIALECT_WARPSPEC_IR_WARPSPECTYPES_TD

include "blockattn/Dialect/WarpSpec/IR/WarpSpecDialect.td"
include "blockattn/Dialect/WarpSpec/IR/WarpSpecAttrs.td"

class WarpSpec_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<WarpSpec_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def WarpSpec_BufferType : WarpSpec_Type<"Buffer", "buffer"> {
  let summary = "one tile buffer of a channel slot, in shared or tensor memory";
  let description = [{
    A handle to one buffer of the channel slot that the enclosing
    `warpspec.acquire` or `warpspec.consume` is working on: a row-major tile
    of `shape` elements. Shared-memory tiles of 16-bit elements are stored as
    64-column chunks with the 128-byte swizzle that TMA writes and the tensor
    cores read, so a 64x128 tile is two 8 KiB chunks.

    A buffer must fit where it lives: a shared-memory buffer in the 227 KiB
    of a CTA, a tensor-memory buffer (2-D) in its 128 lanes x 512 columns of
    32-bit cells.

    Example: `!warpspec.buffer<64x128xbf16, smem>`.

    Tiles whose width is not a multiple of 64 (head dims 32 and 96) are
    32-column chunks with the 64-byte swizzle instead. `chunk_cols = 32` asks
    for that layout on a tile whose width is a multiple of 64: a 64-column
    buffer is then two 32-column pieces of `rows x 64` bytes, each written by
    its own TMA box (a box's inner extent must fill its swizzle span on the
    hardware, docs/head-dims.md, so a 64-column chunk cannot be made of two
    32-column boxes under the 128-byte swizzle). The half-split rotary
    backward loads its pair-complete chunks so: piece 0 columns `[32 j, 32 j
    + 32)`, piece 1 their partners `[D / 2 + 32 j, D / 2 + 32 j + 32)`.

    Example: `!warpspec.buffer<64x64xbf16, smem, chunk_cols = 32>`; in a
    channel `!warpspec.channel<[64x64xbf16 chunk_cols = 32], smem>`.

    Tiles 16 columns wide (or any width that is not a multiple of 32) are
    16-column chunks with the 32-byte swizzle: rows of 32 bytes, each a
    16-column TMA box that fills the 32-byte span. `chunk_cols = 16` asks for
    that layout on a tile whose width is a multiple of 32: at head dim 96 the
    half-split pair-complete chunks of 32 columns are two 16-column pieces,
    piece 0 columns `[16 j, 16 j + 16)`, piece 1 their partners `[48 + 16 j,
    64 + 16 j)` (the grouped block-128 backward's passes over 32-column
    chunks; a 16-column piece under the 64-byte swizzle would be a box
    narrower than its span).

    Example: `!warpspec.buffer<128x96xbf16, smem, chunk_cols = 16>`.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "Type":$elementType,
                        EnumParameter<WarpSpec_MemorySpace>:$memorySpace,
                        DefaultValuedParameter<"int64_t", "0">:$chunkCols);
  // The width's own layout (chunk_cols absent), as every buffer but the
  // half-split pair-complete chunks has.
  let builders = [
    TypeBuilder<(ins "ArrayRef<int64_t>":$shape, "Type":$elementType,
                     "MemorySpace":$memorySpace), [{
      return $_get($_ctxt, shape, elementType, memorySpace, 0);
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Size of the buffer in bytes.
    int64_t getSizeInBytes() const;
    /// The chunk width of a tile `cols` elements wide in its own layout (no
    /// `chunk_cols`): 64 where the width is a multiple of 64 (128-byte
    /// swizzle), else 32 where it is a multiple of 32 (64-byte swizzle), else
    /// 16 (32-byte swizzle); nvdesc::SwizzledTile::chunkColsFor.
    static int64_t ownChunkCols(int64_t cols) {
      return cols % 64 == 0 ? 64 : cols % 32 == 0 ? 32 : 16;
    }
    /// The columns of one swizzled chunk of a shared-memory tile of 16-bit
    /// elements: `chunk_cols` when given, else the width's own
    /// (ownChunkCols).
    int64_t getLayoutChunkCols() const {
      if (getChunkCols())
        return getChunkCols();
      return ownChunkCols(getShape().back());
    }
    /// The same tile shape and element type, with this buffer's layout.
    BufferType withShape(ArrayRef<int64_t> shape) const;
    /// Tensor-memory columns of a 2-D buffer: one per 32-bit cell of a row
    /// (rows of narrower elements are packed; the last cell may be partial).
    int64_t getTmemColumns() const;
  }];
}

def WarpSpec_ChannelType : WarpSpec_Type<"Channel", "channel"> {
  let summary = "a ring of slots, each holding one buffer per tile handed over";
  let description = [{
    The type of a `warpspec.channel`: the buffers of one slot and where they
    live. Every slot also carries the coordinates of the tile it holds.

    Example: `!warpspec.channel<[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>`
    (q, k and v of one tile).

    A channel may have no buffers, `!warpspec.channel<[], smem>`: a signal.
    Its slots hold only the barriers and the tile's coordinates, and say
    that a stage of work on the tile, which lives in another channel's slot,
    is done (the sm_90a rotary warpgroup signals so to the consumers that
    it rotated their slot in place). Signals live in shared memory.

    Besides its 2-D tiles a shared-memory slot may hold 1-D buffers of i32,
    one value per row of the slot's tiles: the tile's positions
    (`warpspec.copy_positions`), after the tiles in the type.

    Example: `!warpspec.channel<[64x128xbf16, 64x128xbf16, 64xi32], smem>`.
  }];
  let parameters = (ins ArrayRefParameter<"Type">:$bufferTypes,
                        EnumParameter<WarpSpec_MemorySpace>:$memorySpace);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Bytes of one slot's tiles (its 2-D buffers).
    int64_t getSlotSizeInBytes() const;
    /// Bytes of one slot's 1-D buffers (row values: a tile's positions),
    /// each rounded up to 16 bytes; they live apart from the tiles
    /// (`warpspec.channel`'s `rows_offset`).
    int64_t getRowBuffersSizeInBytes() const;
    /// Whether `type` is a row-value buffer (1-D) rather than a tile.
    static bool isRowBuffer(Type type) {
      return cast<BufferType>(type).getShape().size() == 1;
    }
  }];
}

def WarpSpec_SlotType : WarpSpec_Type<"Slot", "slot"> {
  let summary = "one slot of a channel, held by the partition that took it";
  let description = [{
    The slot that a `warpspec.acquire` (producer), a `warpspec.get` or a
    `warpspec.consume` (consumer) took of a channel, as an SSA value. The
    operations that work on that slot take it as an operand: the producer
    publishes it with `warpspec.commit`, a consumer gives it back with
    `warpspec.release` and reads its tile's position with
    `warpspec.tile_position`; the buffers of the slot are results (or block
    arguments) of the same operation. So which slot an operation works on is
    the value it names, and only a partition that took a slot can name it:
    dominance keeps a slot inside the partition, and the block, that took
    it, and each slot is given back exactly once (the verifiers of
    `warpspec.acquire`, `warpspec.get` and `warpspec.consume`).

    Example: `%slot, %q, %k, %v = warpspec.acquire %qkv : !qkv` gives a
    `!warpspec.slot`.
  }];
}

def WarpSpec_AccType : WarpSpec_Type<"Acc", "acc"> {
  let summary = "a tile distributed over the registers of a warpgroup";
  let description = [{
    A `rows x cols` tile held in the registers of the 128 threads of one
    warpgroup. The distribution is the one the target's matrix instructions
    use (the wgmma accumulator fragment on sm_90a, the `tcgen05.ld` 32x32b
    layout on sm_100a); tile math such as `warpspec.softmax` is written
    against the tile, the lowering knows which thread holds which element.
    f32 tiles are accumulators; 16-bit tiles are MMA A operands (P).

    Example: `!warpspec.acc<64x64xf32>`.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "Type":$elementType);
  let hasCustomAssemblyFormat = 1;
}

def WarpSpec_RowsType : WarpSpec_Type<"Rows", "rows"> {
  let summary = "one value per row of a register tile";
  let description = [{
    Per-row values of a `!warpspec.acc` tile (for example softmax row sums),
    held by the threads that hold the row.

    Example: `!warpspec.rows<64xf32>`.
  }];
  let parameters = (ins "int64_t":$numRows, "Type":$elementType);
  let hasCustomAssemblyFormat = 1;
}

def WarpSpec_TraceType : WarpSpec_Type<"Trace", "trace"> {
  let summary = "the trace lane a partition replica records into";
  let description = [{
    The result of `warpspec.trace_lane`: the trace buffer, and the index in
    it of the next record of one partition replica (0 when the thread does
    not record or the lane is full). `warpspec.trace` takes it; the lowering
    keeps the index in a per-thread variable, one register after SROA.

    Example: `%lane = warpspec.trace_lane %buf[%replica] thread(%thread)
    : memref<?xi64>` gives a `!warpspec.trace`.
  }];
}

#endif // BLOCKATTN_DIALECT_WARPSPEC_IR_WARPSPECTYPES_TD
