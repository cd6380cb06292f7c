//===- KernelEmitter.cpp - prologue, warp-role dispatch, helpers ----------===//

#include "KernelEmitter.h"

#include "blockattn/Conversion/WarpSpecToNVVM/Descriptors.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/SaveAndRestore.h"

using namespace mlir;
using namespace mlir::blockattn::lowering;
using namespace mlir::warpspec;

/// Symbol of the kernel's dynamic shared memory (`extern __shared__`).
static constexpr StringLiteral kDynamicSmem = "__blockattn_dynamic_smem";

KernelEmitter::KernelEmitter(func::FuncOp func, KernelOp kernel,
                             LLVM::LLVMFuncOp llvmFunc,
                             ArrayRef<KernelParam> params)
    : b(llvmFunc.getContext()), loc(kernel.getLoc()),
      ctx(llvmFunc.getContext()), func(func), kernel(kernel),
      llvmFunc(llvmFunc), target(TargetInfo::get(kernel)), params(params) {}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

Value KernelEmitter::i32(int64_t v) {
  return LLVM::ConstantOp::create(b, loc, i32T(), b.getI32IntegerAttr(v));
}
Value KernelEmitter::i64(int64_t v) {
  return LLVM::ConstantOp::create(b, loc, i64T(), b.getI64IntegerAttr(v));
}
Value KernelEmitter::f32(double v) {
  return LLVM::ConstantOp::create(b, loc, f32T(), b.getF32FloatAttr(v));
}
Value KernelEmitter::add(Value a, Value c) {
  return LLVM::AddOp::create(b, loc, a, c);
}
Value KernelEmitter::sub(Value a, Value c) {
  return LLVM::SubOp::create(b, loc, a, c);
}
Value KernelEmitter::mul(Value a, Value c) {
  return LLVM::MulOp::create(b, loc, a, c);
}
Value KernelEmitter::udiv(Value a, Value c) {
  return LLVM::UDivOp::create(b, loc, a, c);
}
Value KernelEmitter::urem(Value a, Value c) {
  return LLVM::URemOp::create(b, loc, a, c);
}
Value KernelEmitter::andi(Value a, Value c) {
  return LLVM::AndOp::create(b, loc, a, c);
}
Value KernelEmitter::cmp(LLVM::ICmpPredicate p, Value a, Value c) {
  return LLVM::ICmpOp::create(b, loc, p, a, c);
}
Value KernelEmitter::select(Value c, Value t, Value f) {
  return LLVM::SelectOp::create(b, loc, c, t, f);
}
Value KernelEmitter::zext64(Value v) {
  return LLVM::ZExtOp::create(b, loc, i64T(), v);
}
Value KernelEmitter::trunc32(Value v) {
  return LLVM::TruncOp::create(b, loc, i32T(), v);
}
Value KernelEmitter::load(Type t, Value ptr, unsigned alignment) {
  return LLVM::LoadOp::create(b, loc, t, ptr, alignment);
}
void KernelEmitter::store(Value v, Value ptr, unsigned alignment) {
  LLVM::StoreOp::create(b, loc, v, ptr, alignment);
}

Value KernelEmitter::variable(Type t, std::optional<int64_t> init) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(entryBlock);
  Value one = LLVM::ConstantOp::create(b, loc, i32T(), b.getI32IntegerAttr(1));
  Value slot = LLVM::AllocaOp::create(b, loc, LLVM::LLVMPointerType::get(ctx),
                                      t, one, /*alignment=*/8);
  if (init) {
    Value value =
        LLVM::ConstantOp::create(b, loc, t, b.getIntegerAttr(t, *init));
    LLVM::StoreOp::create(b, loc, value, slot);
  }
  return slot;
}

Value KernelEmitter::smem(Value byteOffset) {
  return LLVM::GEPOp::create(b, loc, smemPtrT(), b.getI8Type(), smemBase,
                             ValueRange{byteOffset});
}

Value KernelEmitter::meta(Value byteOffset) {
  return LLVM::GEPOp::create(b, loc, smemPtrT(), b.getI8Type(), metaBase,
                             ValueRange{sub(byteOffset, i32(metaStart))});
}

