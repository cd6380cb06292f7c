//===- Prologue.cpp - the kernel's frame before the patterns, shells after
//-===//
//
// The pre-step moves the warpspec.kernel into its llvm.func behind the
// prologue and binds the function's arguments to the kernel parameters; the
// post-step, once the patterns have lowered every op inside, turns what is
// left (the kernel, its partitions and channels, partition_index) into the
// warp-range dispatch.
//
// The prologue computes the thread's indices and the 1024-aligned base of
// the dynamic shared memory, initializes every channel's mbarriers (thread
// 0), allocates tensor memory (warp 0) and waits for both at a CTA barrier,
// then reads the tensor-memory address. It comes after the kernel's own
// scalars, like any op the kernel's body holds before its partitions.
//
//===----------------------------------------------------------------------===//

#include "Prologue.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::blockattn::lowering;
using namespace mlir::warpspec;

using Pred = LLVM::ICmpPredicate;

/// Symbol of the kernel's dynamic shared memory (`extern __shared__`).
static constexpr StringLiteral kDynamicSmem = "__blockattn_dynamic_smem";

StringRef mlir::blockattn::lowering::dynamicSmemSymbol() {
  return kDynamicSmem;
}

namespace {

constexpr int64_t kBarrierBytes = SlotState::barrierBytes;
constexpr int64_t kRecordBytes = SlotState::tileRecordBytes;

/// [first, last) planned byte offsets of the barriers and tile records.
std::pair<int64_t, int64_t> metadataRange(KernelOp kernel) {
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

/// Which partitions publish into `channel` (the producer) and which give
/// its slots back (the consumers): what the barriers are initialized for.
void describeChannel(KernelOp kernel, ChannelOp channelOp, bool &producedByMma,
                     int64_t &numConsumers) {
  Value channel = channelOp.getChannel();
  for (PartitionOp partition : kernel.getPartitions()) {
    bool produces = false, consumes = false;
    partition.walk([&](Operation *op) {
      if (auto publish = dyn_cast<PublishOp>(op))
        produces |= publish.getChannel() == channel;
      if (auto close = dyn_cast<PublishCloseOp>(op))
        produces |= close.getChannel() == channel;
      if (auto arrive = dyn_cast<ArriveEmptyOp>(op))
        consumes |= arrive.getChannel() == channel;
    });
    if (produces)
      producedByMma = partition.getRole() == Role::mma;
    if (consumes)
      ++numConsumers;
  }
}

/// The replicas that arrive on the teardown barrier: those of every
/// partition whose warpspec.tmem_release arrives.
int64_t countTmemUsers(KernelOp kernel) {
  if (!kernel.getTmemColumns())
    return 0;
  int64_t users = 0;
  for (PartitionOp partition : kernel.getPartitions())
    if (llvm::any_of(partition.getBody().front().getOps<TmemReleaseOp>(),
                     [](TmemReleaseOp op) { return op.getArrive(); }))
      users += partition.getReplicas();
  return users;
}

/// Binds the function's arguments inside the kernel: an f32 scalar to its
/// parameter, a memref to a cast of its parameters (ArgParams::of).
void bindParams(OpBuilder &b, Location loc, func::FuncOp func, KernelOp kernel,
                LLVM::LLVMFuncOp llvmFunc, ArrayRef<KernelParam> params) {
  for (BlockArgument arg : func.getArguments()) {
    using Role = ArgParams::ParamRole;
    SmallVector<Value> inputs;
    SmallVector<int64_t> roles; // (role, dimension) per input
    for (auto [index, param] : llvm::enumerate(params)) {
      if (param.source != arg)
        continue;
      Value value = llvmFunc.getArgument(index);
      if (param.kind == KernelParam::Kind::F32) {
        arg.replaceAllUsesWith(value);
        break;
      }
      inputs.push_back(value);
      switch (param.kind) {
      case KernelParam::Kind::TensorMap:
        roles.append({static_cast<int64_t>(Role::TensorMap), -1});
        break;
      case KernelParam::Kind::Pointer:
        roles.append({static_cast<int64_t>(Role::Pointer), -1});
        break;
      case KernelParam::Kind::I32:
        roles.append({static_cast<int64_t>(Role::Size), param.dim});
        break;
      case KernelParam::Kind::I64:
        roles.append({static_cast<int64_t>(Role::Stride), param.dim});
        break;
      case KernelParam::Kind::F32:
        break;
      }
    }
    if (!isa<MemRefType>(arg.getType()) || arg.use_empty())
      continue;
    auto cast =
        UnrealizedConversionCastOp::create(b, loc, arg.getType(), inputs);
    cast->setAttr(ArgParams::kRoles, b.getDenseI64ArrayAttr(roles));
    arg.replaceUsesWithIf(cast.getResult(0), [&](OpOperand &use) {
      return kernel->isAncestor(use.getOwner());
    });
  }
}

/// Barrier initialization and the tensor-memory allocation, before any
/// partition starts; then the frame marker.
void initChannelBarriers(KernelBuilder &e) {
  KernelOp kernel = e.kernel;
  struct Described {
    bool producedByMma = false;
    int64_t numConsumers = 0;
  };
  SmallVector<Described> described;
  for (ChannelOp channel : kernel.getChannels()) {
    described.emplace_back();
    describeChannel(kernel, channel, described.back().producedByMma,
                    described.back().numConsumers);
  }
  int64_t tmemUsers = countTmemUsers(kernel);
  e.emitIf(e.cmp(Pred::eq, e.tid(), e.i32(0)), [&] {
    for (auto [channel, info] : llvm::zip(kernel.getChannels(), described)) {
      // An MMA producer arrives twice per phase: once for the record (a
      // release by its thread), once through tcgen05.commit for the data.
      int64_t fullCount = info.producedByMma ? 2 : 1;
      for (int64_t s = 0, end = channel.getDepth(); s < end; ++s) {
        NVVM::MBarrierInitOp::create(e.b, e.loc,
                                     fullBarrier(e, channel, e.i32(s)),
                                     e.i32(fullCount), Value());
        NVVM::MBarrierInitOp::create(e.b, e.loc,
                                     emptyBarrier(e, channel, e.i32(s)),
                                     e.i32(info.numConsumers), Value());
      }
    }
    if (tmemUsers)
      NVVM::MBarrierInitOp::create(e.b, e.loc, tmemTeardownBarrier(e),
                                   e.i32(tmemUsers), Value());
    NVVM::FenceMbarrierInitOp::create(e.b, e.loc);
  });
  if (tmemUsers) {
    // tcgen05.alloc and relinquish are warp-wide (.sync.aligned).
    e.emitIf(e.cmp(Pred::eq, e.warp(), e.i32(0)), [&] {
      Value slot = e.meta(*kernel.getTmemBaseOffset());
      NVVM::Tcgen05AllocOp::create(e.b, e.loc, slot,
                                   e.i32(*kernel.getTmemColumns()));
      // Nothing allocates more: a CTA started on this SM after us can
      // allocate as soon as we free ours.
      NVVM::Tcgen05RelinquishAllocPermitOp::create(e.b, e.loc);
    });
  }
  // Every thread must see initialized barriers (and the tensor-memory
  // address) before any role starts.
  if (tmemUsers)
    e.tcgen05Fence(/*after=*/false);
  NVVM::Barrier0Op::create(e.b, e.loc);
  if (tmemUsers) {
    e.tcgen05Fence(/*after=*/true);
    e.frame.tmemBase = e.load(e.i32T(), e.meta(*kernel.getTmemBaseOffset()), 4);
  }
}

} // namespace

void mlir::blockattn::lowering::buildPrologue(func::FuncOp func,
                                              KernelOp kernel,
                                              LLVM::LLVMFuncOp llvmFunc,
                                              ArrayRef<KernelParam> params) {
  OpBuilder b(llvmFunc.getContext());
  Location loc = kernel.getLoc();
  Block *entry = llvmFunc.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  bindParams(b, loc, func, kernel, llvmFunc, params);

  KernelBuilder e(b, kernel);
  KernelFrame &frame = e.frame;
  frame.tid = NVVM::ThreadIdXOp::create(b, loc, e.i32T());
  frame.warp = LLVM::LShrOp::create(b, loc, frame.tid, e.i32(5));
  frame.lane = e.andi(frame.tid, e.i32(31));

  // The dynamic shared memory base is only guaranteed 16-byte aligned; the
  // 128-byte swizzle needs 1024 (warpspec-allocate-smem reserved the slack).
  Value raw = LLVM::AddressOfOp::create(b, loc, e.smemPtrT(), kDynamicSmem);
  Value address = e.smemAddress(raw);
  Value pad =
      e.andi(e.sub(e.i32(1024), e.andi(address, e.i32(1023))), e.i32(1023));
  frame.smemBase = LLVM::GEPOp::create(b, loc, e.smemPtrT(), b.getI8Type(), raw,
                                       ValueRange{pad});
  // The barriers and tile records use the skipped bytes when they fit there,
  // which is what lets two 114,688-byte forward CTAs share an SM.
  auto [start, end] = metadataRange(kernel);
  frame.metaStart = start;
  Value inPad = e.cmp(LLVM::ICmpPredicate::uge, pad, e.i32(end - start));
  Value afterBuffers =
      LLVM::GEPOp::create(b, loc, e.smemPtrT(), b.getI8Type(), frame.smemBase,
                          ValueRange{e.i32(start)});
  frame.metaBase = LLVM::SelectOp::create(b, loc, inPad, raw, afterBuffers);

  // The kernel follows, its scalars first, then the barriers' initialization
  // and the frame, then its partitions.
  kernel->moveBefore(entry, entry->end());
  LLVM::ReturnOp::create(b, loc, ValueRange{});
  Block &body = kernel.getBody().front();
  auto partitions = body.getOps<PartitionOp>();
  Operation *firstPartition =
      partitions.empty() ? nullptr : (*partitions.begin()).getOperation();
  if (firstPartition) {
    for (Operation &op : llvm::make_early_inc_range(llvm::make_range(
             std::next(firstPartition->getIterator()), body.end())))
      if (!isa<PartitionOp, ChannelOp>(op))
        op.moveBefore(firstPartition);
    b.setInsertionPoint(firstPartition);
  } else {
    b.setInsertionPointToEnd(&body);
  }
  initChannelBarriers(e);
  SmallVector<Value> values = {frame.tid, frame.warp, frame.lane,
                               frame.smemBase, frame.metaBase};
  if (frame.tmemBase)
    values.push_back(frame.tmemBase);
  auto marker = UnrealizedConversionCastOp::create(
      b, loc, ValueRange(values).getTypes(), values);
  marker->setAttr(KernelFrame::kMarker, b.getUnitAttr());
  marker->setAttr(KernelFrame::kMetaStart, b.getI64IntegerAttr(start));
}

void mlir::blockattn::lowering::lowerShells(KernelOp kernel) {
  OpBuilder b(kernel);
  Block &body = kernel.getBody().front();
  // The single-thread regions: an scf.if on the replica's thread 0.
  SmallVector<SingleThreadOp> singleThreads;
  kernel.walk([&](SingleThreadOp op) { singleThreads.push_back(op); });
  for (SingleThreadOp op : singleThreads) {
    KernelBuilder e(b, op);
    b.setInsertionPoint(op);
    Value leader = e.cmp(LLVM::ICmpPredicate::eq, op.getThread(), e.i32(0));
    auto ifOp = scf::IfOp::create(b, e.loc, leader, /*withElseRegion=*/false);
    Block *then = ifOp.thenBlock();
    then->getOperations().splice(then->getTerminator()->getIterator(),
                                 op.getBody().front().getOperations());
    op.erase();
  }
  for (PartitionOp partition :
       llvm::make_early_inc_range(body.getOps<PartitionOp>())) {
    KernelBuilder e(b, partition);
    int64_t firstWarp = *partition.getFirstWarp();
    int64_t warps = partition.getNumWarps();
    // The replica and thread indices of warpspec.partition_index.
    PartitionIndexOp index = e.partitionIndex();
    b.setInsertionPoint(index);
    Value warpInPartition = e.sub(e.warp(), e.i32(firstWarp));
    Value replicaIndex = e.udiv(warpInPartition, e.i32(warps));
    index.getReplica().replaceAllUsesWith(replicaIndex);
    index.getThread().replaceAllUsesWith(
        e.sub(e.tid(),
              e.mul(e.add(e.i32(firstWarp), e.mul(replicaIndex, e.i32(warps))),
                    e.i32(32))));
    index.erase();
    // The partition runs on warps [first_warp, first_warp + warps x
    // replicas).
    b.setInsertionPoint(partition);
    int64_t allWarps = warps * partition.getReplicas();
    Value inRange = LLVM::AndOp::create(
        b, e.loc, e.cmp(LLVM::ICmpPredicate::uge, e.warp(), e.i32(firstWarp)),
        e.cmp(LLVM::ICmpPredicate::ult, e.warp(), e.i32(firstWarp + allWarps)));
    auto ifOp = scf::IfOp::create(b, e.loc, inRange, /*withElseRegion=*/false);
    Block *then = ifOp.thenBlock();
    then->getOperations().splice(then->getTerminator()->getIterator(),
                                 partition.getBody().front().getOperations());
    partition.erase();
  }
  for (Operation &op : llvm::make_early_inc_range(body))
    if (isa<ChannelOp>(op) || op.hasAttr(KernelFrame::kMarker))
      op.erase();
  Block *parent = kernel->getBlock();
  parent->getOperations().splice(kernel->getIterator(), body.getOperations());
  kernel.erase();
  // The memrefs' casts (ArgParams), now unused.
  for (auto cast :
       llvm::make_early_inc_range(parent->getOps<UnrealizedConversionCastOp>()))
    if (cast->hasAttr(ArgParams::kRoles) && cast->use_empty())
      cast.erase();
}
