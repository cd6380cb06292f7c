//===- WarpSpecialize.cpp - blockattn to warpspec -------------------------===//
//
// blockattn-warp-specialize: replaces a blockattn kernel op with the
// warp-specialized warpspec.kernel that implements it on one chip. The pass
// only drives the three steps, each in its own file:
//   KernelSpec.cpp     the op's description (and its function's checks)
//   Plan.cpp           launch, rings, consumers, registers: pure functions
//   Sm90aRecipe.cpp,   the warpspec IR, one recipe file per chip, from the
//   Sm100aRecipe.cpp   description and the plan (shared pieces: Recipe.cpp)
//
//===----------------------------------------------------------------------===//

#include "blockattn/Dialect/BlockAttn/Transforms/Passes.h"

#include "KernelSpec.h"
#include "Recipe.h"

#include "blockattn/Dialect/BlockAttn/IR/BlockAttnOps.h"
#include "blockattn/Dialect/WarpSpec/IR/WarpSpecOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::blockattn {
#define GEN_PASS_DEF_BLOCKATTNWARPSPECIALIZEPASS
#include "blockattn/Dialect/BlockAttn/Transforms/Passes.h.inc"
} // namespace mlir::blockattn

using namespace mlir;
using namespace mlir::blockattn;
using mlir::warpspec::Chip;

namespace {

/// The widest head dim of the grouped-query backward at block size 128
/// (checkGroupedLargeBlock): 128, above which both chips stream 64-column
/// chunks (with rotary embeddings on sm_90a only).
constexpr int64_t kMaxGroupedLargeBlockHeadDim = 128;

struct BlockAttnWarpSpecializePass
    : public blockattn::impl::BlockAttnWarpSpecializePassBase<
          BlockAttnWarpSpecializePass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<Operation *> kernels;
    func.walk([&](Operation *op) {
      if (isa<ForwardOp, BackwardOp>(op))
        kernels.push_back(op);
    });
    if (kernels.empty())
      return;
    for (Operation *op : kernels)
      if (failed(lowerKernel(func, op)))
        return signalPassFailure();
  }

  /// The grouped-query backward sums dk and dv over the group inside one
  /// CTA (docs/pipeline.md, "Grouped-query attention"). At block size 128
  /// it is built up to head dim 128 (above 64 in passes over column chunks
  /// of the head dim, KernelPlan::groupPasses; every group, both chips);
  /// with rotary embeddings (every variant) up to head dim 64, in one pass,
  /// at 96 and 128 with either layout (in the passes, both chips). Above 128
  /// an item's K and V of 128 keys (2 x 48 KiB at 192), a query head's Q and
  /// dO (the same) and both query halves' P and dS (64 KiB) exceed shared
  /// memory (227 KiB): both chips stream K, V, Q and dO in 64-column chunks
  /// (KernelPlan::groupChunkStages); sm_90a with interleaved rotary
  /// embeddings too (each chunk rotated as it lands), sm_100a without.
  /// Half-split rotary embeddings in passes need pair-complete chunks (each
  /// pass's gradient chunk is turned back on its own): at 128 and above two
  /// 32-column pieces a 64-column chunk (64-byte swizzle), at 96 two
  /// 16-column pieces a 32-column chunk (32-byte swizzle, chunk_cols = 16;
  /// pairHalfChunks, loadedChunkCols), every piece a TMA box that fills its
  /// swizzle span.
  LogicalResult checkGroupedLargeBlock(Operation *op, const KernelSpec &spec) {
    if (!spec.backward || spec.group <= 1 || spec.numQueryTiles() == 1)
      return success();
    auto refuse = [&]() {
      return op->emitOpError()
             << "with group " << spec.group
             << " (grouped-query attention) has no backward lowering at "
                "block_size "
             << spec.blockSize;
    };
    // Above head dim 128 both chips stream K, V, Q and dO in 64-column
    // chunks (KernelPlan::groupChunkStages); the sm_90a scores warpgroup
    // rotates them as they land, the sm_100a kernel is built without rotary
    // embeddings.
    if (spec.headDim > kMaxGroupedLargeBlockHeadDim && spec.hasRotary() &&
        chip == Chip::sm_100a)
      return refuse() << " and head_dim " << spec.headDim
                      << " with rotary embeddings on sm_100a yet: above "
                         "head_dim "
                      << kMaxGroupedLargeBlockHeadDim
                      << " K, V, Q and dO are streamed in 64-column chunks, "
                         "which only the sm_90a kernel rotates";
    return success();
  }

  LogicalResult lowerKernel(func::FuncOp func, Operation *op) {
    FailureOr<KernelSpec> spec = describeKernel(func, op);
    if (failed(spec))
      return failure();
    // The grouped-query backward at block size 128: built up to head dim
    // 128 (with rotary embeddings too), and above it on both chips, with
    // rotary embeddings on sm_90a only (checkGroupedLargeBlock).
    if (failed(checkGroupedLargeBlock(op, *spec)))
      return failure();
    TuningOptions options;
#define BLOCKATTN_PASS_OPTION(TYPE, NAME, ...) options.NAME = NAME;
#define GEN_PASS_OPTION_LIST_BLOCKATTNWARPSPECIALIZEPASS
#include "blockattn/Dialect/BlockAttn/Transforms/PassOptionList.h.inc"
    std::string error;
    FailureOr<KernelPlan> plan = planKernel(*spec, options, error);
    if (failed(plan))
      return op->emitOpError() << error;
    OpBuilder b(op);
    if (chip == Chip::sm_100a)
      buildSm100aKernel(b, op->getLoc(), *spec, *plan);
    else
      buildSm90aKernel(b, op->getLoc(), *spec, *plan);
    op->erase();
    return success();
  }
};

} // namespace
