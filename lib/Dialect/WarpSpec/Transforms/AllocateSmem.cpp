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
#include "blockattn/Support/CheckedArithmetic.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::warpspec {
#define GEN_PASS_DEF_WARPSPECALLOCATESMEMPASS
#include "blockattn/Dialect/WarpSpec/Transforms/Passes.h.inc"
} // namespace mlir::warpspec

using namespace mlir;
using namespace mlir::warpspec;
using mlir::blockattn::CheckedSize;

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
  CheckedSize bytes;
};

std::string describe(CheckedSize size) {
  std::optional<int64_t> value = size.get();
  return value ? std::to_string(*value) : "more than 2^63";
}

/// An offset or size of the plan as an attribute (0 if it overflowed).
IntegerAttr sizeAttr(Builder &b, CheckedSize size) {
  return b.getI64IntegerAttr(size.get().value_or(0));
}

LogicalResult allocateKernel(KernelOp kernel) {
  Builder b(kernel.getContext());
  SmallVector<Placement> placements;
  // Every size comes from a type shape or an attribute: a sum that wrapped
  // around would pass the budget check. An offset that overflowed is written
  // as 0, but then so did the total, and the pass fails.
  CheckedSize offset = 0;

  SmallVector<ChannelOp, 4> smemChannels;
  for (ChannelOp channel : kernel.getChannels())
    if (!channel.inTensorMemory())
      smemChannels.push_back(channel);

  for (ChannelOp channel : smemChannels) {
    CheckedSize stride =
        CheckedSize(channel.getChannelType().getSlotSizeInBytes())
            .alignTo(kSwizzleAlignment);
    offset = offset.alignTo(kSwizzleAlignment);
    channel.setBufferOffsetAttr(sizeAttr(b, offset));
    channel.setSlotStrideAttr(sizeAttr(b, stride));
    CheckedSize bytes = stride * CheckedSize(channel.getDepth());
    placements.push_back({"channel \"" + channel.getName().str() +
                              "\": " + std::to_string(channel.getDepth()) +
                              " x " + describe(stride) + " bytes",
                          bytes});
    offset += bytes;
  }

  // Row values (a tile's positions) of every slot, 16-byte aligned, apart
  // from the tiles so that they cost no 1024-byte step of each slot.
  for (ChannelOp channel : smemChannels) {
    int64_t rowBytes = channel.getChannelType().getRowBuffersSizeInBytes();
    if (!rowBytes)
      continue;
    offset = offset.alignTo(16);
    channel.setRowsOffsetAttr(sizeAttr(b, offset));
    CheckedSize bytes = CheckedSize(rowBytes) * CheckedSize(channel.getDepth());
    placements.push_back({"row values of channel \"" + channel.getName().str() +
                              "\": " + std::to_string(channel.getDepth()) +
                              " x " + std::to_string(rowBytes) + " bytes",
                          bytes});
    offset += bytes;
  }

  kernel.walk([&](ScratchOp scratch) {
    auto partition = scratch->getParentOfType<PartitionOp>();
    CheckedSize stride =
        CheckedSize(scratch.getBuffer().getType().getSizeInBytes())
            .alignTo(kSwizzleAlignment);
    offset = offset.alignTo(kSwizzleAlignment);
    scratch.setOffsetAttr(sizeAttr(b, offset));
    scratch.setReplicaStrideAttr(sizeAttr(b, stride));
    CheckedSize bytes = stride * CheckedSize(partition.getReplicas());
    placements.push_back({"scratch of partition \"" +
                              partition.getName().str() +
                              "\": " + std::to_string(partition.getReplicas()) +
                              " x " + describe(stride) + " bytes",
                          bytes});
    offset += bytes;
  });

  // Barriers and tile records of every channel (tensor-memory channels are
  // synchronized through shared-memory barriers too).
  CheckedSize barrierStart = offset;
  for (ChannelOp channel : kernel.getChannels()) {
    channel.setBarrierOffsetAttr(sizeAttr(b, offset));
    offset += CheckedSize(2 * kBarrierBytes) * CheckedSize(channel.getDepth());
  }
  offset = offset.alignTo(kTileRecordBytes);
  for (ChannelOp channel : kernel.getChannels()) {
    channel.setInfoOffsetAttr(sizeAttr(b, offset));
    offset += CheckedSize(kTileRecordBytes) * CheckedSize(channel.getDepth());
  }
  // The tensor-memory base address (written by tcgen05.alloc) and the
  // barrier that holds the deallocation until every user is done.
  bool usesTmem = llvm::any_of(kernel.getChannels(), [](ChannelOp channel) {
    return channel.inTensorMemory();
  });
  if (usesTmem) {
    kernel.setTmemBaseOffsetAttr(sizeAttr(b, offset));
    offset += kTileRecordBytes;
  }
  // The barriers and tile records (offsets past the buffers in the plan)
  // go into the bytes the run-time alignment skips when they fit there, and
  // after the buffers otherwise (see lowering::buildPrologue in
  // lib/Conversion/WarpSpecToNVVM/Prologue.cpp). Either way the kernel needs
  // the buffers plus this slack.
  CheckedSize slack = CheckedSize::overflowed();
  std::string metadataBytes = describe(slack);
  if (offset.get() && barrierStart.get()) {
    int64_t metadata = *offset.get() - *barrierStart.get();
    metadataBytes = std::to_string(metadata);
    if (std::optional<int64_t> twice = (CheckedSize(metadata) * 2).get())
      slack = std::max(kMaxBasePad, *twice - 16);
  }
  placements.push_back({"barriers and tile records (" + metadataBytes +
                            " bytes) and the alignment slack of the base",
                        slack});

  CheckedSize total = barrierStart + slack;
  int64_t budget =
      TargetLimits::sharedMemoryBudget(kernel.getCtasPerSmOrDefault());
  kernel.setSmemBytesAttr(sizeAttr(b, total));
  if (total.fitsIn(budget))
    return success();

  InFlightDiagnostic diag = kernel.emitOpError()
                            << "needs " << describe(total)
                            << " bytes of shared memory, more than the "
                            << budget << " a CTA can have ("
                            << kernel.getCtasPerSmOrDefault() << " per SM)";
  for (const Placement &p : placements)
    diag.attachNote() << p.what << " = " << describe(p.bytes);
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
