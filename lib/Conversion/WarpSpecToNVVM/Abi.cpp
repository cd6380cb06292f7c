//===- Abi.cpp - kernel parameters and the launch manifest ----------------===//
//
// A kernel's parameters follow from how it uses the function's arguments:
// a [T, H, D] memref that is loaded with TMA is passed as a tensor map; one
// that is stored to is passed as a pointer and its two outer strides; a 1-D
// memref as a pointer and its length; dynamic sizes the kernel reads as i32;
// f32 scalars as themselves. The manifest spells this out so that a runtime
// can build every argument with no other knowledge of the kernel.
//
//===----------------------------------------------------------------------===//

#include "Prologue.h"
#include "blockattn/Conversion/WarpSpecToNVVM/Descriptors.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::blockattn::lowering;
using namespace mlir::warpspec;

namespace {

std::string argName(func::FuncOp func, unsigned index) {
  if (auto name = func.getArgAttrOfType<StringAttr>(index, "blockattn.name"))
    return name.str();
  return "arg" + std::to_string(index);
}

struct ArgUses {
  bool tma = false;
  int64_t tmaRows = 0;
  /// The chunk width of the tiles TMA moves (the buffer's layout, or for a
  /// bulk store the width's own), which is the box's width and decides its
  /// swizzle (nvdesc::SwizzledTile).
  int64_t boxCols = 0;
  bool pointer = false;
  SmallVector<bool> dims;
};

} // namespace

