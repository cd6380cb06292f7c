//===- AllocateTmem.cpp - place warpspec buffers in tensor memory ---------===//
//
// warpspec-allocate-tmem: lanes and columns for every tensor-memory channel
// slot. The M = 64 accumulators of these kernels use half of the lanes, so
// slots are placed in pairs that share columns (lane alignments 0 and 16).
//
//===----------------------------------------------------------------------===//

#include "blockattn/Dialect/WarpSpec/Transforms/Passes.h"

#include "blockattn/Dialect/WarpSpec/IR/WarpSpecOps.h"
#include "blockattn/Support/CheckedArithmetic.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

namespace mlir::warpspec {
#define GEN_PASS_DEF_WARPSPECALLOCATETMEMPASS
#include "blockattn/Dialect/WarpSpec/Transforms/Passes.h.inc"
} // namespace mlir::warpspec

using namespace mlir;
using namespace mlir::warpspec;
using mlir::blockattn::CheckedSize;

namespace {

/// Lane alignment of the second M = 64 buffer of a column range.
constexpr int64_t kUpperHalfLanes = 16;
/// tcgen05.alloc allocates at least this many columns, in powers of two.
constexpr int64_t kMinColumns = 32;

LogicalResult allocateKernel(KernelOp kernel) {
  Builder b(kernel.getContext());
  SmallVector<ChannelOp, 4> channels;
  for (ChannelOp channel : kernel.getChannels())
    if (channel.inTensorMemory())
      channels.push_back(channel);
  if (channels.empty())
    return success();
  if (!kernel.isBlackwell())
    return kernel.emitOpError()
           << "has tensor-memory channels, but "
           << stringifyChip(kernel.getChip()) << " has no tensor memory";

  int64_t column = 0;
  SmallVector<std::string> lines;
  bool overBudget = false;
  for (ChannelOp channel : channels) {
    ArrayRef<Type> buffers = channel.getChannelType().getBufferTypes();
    int64_t width = 0;
    for (Type type : buffers) {
      auto buffer = cast<BufferType>(type);
      if (buffer.getShape()[0] != 64)
        return channel.emitOpError()
               << "tensor-memory buffers are M = 64 tiles (64 rows), got "
               << buffer;
      width += buffer.getTmemColumns();
    }
    // Slots 2k and 2k+1 share columns, at lane alignments 0 and 16. The
    // budget is checked before any slot is placed: the depth alone may ask
    // for more columns than exist.
    CheckedSize columns =
        CheckedSize(llvm::divideCeil(channel.getDepth(), 2)) * width;
    lines.push_back("channel \"" + channel.getName().str() +
                    "\": " + std::to_string(channel.getDepth()) + " slots of " +
                    std::to_string(width) + " columns = " +
                    std::to_string(columns.get().value_or(0)) + " columns");
    CheckedSize end = columns + column;
    if (overBudget || !end.fitsIn(TargetLimits::tmemColumns)) {
      overBudget = true;
      column = end.get().value_or(std::numeric_limits<int64_t>::max());
      continue;
    }
    SmallVector<int64_t> slots;
    for (int64_t s = 0, e = channel.getDepth(); s < e; ++s) {
      slots.push_back(kUpperHalfLanes * (s % 2));
      slots.push_back(column + (s / 2) * width);
    }
    channel.setTmemSlotsAttr(b.getDenseI64ArrayAttr(slots));
    column = *end.get();
  }
  if (overBudget) {
    InFlightDiagnostic diag =
        kernel.emitOpError()
        << "needs " << column << " tensor-memory columns, more than the "
        << TargetLimits::tmemColumns << " of an SM; live at the peak:";
    for (const std::string &line : lines)
      diag.attachNote() << line;
    return failure();
  }
  int64_t allocation =
      std::max<int64_t>(kMinColumns, llvm::PowerOf2Ceil(column));
  kernel.setTmemColumnsAttr(b.getI64IntegerAttr(allocation));
  return success();
}

struct WarpSpecAllocateTmemPass
    : public warpspec::impl::WarpSpecAllocateTmemPassBase<
          WarpSpecAllocateTmemPass> {
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
