//===- AllocateSmem.cpp - place warpspec buffers in shared memory ---------===//
//
// warpspec-allocate-smem: a static plan. Every buffer of these kernels lives
// for the whole kernel (rings are reused, never freed), so the plan is a
// bump allocation with the alignments the hardware needs; what matters is
// that it is explicit in the IR and that overflowing the budget is a
// diagnostic that says what takes the space.
//
//===----------------------------------------------------------------------===//

#include "blockattn/Dialect/WarpSpec/Transforms/Passes.h"

#include "blockattn/Dialect/WarpSpec/IR/WarpSpecOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::warpspec {
#define GEN_PASS_DEF_WARPSPECALLOCATESMEMPASS
#include "blockattn/Dialect/WarpSpec/Transforms/Passes.h.inc"
} // namespace mlir::warpspec

using namespace mlir;
using namespace mlir::warpspec;

namespace {

/// The 128-byte swizzle repeats every 1024 bytes; tiles aligned to it need no
/// descriptor base offset.
constexpr int64_t kSwizzleAlignment = 1024;
constexpr int64_t kBarrierBytes = SlotState::barrierBytes;
constexpr int64_t kTileRecordBytes = SlotState::tileRecordBytes;
/// CUDA promises the dynamic shared memory base 16-byte alignment only; the
/// lowering rounds it up to kSwizzleAlignment at run time, which skips at
/// most this many bytes.
constexpr int64_t kMaxBasePad = kSwizzleAlignment - 16;

/// One line of the over-budget diagnostic.
struct Placement {
  std::string what;
  int64_t bytes;
};

LogicalResult allocateKernel(KernelOp kernel) {
  Builder b(kernel.getContext());
  SmallVector<Placement> placements;
  int64_t offset = 0;

  SmallVector<ChannelOp, 4> smemChannels;
  for (ChannelOp channel : kernel.getChannels())
    if (!channel.inTensorMemory())
      smemChannels.push_back(channel);

  for (ChannelOp channel : smemChannels) {
    int64_t stride = llvm::alignTo(
        channel.getChannelType().getSlotSizeInBytes(), kSwizzleAlignment);
    offset = llvm::alignTo(offset, kSwizzleAlignment);
    channel.setBufferOffsetAttr(b.getI64IntegerAttr(offset));
    channel.setSlotStrideAttr(b.getI64IntegerAttr(stride));
    int64_t bytes = stride * channel.getDepth();
    placements.push_back({"channel \"" + channel.getName().str() +
                              "\": " + std::to_string(channel.getDepth()) +
                              " x " + std::to_string(stride) + " bytes",
                          bytes});
    offset += bytes;
  }

  kernel.walk([&](ScratchOp scratch) {
    auto partition = scratch->getParentOfType<PartitionOp>();
    int64_t stride = llvm::alignTo(
        scratch.getBuffer().getType().getSizeInBytes(), kSwizzleAlignment);
    offset = llvm::alignTo(offset, kSwizzleAlignment);
    scratch.setOffsetAttr(b.getI64IntegerAttr(offset));
    scratch.setReplicaStrideAttr(b.getI64IntegerAttr(stride));
    int64_t bytes = stride * partition.getReplicas();
    placements.push_back({"scratch of partition \"" +
                              partition.getName().str() +
                              "\": " + std::to_string(partition.getReplicas()) +
                              " x " + std::to_string(stride) + " bytes",
                          bytes});
    offset += bytes;
  });

  // Barriers and tile records of every channel (tensor-memory channels are
  // synchronized through shared-memory barriers too).
  int64_t barrierStart = offset;
  for (ChannelOp channel : kernel.getChannels()) {
    channel.setBarrierOffsetAttr(b.getI64IntegerAttr(offset));
    offset += 2 * channel.getDepth() * kBarrierBytes;
  }
  offset = llvm::alignTo(offset, kTileRecordBytes);
  for (ChannelOp channel : kernel.getChannels()) {
    channel.setInfoOffsetAttr(b.getI64IntegerAttr(offset));
    offset += channel.getDepth() * kTileRecordBytes;
  }
  // The tensor-memory base address (written by tcgen05.alloc) and the
  // barrier that holds the deallocation until every user is done.
  bool usesTmem = llvm::any_of(kernel.getChannels(), [](ChannelOp channel) {
    return channel.inTensorMemory();
  });
  if (usesTmem) {
    kernel.setTmemBaseOffsetAttr(b.getI64IntegerAttr(offset));
    offset += kTileRecordBytes;
  }
  // The barriers and tile records (offsets past the buffers in the plan)
  // go into the bytes the run-time alignment skips when they fit there, and
  // after the buffers otherwise (see KernelEmitter::emitPrologue). Either
  // way the kernel needs the buffers plus this slack.
  int64_t metadata = offset - barrierStart;
  int64_t slack = std::max(kMaxBasePad, (metadata - 16) + metadata);
  placements.push_back({"barriers and tile records (" +
                            std::to_string(metadata) +
                            " bytes) and the alignment slack of the base",
                        slack});

  int64_t total = barrierStart + slack;
  kernel.setSmemBytesAttr(b.getI64IntegerAttr(total));
  int64_t budget =
      TargetLimits::sharedMemoryBudget(kernel.getCtasPerSmOrDefault());
  if (total <= budget)
    return success();

  InFlightDiagnostic diag = kernel.emitOpError()
                            << "needs " << total
                            << " bytes of shared memory, more than the "
                            << budget << " a CTA can have ("
                            << kernel.getCtasPerSmOrDefault() << " per SM)";
  for (const Placement &p : placements)
    diag.attachNote() << p.what << " = " << p.bytes;
  return failure();
}

struct WarpSpecAllocateSmemPass
    : public warpspec::impl::WarpSpecAllocateSmemPassBase<
          WarpSpecAllocateSmemPass> {
  void runOnOperation() override {
    WalkResult result = getOperation().walk([&](KernelOp kernel) {
      return failed(allocateKernel(kernel)) ? WalkResult::interrupt()
                                            : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
