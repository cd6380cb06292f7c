//===- Blackwell.cpp - tensor memory and tcgen05 (sm_100a) ----------------===//
//
// The parts of the lowering that exist only on sm_100a:
//   - the tensor-memory allocation: warp 0 of the kernel runs tcgen05.alloc
//     into a shared-memory slot before the CTA barrier (and gives up the
//     right to allocate more), every thread reads the address after it; at
//     the end, every partition that used tensor memory arrives on a teardown
//     barrier and warp 0 deallocates once all of them did;
//   - warpspec.mma_async: tcgen05.mma, one thread, M = 64, shared-memory
//     descriptors and instruction descriptors from Descriptors.h;
//   - warpspec.tmem_load / tmem_store: tcgen05.ld 16x256b and tcgen05.st
//     16x128b. An M = 64 accumulator puts row 16q + i in lane 32q + a + i
//     (a = the buffer's lane alignment, 0 or 16), so warp q of a warpgroup
//     reads its 16 rows at lane field 32q + a; the 16x256b shape gives thread
//     t the rows t/4 and t/4 + 8 and the column pairs 8j + 2(t%4): the wgmma
//     accumulator layout, so the tile math is the Hopper code unchanged.
//     16x128b writes packed 16-bit pairs in the same order (register h + 2j
//     is row t/4 + 8h, 32-bit column 4j + t%4, i.e. elements 8j + 2(t%4)
//     and +1): P is written where tcgen05.mma reads a tensor-memory A.
// The ordering rules (fences around thread synchronization, waits before
// signalling) are in Channels.cpp with the protocol they belong to.
//
//===----------------------------------------------------------------------===//

#include "KernelEmitter.h"

#include "blockattn/Conversion/WarpSpecToNVVM/Descriptors.h"

using namespace mlir;
using namespace mlir::blockattn::lowering;
using namespace mlir::blockattn::nvdesc;
using namespace mlir::warpspec;

using Pred = LLVM::ICmpPredicate;

namespace {
constexpr int64_t kTeardownBarrierOffset = 8; // after the 4-byte address
} // namespace

/// The replicas that arrive on the teardown barrier: those of every
/// partition whose warpspec.tmem_release arrives.
int64_t KernelEmitter::countTmemUsers() {
  if (!kernel.getTmemColumns())
    return 0;
  int64_t users = 0;
  for (PartitionOp partition : kernel.getPartitions())
    if (llvm::any_of(partition.getBody().front().getOps<TmemReleaseOp>(),
                     [](TmemReleaseOp op) { return op.getArrive(); }))
      users += partition.getReplicas();
  return users;
}

Value KernelEmitter::tmemTeardownBarrier() {
  return meta(*kernel.getTmemBaseOffset() + kTeardownBarrierOffset);
}

void KernelEmitter::allocateTensorMemory() {
  // tcgen05.alloc and relinquish are warp-wide (.sync.aligned).
  emitIf(cmp(Pred::eq, warp, i32(0)), [&] {
    Value slot = meta(*kernel.getTmemBaseOffset());
    NVVM::Tcgen05AllocOp::create(b, loc, slot, i32(*kernel.getTmemColumns()));
    // Nothing allocates more: a CTA started on this SM after us can allocate
    // as soon as we free ours.
    NVVM::Tcgen05RelinquishAllocPermitOp::create(b, loc);
  });
}

LogicalResult KernelEmitter::emitTmemRelease(TmemReleaseOp op) {
  if (!tmemBase)
    return op.emitOpError() << "releases tensor memory, but no partition "
                               "arrives on the teardown barrier";
  Value leader = cmp(Pred::eq, lookup(op.getThread()), i32(0));
  if (op.getArrive()) {
    // This replica's tensor-memory work is ordered before the barrier.
    tcgen05Fence(/*after=*/false);
    if (op.getGather())
      replicaBarrier();
    emitIf(leader, [&] {
      NVVM::MBarrierArriveOp::create(b, loc, Type(), tmemTeardownBarrier(),
                                     Value());
    });
  }
  if (!op.getDealloc())
    return success();
  emitIf(cmp(Pred::eq, warp, i32(0)), [&] {
    waitBarrier(tmemTeardownBarrier(), i32(0));
    tcgen05Fence(/*after=*/true);
    Value base = LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(ctx, 6), tmemBase);
    NVVM::Tcgen05DeallocOp::create(b, loc, base, i32(*kernel.getTmemColumns()));
  });
  return success();
}

static Tcgen05Type tcgen05Type(Type type) {
  if (type.isBF16())
    return Tcgen05Type::BF16;
  if (type.isF16())
    return Tcgen05Type::F16;
  return Tcgen05Type::F32;
}

static Value tmemPointer(KernelEmitter &e, Value address) {
  return LLVM::IntToPtrOp::create(
      e.b, e.loc, LLVM::LLVMPointerType::get(e.ctx, 6), address);
}

