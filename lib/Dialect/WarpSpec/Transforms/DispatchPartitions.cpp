//===- DispatchPartitions.cpp - partitions placed on their warps ----------===//
//
// warpspec-dispatch-partitions: every partition of a kernel gets its warp
// range and named barriers, and what it does on them (the register
// rebalance, its replica and thread index, the single-thread region of the
// issuing roles, the teardown) becomes ops (see the pass description). The
// NVVM conversion then dispatches on `first_warp` and lowers each op on its
// own, with nothing about the partition being emitted kept on the side.
//
// The ops are placed in the order the conversion always emitted that code
// (setmaxnreg, the indices, the body, the bulk-store wait, the tensor-memory
// teardown), which keeps the generated PTX what it was.
//
//===----------------------------------------------------------------------===//

#include "blockattn/Dialect/WarpSpec/Transforms/Passes.h"

#include "blockattn/Dialect/WarpSpec/IR/WarpSpecOps.h"

#include "mlir/IR/Builders.h"

namespace mlir::warpspec {
#define GEN_PASS_DEF_WARPSPECDISPATCHPARTITIONSPASS
#include "blockattn/Dialect/WarpSpec/Transforms/Passes.h.inc"
} // namespace mlir::warpspec

using namespace mlir;
using namespace mlir::warpspec;

namespace {

bool makesBulkStores(PartitionOp partition) {
  return partition
      .walk([](StoreOp store) {
        return store.getBulk() ? WalkResult::interrupt()
                               : WalkResult::advance();
      })
      .wasInterrupted();
}

void dispatch(PartitionOp partition, int64_t launchRegisters,
              bool tensorMemory) {
  Location loc = partition.getLoc();
  Block &body = partition.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&body);
  // At the launch's budget the partition keeps what it launched with, unless
  // it asks for the instruction (`explicit_regs`): then `.inc` at the same
  // count, which ptxas accepts and allocates the warpgroup's code against.
  int64_t regs = partition.getNumRegs();
  if (regs != launchRegisters || partition.getExplicitRegs())
    SetMaxRegistersOp::create(b, loc,
                              regs >= launchRegisters
                                  ? RegisterAction::increase
                                  : RegisterAction::decrease,
                              regs);
  auto index = PartitionIndexOp::create(b, loc);
  partition.walk([&](ReplicaIdOp nested) {
    nested.getReplica().replaceAllUsesWith(index.getReplica());
    nested.erase();
  });
  // The insertion point may have been a replica_id, now erased.
  b.setInsertionPointAfter(index);
  Value thread = index.getThread();
  bool singleThread = partition.isSingleThreaded();
  if (singleThread) {
    // Everything after the indices moves in, but scratch buffers, which
    // belong to the partition (one copy per replica): they stay directly in
    // it, before the region, so that the ops that move in still see them.
    auto region = SingleThreadOp::create(b, loc, thread);
    Block *inner = b.createBlock(&region.getBody());
    for (Operation &op : llvm::make_early_inc_range(
             llvm::make_range(std::next(region->getIterator()), body.end()))) {
      if (isa<ScratchOp>(op))
        op.moveBefore(region);
      else
        op.moveBefore(inner, inner->end());
    }
  }
  b.setInsertionPointToEnd(&body);
  // Bulk stores read shared memory asynchronously; the CTA must not exit
  // (and free it) before they have completed.
  if (!singleThread && makesBulkStores(partition)) {
    auto wait = SingleThreadOp::create(b, loc, thread);
    b.createBlock(&wait.getBody());
    WaitBulkStoresOp::create(b, loc);
    b.setInsertionPointToEnd(&body);
  }
  if (!tensorMemory)
    return;
  // Warp 0 of the kernel allocated the tensor memory; it frees it once every
  // partition that uses it is done.
  // A partition that issues or reads tensor-memory ops arrives on the
  // teardown barrier before the allocation is freed.
  bool arrive = partition.usesTensorMemory();
  bool dealloc = *partition.getFirstWarp() == 0;
  if (arrive || dealloc)
    TmemReleaseOp::create(b, loc, thread, arrive, arrive && !singleThread,
                          dealloc);
}

LogicalResult dispatch(KernelOp kernel) {
  auto partitions = kernel.getPartitions();
  auto placed = llvm::make_filter_range(
      partitions, [](PartitionOp p) { return p.isDispatched(); });
  int64_t numPlaced = std::distance(placed.begin(), placed.end());
  if (numPlaced == static_cast<int64_t>(partitions.size()))
    return success();
  // Placing the rest around them would need the free warps and barriers of
  // a hand-made placement; the pass places a kernel's partitions together.
  if (numPlaced != 0)
    return (*placed.begin()).emitOpError()
           << "is placed on warps, but other partitions of its kernel are "
              "not; warpspec-dispatch-partitions places all of a kernel's "
              "partitions at once";
  int64_t barriers = 1; // 0 is the CTA-wide barrier
  for (PartitionOp partition : partitions)
    barriers += partition.getReplicas();
  if (barriers > TargetLimits::namedBarriers)
    return kernel.emitOpError()
           << "needs " << barriers - 1
           << " named barriers (one per partition replica), more than the "
           << TargetLimits::namedBarriers - 1 << " a CTA has besides barrier 0";
  // A kernel without its tensor-memory plan gets no teardown here; the
  // conversion reports the missing plan.
  bool tensorMemory = kernel.getTmemColumns() && kernel.getTmemBaseOffset() &&
                      kernel.usesTensorMemory();
  Builder b(kernel.getContext());
  int64_t firstWarp = 0, barrierBase = 1;
  for (PartitionOp partition : partitions) {
    partition.setFirstWarpAttr(b.getI64IntegerAttr(firstWarp));
    partition.setBarrierBaseAttr(b.getI64IntegerAttr(barrierBase));
    dispatch(partition, kernel.getLaunchRegisterCap(), tensorMemory);
    firstWarp += partition.getNumWarps() * partition.getReplicas();
    barrierBase += partition.getReplicas();
  }
  return success();
}

struct WarpSpecDispatchPartitionsPass
    : warpspec::impl::WarpSpecDispatchPartitionsPassBase<
          WarpSpecDispatchPartitionsPass> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([](KernelOp kernel) {
      return failed(dispatch(kernel)) ? WalkResult::interrupt()
                                      : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