Value KernelEmitter::smemDescriptor(uint64_t fixedBits, Value start,
                                    uint64_t offset) {
  Value address = zext64(add(start, i32(offset)));
  Value field =
      andi(LLVM::LShrOp::create(b, loc, address, i64(4)), i64(0x3FFF));
  return LLVM::OrOp::create(b, loc, field,
                            i64(static_cast<int64_t>(fixedBits)));
}

SmallVector<TmaBox> KernelEmitter::tmaBoxes(Value row, Value head, int64_t rows,
                                            int64_t cols) {
  using nvdesc::SwizzledTile;
  SmallVector<TmaBox> boxes;
  for (int64_t chunk = 0; chunk < cols / SwizzledTile::kChunkCols; ++chunk)
    boxes.push_back({SwizzledTile{rows, cols}.chunkBytes() * chunk,
                     {i32(chunk * SwizzledTile::kChunkCols), head, row}});
  return boxes;
}

Value KernelEmitter::smemAddress(Value ptr) {
  return LLVM::PtrToIntOp::create(b, loc, i32T(), ptr);
}

void KernelEmitter::emitIf(Value cond, function_ref<void()> thenFn) {
  auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  thenFn();
}

void KernelEmitter::emitIfElse(Value cond, function_ref<void()> thenFn,
                               function_ref<void()> elseFn) {
  auto ifOp = scf::IfOp::create(b, loc, cond, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  thenFn();
  b.setInsertionPointToStart(ifOp.elseBlock());
  elseFn();
}

ValueRange KernelEmitter::emitWhile(
    function_ref<std::pair<Value, SmallVector<Value>>()> cond,
    function_ref<void(ValueRange)> body, TypeRange forwarded) {
  auto whileOp = scf::WhileOp::create(b, loc, forwarded, ValueRange{});
  OpBuilder::InsertionGuard guard(b);
  Block *before = b.createBlock(&whileOp.getBefore());
  b.setInsertionPointToEnd(before);
  auto [condition, values] = cond();
  scf::ConditionOp::create(b, loc, condition, values);
  SmallVector<Location> locs(forwarded.size(), loc);
  Block *after = b.createBlock(&whileOp.getAfter(), {}, forwarded, locs);
  b.setInsertionPointToEnd(after);
  body(after->getArguments());
  scf::YieldOp::create(b, loc);
  return whileOp.getResults();
}

void KernelEmitter::replicaBarrier() {
  Value id = add(i32(*partition.getBarrierBase()), replica());
  NVVM::BarrierOp::create(b, loc, Type(), id, i32(replicaThreads()), nullptr,
                          nullptr);
}

Value KernelEmitter::lookup(Value v) { return scalars.lookup(v); }

Value KernelEmitter::lookupI32(Value v) {
  Value mapped = lookup(v);
  if (mapped.getType().isInteger(64))
    return trunc32(mapped);
  return mapped;
}

//===----------------------------------------------------------------------===//
// Kernel structure
//===----------------------------------------------------------------------===//

void KernelEmitter::bindParams() {
  for (auto [index, param] : llvm::enumerate(params)) {
    Value arg = llvmFunc.getArgument(index);
    ArgParams &entry = argParams[param.source];
    if (auto type = dyn_cast<MemRefType>(param.source.getType())) {
      entry.sizes.resize(type.getRank());
      entry.strides.resize(type.getRank());
    }
    switch (param.kind) {
    case KernelParam::Kind::TensorMap:
      entry.tensorMap = arg;
      break;
    case KernelParam::Kind::Pointer:
      entry.pointer = arg;
      break;
    case KernelParam::Kind::I32:
      entry.sizes[param.dim] = arg;
      break;
    case KernelParam::Kind::I64:
      entry.strides[param.dim] = arg;
      break;
    case KernelParam::Kind::F32:
      entry.scalar = arg;
      scalars.map(param.source, arg);
      break;
    }
  }
}

void KernelEmitter::emitPrologue() {
  tid = NVVM::ThreadIdXOp::create(b, loc, i32T());
  warp = LLVM::LShrOp::create(b, loc, tid, i32(5));
  lane = andi(tid, i32(31));

  // The dynamic shared memory base is only guaranteed 16-byte aligned; the
  // 128-byte swizzle needs 1024 (warpspec-allocate-smem reserved the slack).
  Value raw = LLVM::AddressOfOp::create(b, loc, smemPtrT(), kDynamicSmem);
  Value address = smemAddress(raw);
  Value pad = andi(sub(i32(1024), andi(address, i32(1023))), i32(1023));
  smemBase = LLVM::GEPOp::create(b, loc, smemPtrT(), b.getI8Type(), raw,
                                 ValueRange{pad});
  // The barriers and tile records use the skipped bytes when they fit there,
  // which is what lets two 114,688-byte forward CTAs share an SM.
  auto [start, end] = metadataRange();
  metaStart = start;
  Value inPad = cmp(LLVM::ICmpPredicate::uge, pad, i32(end - start));
  Value afterBuffers = LLVM::GEPOp::create(b, loc, smemPtrT(), b.getI8Type(),
                                           smemBase, ValueRange{i32(start)});
  metaBase = LLVM::SelectOp::create(b, loc, inPad, raw, afterBuffers);
}

std::pair<int64_t, int64_t> KernelEmitter::metadataRange() {
  constexpr int64_t kBarrierBytes = SlotState::barrierBytes;
  constexpr int64_t kRecordBytes = SlotState::tileRecordBytes;
  int64_t start = std::numeric_limits<int64_t>::max(), end = 0;
  for (ChannelOp channel : kernel.getChannels()) {
    start = std::min<int64_t>(start, *channel.getBarrierOffset());
    end = std::max<int64_t>(end, *channel.getBarrierOffset() +
                                     2 * channel.getDepth() * kBarrierBytes);
    end = std::max<int64_t>(end, *channel.getInfoOffset() +
                                     channel.getDepth() * kRecordBytes);
  }
  if (std::optional<int64_t> tmem = kernel.getTmemBaseOffset())
    end = std::max<int64_t>(end, *tmem + kRecordBytes);
  if (end == 0)
    return {0, 0};
  return {start, end};
}

LogicalResult KernelEmitter::emitKernelScalars() {
  for (Operation &op : kernel.getBody().front()) {
    if (isa<ChannelOp, PartitionOp>(op))
      continue;
    if (failed(emitOp(&op)))
      return failure();
  }
  return success();
}

LogicalResult KernelEmitter::emitPartitions() {
  for (PartitionOp op : kernel.getPartitions()) {
    if (!op.isDispatched())
      return op.emitOpError()
             << "is not placed on warps: run warpspec-dispatch-partitions "
                "before convert-warpspec-to-nvvm";
    if (!llvm::hasSingleElement(
            op.getBody().front().getOps<PartitionIndexOp>()))
      return op.emitOpError() << "has no warpspec.partition_index (the "
                                 "dispatch warpspec-dispatch-partitions "
                                 "writes)";
    if (failed(emitPartition(op)))
      return failure();
  }
  return success();
}

/// The partition runs on warps [first_warp, first_warp + warps x replicas).
LogicalResult KernelEmitter::emitPartition(PartitionOp op) {
  int64_t firstWarp = *op.getFirstWarp();
  int64_t warps = op.getNumWarps() * op.getReplicas();
  Value inRange = LLVM::AndOp::create(
      b, loc, cmp(LLVM::ICmpPredicate::uge, warp, i32(firstWarp)),
      cmp(LLVM::ICmpPredicate::ult, warp, i32(firstWarp + warps)));
  LogicalResult result = success();
  llvm::SaveAndRestore scope(partition, op);
  emitIf(inRange, [&] { result = emitBlock(op.getBody().front()); });
  return result;
}

LogicalResult KernelEmitter::emitPartitionIndex(PartitionIndexOp op) {
  int64_t firstWarp = *partition.getFirstWarp();
  int64_t warps = partition.getNumWarps();
  Value warpInPartition = sub(warp, i32(firstWarp));
  Value replicaIndex = udiv(warpInPartition, i32(warps));
  scalars.map(op.getReplica(), replicaIndex);
  scalars.map(op.getThread(),
              sub(tid, mul(add(i32(firstWarp), mul(replicaIndex, i32(warps))),
                           i32(32))));
  return success();
}

LogicalResult KernelEmitter::emitSingleThread(SingleThreadOp op) {
  LogicalResult result = success();
  emitIf(cmp(LLVM::ICmpPredicate::eq, lookup(op.getThread()), i32(0)),
         [&] { result = emitBlock(op.getBody().front()); });
  return result;
}

PartitionIndexOp KernelEmitter::partitionIndex() {
  auto ops = partition.getBody().front().getOps<PartitionIndexOp>();
  return ops.empty() ? PartitionIndexOp() : *ops.begin();
}

Value KernelEmitter::replica() { return lookup(partitionIndex().getReplica()); }

Value KernelEmitter::threadInReplica() {
  return lookup(partitionIndex().getThread());
}

bool KernelEmitter::inSingleThread(Operation *op) {
  return op->getParentOfType<SingleThreadOp>() != nullptr;
}

LogicalResult KernelEmitter::emit() {
  entryBlock = llvmFunc.addEntryBlock(b);
  b.setInsertionPointToStart(entryBlock);
  bindParams();
  emitPrologue();
  if (failed(emitKernelScalars()))
    return failure();
  initChannelBarriers();
  if (failed(emitPartitions()))
    return failure();
  LLVM::ReturnOp::create(b, loc, ValueRange{});
  return success();
}

//===----------------------------------------------------------------------===//
// Op dispatch
//===----------------------------------------------------------------------===//

LogicalResult KernelEmitter::emitBlock(Block &block) {
  for (Operation &op : block)
    if (failed(emitOp(&op)))
      return failure();
  return success();
}

static LogicalResult emitConstant(KernelEmitter &e, arith::ConstantOp op) {
  Attribute value = op.getValue();
  Value result;
  if (auto integer = dyn_cast<IntegerAttr>(value)) {
    if (integer.getType().isIndex())
      result = e.i64(integer.getInt());
    else if (integer.getType().isInteger(32))
      result = e.i32(integer.getInt());
    else if (integer.getType().isInteger(64))
      result = e.i64(integer.getInt());
  } else if (auto real = dyn_cast<FloatAttr>(value)) {
    if (real.getType().isF32())
      result = e.f32(real.getValueAsDouble());
  }
  if (!result)
    return op.emitOpError() << "constant of type " << op.getType()
                            << " is not supported inside a warpspec.kernel";
  e.scalars.map(op.getResult(), result);
  return success();
}

static LogicalResult emitDim(KernelEmitter &e, memref::DimOp op) {
  auto type = cast<MemRefType>(op.getSource().getType());
  // buildKernelParams checked the index against the rank.
  int64_t dim = *op.getConstantIndex();
  Value result;
  if (!type.isDynamicDim(dim))
    result = e.i64(type.getDimSize(dim));
  else if (Value size = e.argSize(op.getSource(), dim))
    result = e.zext64(size);
  if (!result)
    return op.emitOpError() << "size of a memref that is not a kernel "
                               "parameter";
  e.scalars.map(op.getResult(), result);
  return success();
}

/// Ring positions and the consume loop's test (i32 scalars).
static LogicalResult emitAddI(KernelEmitter &e, arith::AddIOp op) {
  e.scalars.map(op.getResult(),
                e.add(e.lookup(op.getLhs()), e.lookup(op.getRhs())));
  return success();
}

static LogicalResult emitCmpI(KernelEmitter &e, arith::CmpIOp op) {
  // arith's and LLVM's predicates are numbered alike (eq, ne, slt, ...).
  auto predicate = static_cast<LLVM::ICmpPredicate>(op.getPredicate());
  e.scalars.map(op.getResult(),
                e.cmp(predicate, e.lookup(op.getLhs()), e.lookup(op.getRhs())));
  return success();
}

LogicalResult KernelEmitter::emitOp(Operation *op) {
  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](arith::ConstantOp c) { return emitConstant(*this, c); })
      .Case([&](memref::DimOp d) { return emitDim(*this, d); })
      .Case([&](arith::AddIOp o) { return emitAddI(*this, o); })
      .Case([&](arith::CmpIOp o) { return emitCmpI(*this, o); })
      .Case([&](TileLoopOp o) { return emitTileLoop(o); })
      .Case([&](scf::WhileOp o) { return emitWhileLoop(o); })
      .Case([&](SetMaxRegistersOp o) {
        // setmaxnreg.inc waits until the registers that other warpgroups
        // released with .dec are available.
        NVVM::SetMaxRegisterOp::create(
            b, loc, o.getCount(),
            o.getAction() == RegisterAction::increase
                ? NVVM::SetMaxRegisterAction::increase
                : NVVM::SetMaxRegisterAction::decrease);
        return success();
      })
      .Case([&](PartitionIndexOp o) { return emitPartitionIndex(o); })
      .Case([&](SingleThreadOp o) { return emitSingleThread(o); })
      .Case([&](WaitBulkStoresOp) {
        NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, 0, UnitAttr());
        return success();
      })
      .Case([&](TmemReleaseOp o) { return emitTmemRelease(o); })
      .Case([&](ReplicaIdOp o) {
        return o.emitOpError() << "is not dispatched: run "
                                  "warpspec-dispatch-partitions before "
                                  "convert-warpspec-to-nvvm";
      })
      .Case([&](RingSlotOp o) { return emitRingSlot(o); })
      .Case([&](WaitEmptyOp o) { return emitWaitEmpty(o); })
      .Case([&](WaitFullOp o) { return emitWaitFull(o); })
      .Case([&](ExpectTxOp o) { return emitExpectTx(o); })
      .Case([&](SlotBuffersOp o) { return emitSlotBuffers(o); })
      .Case([&](PublishOp o) { return emitPublish(o); })
      .Case([&](PublishCloseOp o) { return emitPublishClose(o); })
      .Case([&](ReadTileOp o) { return emitReadTile(o); })
      .Case([&](ArriveEmptyOp o) { return emitArriveEmpty(o); })
      .Case([&](TmaPrefetchOp o) { return emitTmaPrefetch(o); })
      .Case<AcquireOp, CommitOp, CloseOp, ConsumeOp, ReleaseOp, GetOp,
            TilePositionOp>([&](Operation *o) {
        return o->emitOpError()
               << "is a channel-protocol op: run warpspec-lower-protocol "
                  "before convert-warpspec-to-nvvm";
      })
      .Case([&](RotateOp o) { return emitRotate(o); })
      .Case([&](RotateTileOp o) { return emitRotateTile(o); })
      .Case([&](RotaryAnglesOp o) { return emitRotaryAngles(o); })
      .Case([&](MmaAsyncOp o) { return emitMmaAsync(o); })
      .Case([&](TmemLoadOp o) { return emitTmemLoad(o); })
      .Case([&](TmemStoreOp o) { return emitTmemStore(o); })
      .Case([&](TmaLoadOp o) { return emitTmaLoad(o); })
      .Case([&](SoftmaxOp o) { return emitSoftmax(o); })
      .Case([&](SoftmaxGradOp o) { return emitSoftmaxGrad(o); })
      .Case([&](StoreOp o) { return emitStore(o); })
      .Case([&](WriteOp o) { return emitWrite(o); })
      .Case([&](ScratchOp o) {
        if (!o.getOffset() || !o.getReplicaStride())
          return LogicalResult(o.emitOpError()
                               << "has no offset: run warpspec-allocate-smem "
                                  "first");
        Value offset = add(i32(*o.getOffset()),
                           mul(replica(), i32(*o.getReplicaStride())));
        buffers[o.getBuffer()] = smem(offset);
        return success();
      })
      .Case([&](MmaOp o) {
        if (!target.hasWgmma())
          return LogicalResult(o.emitOpError()
                               << "with register operands is not available on "
                               << target.getName());
        return emitHopperMma(o);
      })
      .Default([&](Operation *other) {
        return other->emitOpError()
               << "cannot be lowered by convert-warpspec-to-nvvm inside a "
                  "warpspec.kernel";
      });
}