LogicalResult KernelEmitter::emitMmaAsync(MmaAsyncOp op) {
  if (!target.hasTensorMemory())
    return op.emitOpError() << "needs tensor memory (sm_100a)";
  BufferType aType = op.getA().getType(), bType = op.getB().getType();
  BufferType dType = op.getDest().getType();
  Value d = tmemAddrs.lookup(op.getDest());
  Value bPtr = buffers.lookup(op.getB());
  bool aInTmem = aType.getMemorySpace() == MemorySpace::tmem;
  Value aAddr =
      aInTmem ? tmemAddrs.lookup(op.getA()) : buffers.lookup(op.getA());
  if (!d || !bPtr || !aAddr)
    return op.emitOpError() << "operands are not buffers of slots this "
                               "partition holds";
  int64_t m = 64, n = dType.getShape()[1];
  bool aKMajor = !op.getTransposeA(), bKMajor = op.getTransposeB();
  int64_t k = aKMajor ? aType.getShape()[1] : aType.getShape()[0];
  SwizzledTile aTile{aType.getShape()[0], aType.getShape()[1]};
  SwizzledTile bTile{bType.getShape()[0], bType.getShape()[1]};
  uint32_t idesc = tcgen05InstrDescriptor(
      m, n, tcgen05Type(aType.getElementType()),
      tcgen05Type(bType.getElementType()), Tcgen05Type::F32,
      /*aMNMajor=*/!aKMajor, /*bMNMajor=*/!bKMajor);
  uint64_t aFixed =
      aKMajor ? tcgen05KMajorDescriptor(0) : tcgen05MNMajorDescriptor(0, aTile);
  uint64_t bFixed =
      bKMajor ? tcgen05KMajorDescriptor(0) : tcgen05MNMajorDescriptor(0, bTile);
  Value aStart = aInTmem ? Value() : smemAddress(aAddr);
  Value bStart = smemAddress(bPtr);
  Value dPtr = tmemPointer(*this, d);
  Value idescValue = i32(static_cast<int32_t>(idesc));
  // 16 elements of K per instruction: 32 bytes of a swizzled row, or (A in
  // tensor memory, two 16-bit elements per 32-bit column) 8 columns.
  int64_t aColumnsPerStep =
      16 * aType.getElementType().getIntOrFloatBitWidth() / 32;
  for (int64_t step = 0; step < k / 16; ++step) {
    Value a = aInTmem
                  ? tmemPointer(*this, add(aAddr, i32(step * aColumnsPerStep)))
                  : smemDescriptor(aFixed, aStart,
                                   aKMajor ? kMajorStepOffset(aTile, step)
                                           : mnMajorStepOffset(step));
    Value bDesc = smemDescriptor(bFixed, bStart,
                                 bKMajor ? kMajorStepOffset(bTile, step)
                                         : mnMajorStepOffset(step));
    // The first step overwrites D, the others accumulate.
    Value accumulate =
        LLVM::ConstantOp::create(b, loc, i1T(), b.getBoolAttr(step > 0));
    NVVM::Tcgen05MMAOp::create(b, loc, NVVM::Tcgen05MMAKind::F16,
                               NVVM::CTAGroupKind::CTA_1,
                               NVVM::Tcgen05MMACollectorOp::DISCARD,
                               /*aShift=*/false, dPtr, a, bDesc, idescValue,
                               accumulate, Value(), Value());
  }
  return success();
}

/// Warp q of the warpgroup owns the lanes 32q.. of every buffer.
static Value warpLanes(KernelEmitter &e) {
  Value quarter =
      e.andi(LLVM::LShrOp::create(e.b, e.loc, e.threadInReplica(), e.i32(5)),
             e.i32(3));
  return LLVM::ShlOp::create(e.b, e.loc, e.mul(quarter, e.i32(32)), e.i32(16));
}

LogicalResult KernelEmitter::emitTmemLoad(TmemLoadOp op) {
  Value address = tmemAddrs.lookup(op.getSource());
  if (!address)
    return op.emitOpError() << "source is not a buffer of a slot this "
                               "partition holds";
  AccType type = op.getResult().getType();
  int64_t regs = type.getShape()[1] / 2; // 16x256b: 4 registers per 8 columns
  Value ptr = tmemPointer(*this, add(address, warpLanes(*this)));
  Type vec = VectorType::get({regs}, i32T());
  Value loaded = NVVM::Tcgen05LdOp::create(
      b, loc, vec, /*pack=*/false, NVVM::Tcgen05LdStShape::SHAPE_16X256B, ptr,
      Value());
  NVVM::Tcgen05WaitOp::create(b, loc, NVVM::Tcgen05WaitKind::LOAD);
  Fragment fragment{type, accumulatorLayout(type), {}};
  for (int64_t r = 0; r < regs; ++r) {
    Value bits = LLVM::ExtractElementOp::create(b, loc, loaded, i32(r));
    fragment.regs.push_back(LLVM::BitcastOp::create(b, loc, f32T(), bits));
  }
  fragments[op.getResult()] = std::move(fragment);
  return success();
}

LogicalResult KernelEmitter::emitTmemStore(TmemStoreOp op) {
  Value address = tmemAddrs.lookup(op.getDest());
  auto it = fragments.find(op.getValue());
  if (!address || it == fragments.end())
    return op.emitOpError() << "needs a register tile and a buffer of a slot "
                               "this partition holds";
  ArrayRef<Value> packed = it->second.regs; // 16-bit pairs
  Type vec = VectorType::get({static_cast<int64_t>(packed.size())}, i32T());
  Value value = LLVM::UndefOp::create(b, loc, vec);
  for (auto [i, reg] : llvm::enumerate(packed))
    value = LLVM::InsertElementOp::create(b, loc, value, reg, i32(i));
  Value ptr = tmemPointer(*this, add(address, warpLanes(*this)));
  NVVM::Tcgen05StOp::create(b, loc, /*unpack=*/false,
                            NVVM::Tcgen05LdStShape::SHAPE_16X128B, ptr, value,
                            Value());
  return success();
}