FailureOr<SmallVector<KernelParam>>
mlir::blockattn::lowering::buildKernelParams(func::FuncOp func,
                                             KernelOp kernel) {
  DenseMap<Value, ArgUses> uses;
  for (BlockArgument arg : func.getArguments())
    if (auto type = dyn_cast<MemRefType>(arg.getType()))
      uses[arg].dims.assign(type.getRank(), false);

  WalkResult walk = kernel.walk([&](Operation *op) -> WalkResult {
    if (auto load = dyn_cast<TmaLoadOp>(op)) {
      ArgUses &u = uses[load.getSource()];
      int64_t rows = load.getDest().getType().getShape()[0];
      if (u.tma && u.tmaRows != rows)
        return op->emitOpError()
               << "loads tiles of " << rows << " rows from a tensor that is "
               << "also loaded in tiles of " << u.tmaRows
               << " rows; one tensor map serves one box shape";
      int64_t boxCols = load.getDest().getType().getLayoutChunkCols();
      if (u.tma && u.boxCols != boxCols)
        return op->emitOpError()
               << "loads " << boxCols << "-column chunks of a tensor that is "
               << "also accessed in " << u.boxCols
               << "-column chunks; one tensor map serves one box shape";
      u.tma = true;
      u.tmaRows = rows;
      u.boxCols = boxCols;
    } else if (auto store = dyn_cast<StoreOp>(op)) {
      ArgUses &u = uses[store.getDest()];
      u.pointer = true;
      if (store.getBulk()) {
        int64_t rows = store.getValue().getType().getShape()[0];
        if (u.tma && u.tmaRows != rows)
          return op->emitOpError() << "stores tiles of " << rows
                                   << " rows to a tensor also accessed in "
                                      "tiles of "
                                   << u.tmaRows << " rows";
        int64_t boxCols = nvdesc::SwizzledTile::chunkColsFor(
            store.getValue().getType().getShape()[1]);
        if (u.tma && u.boxCols != boxCols)
          return op->emitOpError()
                 << "stores " << boxCols << "-column chunks to a tensor also "
                 << "accessed in " << u.boxCols
                 << "-column chunks; one tensor map serves one box shape";
        u.tma = true;
        u.tmaRows = rows;
        u.boxCols = boxCols;
      }
    } else if (auto rows = dyn_cast<StoreRowsOp>(op)) {
      uses[rows.getDest()].pointer = true;
    } else if (auto rows = dyn_cast<LoadRowsOp>(op)) {
      uses[rows.getSource()].pointer = true;
    } else if (auto loop = dyn_cast<TileLoopOp>(op)) {
      uses[loop.getCuSeqlens()].pointer = true;
      if (Value schedule = loop.getSchedule()) {
        if (!uses.count(schedule))
          return op->emitOpError() << "dynamic schedule must be an argument "
                                      "of the kernel function";
        uses[schedule].pointer = true;
      }
    } else if (isa<TraceAnchorOp, TraceLaneOp>(op)) {
      // The trace buffer: base and length (in 8-byte words), which bounds
      // the CTAs that record.
      Value buffer = isa<TraceLaneOp>(op) ? cast<TraceLaneOp>(op).getBuffer()
                                          : cast<TraceAnchorOp>(op).getBuffer();
      if (!uses.count(buffer))
        return op->emitOpError()
               << "trace buffer must be an argument of the kernel function";
      uses[buffer].pointer = true;
    } else if (isa<RotateOp, RotateTileOp, RotaryAnglesOp, LoadPositionsOp,
                   CopyPositionsOp>(op)) {
      // Tables: base, row stride and row count (positions are clamped into
      // it); positions: base and length.
      Value cos, sin, positions;
      auto operandsOf = [&](auto rotary) {
        cos = rotary.getCos(), sin = rotary.getSin();
        positions = rotary.getPositions();
      };
      if (auto rotate = dyn_cast<RotateOp>(op))
        operandsOf(rotate);
      else if (auto tile = dyn_cast<RotateTileOp>(op))
        operandsOf(tile);
      else if (auto angles = dyn_cast<RotaryAnglesOp>(op))
        operandsOf(angles);
      else if (auto load = dyn_cast<LoadPositionsOp>(op))
        positions = load.getPositions();
      else
        positions = cast<CopyPositionsOp>(op).getPositions();
      // The tile's positions in a slot are no parameter.
      if (positions && !isa<MemRefType>(positions.getType()))
        positions = Value();
      for (Value table : {cos, sin}) {
        if (!table)
          continue;
        if (!uses.count(table))
          return op->emitOpError()
                 << "rotary tables must be arguments of the kernel function";
        uses[table].pointer = true;
        uses[table].dims[0] = true;
      }
      if (positions) {
        if (!uses.count(positions))
          return op->emitOpError()
                 << "positions must be an argument of the kernel function";
        uses[positions].pointer = true;
      }
    } else if (auto dim = dyn_cast<memref::DimOp>(op)) {
      // The verifier keeps the index constant and inside the rank; the
      // size is a parameter only if the memref is one.
      std::optional<int64_t> index = dim.getConstantIndex();
      auto it = uses.find(dim.getSource());
      if (it == uses.end())
        return op->emitOpError()
               << "inside a kernel must take the size of an argument of the "
                  "kernel function";
      if (!index || *index < 0 ||
          *index >= static_cast<int64_t>(it->second.dims.size()))
        return op->emitOpError()
               << "must use a constant dimension index inside the rank";
      it->second.dims[*index] = true;
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  SmallVector<KernelParam> params;
  for (BlockArgument arg : func.getArguments()) {
    std::string name = argName(func, arg.getArgNumber());
    if (arg.getType().isF32()) {
      KernelParam p{KernelParam::Kind::F32, name, name, "scalar"};
      p.source = arg;
      params.push_back(p);
      continue;
    }
    auto type = dyn_cast<MemRefType>(arg.getType());
    if (!type) {
      if (!arg.use_empty())
        return func.emitError()
               << "kernel argument " << arg.getArgNumber() << " of type "
               << arg.getType() << " cannot be passed to a GPU kernel";
      continue;
    }
    if (!uses.count(arg))
      continue;
    const ArgUses &u = uses[arg];
    if (u.tma) {
      KernelParam p{KernelParam::Kind::TensorMap, name + "_tmap", name,
                    "tensormap"};
      p.elementType = type.getElementType();
      // One box is one chunk of the tile (nvdesc::SwizzledTile): a
      // pair-complete chunk's pieces (pair_halves) are boxes of their own.
      p.box = {u.boxCols, 1, u.tmaRows};
      p.source = arg;
      params.push_back(p);
    }
    if (u.pointer) {
      KernelParam p{KernelParam::Kind::Pointer, name, name, "base"};
      p.elementType = type.getElementType();
      p.source = arg;
      params.push_back(p);
      if (type.getRank() == 1) {
        KernelParam size{KernelParam::Kind::I32, name + "_size0", name, "size",
                         0};
        size.source = arg;
        params.push_back(size);
      }
      for (int64_t d = 0; d + 1 < type.getRank(); ++d) {
        KernelParam stride{KernelParam::Kind::I64,
                           name + "_stride" + std::to_string(d), name, "stride",
                           d};
        stride.source = arg;
        params.push_back(stride);
      }
    }
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!u.dims[d] || !type.isDynamicDim(d))
        continue;
      if (type.getRank() == 1 && u.pointer && d == 0)
        continue; // already passed as <name>_size0
      KernelParam size{KernelParam::Kind::I32,
                       name + "_size" + std::to_string(d), name, "size", d};
      size.source = arg;
      params.push_back(size);
    }
  }
  return params;
}

static StringRef kindName(KernelParam::Kind kind) {
  switch (kind) {
  case KernelParam::Kind::TensorMap:
    return "tensormap";
  case KernelParam::Kind::Pointer:
    return "pointer";
  case KernelParam::Kind::I32:
    return "i32";
  case KernelParam::Kind::I64:
    return "i64";
  case KernelParam::Kind::F32:
    return "f32";
  }
  llvm_unreachable("unknown parameter kind");
}

static std::string typeName(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  type.print(os);
  return s;
}

/// What a host needs to size and decode a traced kernel's buffer: the
/// layout per CTA (TraceLayout), the lanes (partition replicas in warp
/// order), the header's words, the record's fields, and the names of the
/// event codes and of the channels that waits and arrivals name.
static DictionaryAttr buildTraceManifest(OpBuilder &b, KernelOp kernel,
                                         const TraceLayout &layout) {
  SmallVector<Attribute> lanes;
  for (PartitionOp partition : kernel.getPartitions())
    for (int64_t r = 0, e = partition.getReplicas(); r < e; ++r)
      lanes.push_back(b.getDictionaryAttr(
          {b.getNamedAttr("partition", partition.getNameAttr()),
           b.getNamedAttr("role",
                          b.getStringAttr(stringifyRole(partition.getRole()))),
           b.getNamedAttr("replica", b.getI64IntegerAttr(r))}));
  SmallVector<StringRef> events = {"none"};
  for (uint32_t code = 1; code <= getMaxEnumValForTraceEvent(); ++code)
    events.push_back(stringifyTraceEvent(*symbolizeTraceEvent(code)));
  SmallVector<StringRef> channels;
  for (ChannelOp channel : kernel.getChannels())
    channels.push_back(channel.getName());
  return b.getDictionaryAttr({
      b.getNamedAttr("param", b.getStringAttr("trace")),
      b.getNamedAttr("cta_bytes", b.getI64IntegerAttr(layout.ctaBytes())),
      b.getNamedAttr("header_bytes", b.getI64IntegerAttr(layout.headerBytes())),
      // u64 words, in order.
      b.getNamedAttr("header", b.getStrArrayAttr(
                                   {"start_globaltimer", "start_clock",
                                    "end_globaltimer", "end_clock", "smid"})),
      b.getNamedAttr("record_bytes",
                     b.getI64IntegerAttr(TraceLayout::recordBytes)),
      // Little-endian: clock (u64), event (u8), detail (u8), 2 bytes of
      // zeros, value (i32).
      b.getNamedAttr("record",
                     b.getStrArrayAttr({"clock:u64", "event:u8", "detail:u8",
                                        "pad:u16", "value:i32"})),
      b.getNamedAttr("records_per_lane",
                     b.getI64IntegerAttr(layout.recordsPerLane)),
      b.getNamedAttr("lanes", b.getArrayAttr(lanes)),
      b.getNamedAttr("events", b.getStrArrayAttr(events)),
      b.getNamedAttr("channels", b.getStrArrayAttr(channels)),
  });
}

DictionaryAttr mlir::blockattn::lowering::buildManifest(
    OpBuilder &b, func::FuncOp func, KernelOp kernel,
    ArrayRef<KernelParam> params, int64_t threads, int64_t maxRegisters) {
  SmallVector<Attribute> paramAttrs;
  for (const KernelParam &p : params) {
    SmallVector<NamedAttribute> fields = {
        b.getNamedAttr("name", b.getStringAttr(p.name)),
        b.getNamedAttr("kind", b.getStringAttr(kindName(p.kind))),
        b.getNamedAttr("tensor", b.getStringAttr(p.tensor)),
        b.getNamedAttr("value", b.getStringAttr(p.value))};
    if (p.dim >= 0)
      fields.push_back(b.getNamedAttr("dim", b.getI64IntegerAttr(p.dim)));
    if (p.elementType)
      fields.push_back(
          b.getNamedAttr("dtype", b.getStringAttr(typeName(p.elementType))));
    if (p.kind == KernelParam::Kind::TensorMap) {
      // A rank-3 map over [T, H, D] (innermost first: D, H, T); one box is
      // one chunk (64 columns = 128 bytes, the 128-byte swizzle's span, 32
      // columns = 64 bytes with the 64-byte swizzle, or 16 columns = 32
      // bytes with the 32-byte swizzle) x 1 head x the tile's rows.
      fields.push_back(b.getNamedAttr(
          "dims", b.getStrArrayAttr({"head_dim", "heads", "tokens"})));
      fields.push_back(b.getNamedAttr("box", b.getI64ArrayAttr(p.box)));
      // The swizzle whose span the box's inner extent fills: 64 columns
      // (128 bytes), 32 (64 bytes) or 16 (32 bytes: head dim 96's
      // half-split pair-complete pieces, chunk_cols = 16).
      StringRef swizzle = p.box[0] == 64   ? "128B"
                          : p.box[0] == 32 ? "64B"
                                           : "32B";
      fields.push_back(b.getNamedAttr("swizzle", b.getStringAttr(swizzle)));
      fields.push_back(b.getNamedAttr("interleave", b.getStringAttr("none")));
      fields.push_back(b.getNamedAttr("l2_promotion", b.getStringAttr("128B")));
      fields.push_back(b.getNamedAttr("oob_fill", b.getStringAttr("zero")));
    }
    paramAttrs.push_back(b.getDictionaryAttr(fields));
  }
  SmallVector<NamedAttribute> entries = {
      b.getNamedAttr("kernel", b.getStringAttr(func.getSymName())),
      b.getNamedAttr("chip", b.getStringAttr(stringifyChip(kernel.getChip()))),
      b.getNamedAttr("threads", b.getI64IntegerAttr(threads)),
      b.getNamedAttr("max_registers", b.getI64IntegerAttr(maxRegisters)),
      b.getNamedAttr("smem_bytes",
                     b.getI64IntegerAttr(kernel.getSmemBytes().value_or(0))),
      b.getNamedAttr("tmem_columns",
                     b.getI64IntegerAttr(kernel.getTmemColumns().value_or(0))),
      // A persistent grid is ctas_per_sm CTAs per SM; a chunked one is a CTA
      // per tiles_per_cta work items ((floor(T / block) + B) x H of them,
      // the tile loop's virtual blocks times the heads).
      b.getNamedAttr(
          "grid",
          b.getStringAttr(kernel.getTilesPerCta() ? "chunked" : "persistent")),
      b.getNamedAttr("params", b.getArrayAttr(paramAttrs))};
  // Absent means 1.
  if (kernel.getCtasPerSmOrDefault() > 1)
    entries.push_back(b.getNamedAttr(
        "ctas_per_sm", b.getI64IntegerAttr(kernel.getCtasPerSmOrDefault())));
  if (std::optional<int64_t> tiles = kernel.getTilesPerCta())
    entries.push_back(
        b.getNamedAttr("tiles_per_cta", b.getI64IntegerAttr(*tiles)));
  SmallVector<Attribute> roles;
  for (PartitionOp partition : kernel.getPartitions())
    roles.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("name", partition.getNameAttr()),
         b.getNamedAttr("role",
                        b.getStringAttr(stringifyRole(partition.getRole()))),
         b.getNamedAttr("warps", partition.getNumWarpsAttr()),
         b.getNamedAttr("replicas", partition.getReplicasAttr()),
         b.getNamedAttr("registers", partition.getNumRegsAttr())}));
  entries.push_back(b.getNamedAttr("partitions", b.getArrayAttr(roles)));
  // A dynamic schedule's counters: a zeroed i32 [2] that the launch passes
  // as this tensor, one per stream, which the kernel leaves zeroed.
  kernel.walk([&](TileLoopOp loop) {
    if (loop.getSchedule())
      entries.push_back(b.getNamedAttr(
          "schedule",
          b.getDictionaryAttr(
              {b.getNamedAttr("tensor", b.getStringAttr(kScheduleName)),
               b.getNamedAttr("words", b.getI64IntegerAttr(kScheduleWords)),
               b.getNamedAttr("dtype", b.getStringAttr("i32"))})));
  });
  if (std::optional<TraceLayout> layout = kernel.getTraceLayout())
    entries.push_back(
        b.getNamedAttr("trace", buildTraceManifest(b, kernel, *layout)));
  if (DictionaryAttr info = kernel.getInfoAttr())
    for (NamedAttribute entry : info)
      entries.push_back(entry);
  return b.getDictionaryAttr(entries);
}
