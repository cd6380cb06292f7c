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

/// The widest head dim of the grouped-query backward at block size 128 with
/// rotary embeddings made in one pass (checkGroupedLargeBlock), above which
/// interleaved ones are built at every head dim and half-split ones at 128
/// (64-column passes) and above (64-column chunks streamed, both chips) but
/// not at 96 (32-column passes).
constexpr int64_t kMaxGroupedLargeBlockRotaryHeadDim = 64;

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
  /// at 96 and 128 interleaved (in the passes, both chips). Above 128
  /// an item's K and V of 128 keys (2 x 48 KiB at 192), a query head's Q and
  /// dO (the same) and both query halves' P and dS (64 KiB) exceed shared
  /// memory (227 KiB): both chips stream K, V, Q and dO in 64-column chunks
  /// (KernelPlan::groupChunkStages), with rotary embeddings of either layout
  /// too (each chunk rotated in place as it lands: by the sm_90a scores
  /// warpgroup, by a rotary warpgroup on sm_100a).
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
    // With rotary embeddings above head dim 64: the item is made in passes
    // over C-column chunks of the head dim (64 at 128, 32 at 96), and each
    // pass's chunk of dQ, dK (and dV) is turned back on its own, which needs
    // the chunk to hold both columns of each of its pairs. An interleaved
    // chunk does; half-split pairs are D / 2 apart, so at 128 every tensor
    // is loaded in pair-complete 64-column chunks (columns [32 j, 32 j + 32)
    // and their partners, one box of a rank-4 tensor map, 128-byte swizzle:
    // pairHalfChunks) and the gradients are stored as two 32-column pieces.
    // At 96 such a 32-column chunk would be two 16-column pieces: a 32-byte
    // box inner dimension under the 64-byte swizzle, and gradient pieces of
    // 16 columns, narrower than any staging buffer or tensor-map box the
    // stores have (32 columns, nvdesc::SwizzledTile): not built. Both chips
    // (on sm_100a the softmax warpgroup rotates and turns back).
    if (spec.hasRotary() && spec.headDim > kMaxGroupedLargeBlockRotaryHeadDim &&
        spec.rotary == RotaryMode::half_split && spec.headDim % 64 != 0)
      return refuse() << " and head_dim " << spec.headDim
                      << " with half-split rotary embeddings yet: above "
                         "head_dim "
                      << kMaxGroupedLargeBlockRotaryHeadDim
                      << " an item's gradients are made in passes over "
                         "32-column chunks of the head dim, and a "
                         "pair-complete chunk (16 columns and their partners "
                         "D / 2 on) would store its gradients in 16-column "
                         "pieces, narrower than the 32-column staging buffers "
                         "and tensor-map boxes (interleaved rotary embeddings "
                         "are built at 96 and 128)";
    return success();
  }

  LogicalResult lowerKernel(func::FuncOp func, Operation *op) {
    FailureOr<KernelSpec> spec = describeKernel(func, op);
    if (failed(spec))
      return failure();
    // The grouped-query backward at block size 128: built at every head dim
    // (with rotary embeddings too, but not at 96 with half-split ones:
    // checkGroupedLargeBlock).
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
