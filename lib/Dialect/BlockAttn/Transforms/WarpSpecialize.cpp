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

/// The widest head dim of the sm_90a grouped-query backward at block size
/// 128 (checkGroupedLargeBlock).
constexpr int64_t kMaxGroupedLargeBlockHeadDim = 64;

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
  /// it is built without rotary embeddings up to head dim 64: the group's
  /// dV and dK of 128 keys live across the group next to S and dP, on
  /// sm_90a in two accumulate warpgroups' registers (D / 2 + D / 2 a thread
  /// each: at head dims 96 and 128 they and the scores warpgroup's 176 no
  /// longer fit the 512 a thread four warpgroups share), on sm_100a in
  /// tensor memory (S 128 + dP 128 + dQ, dV, dK D columns each: 544 and
  /// 640 of its 512 at 96 and 128).
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
    if (spec.hasRotary())
      return refuse() << " with rotary embeddings yet: the grouped backward "
                         "at block_size "
                      << spec.blockSize << " is built without them";
    if (spec.headDim > kMaxGroupedLargeBlockHeadDim)
      return refuse()
             << " and head_dim " << spec.headDim
             << " yet: the group's dK and dV of 128 keys, held across the "
                "group, fit next to S and dP ("
             << (chip == Chip::sm_100a ? "tensor memory" : "registers")
             << ") up to head_dim " << kMaxGroupedLargeBlockHeadDim;
    return success();
  }

  LogicalResult lowerKernel(func::FuncOp func, Operation *op) {
    FailureOr<KernelSpec> spec = describeKernel(func, op);
    if (failed(spec))
      return failure();
    // The grouped-query backward at block size 128: built up to head dim
    // 64 without rotary embeddings (checkGroupedLargeBlock).
    if (failed(checkGroupedLargeBlock(op, *spec)))
      return failure();
    // Above head dim 128 it makes an item in passes over 64-column chunks
    // of the head dim (KernelPlan::groupPasses); with half-split rotary
    // embeddings a pass would turn back a gradient's chunk apart from the
    // columns it rotates with (the pairs are D / 2 apart): not built. An
    // interleaved chunk holds whole pairs.
    if (spec->backward && spec->group > 1 &&
        spec->rotary == RotaryMode::half_split &&
        spec->headDim > KernelShape::kMaxOutputCols)
      return op->emitOpError()
             << "with group " << spec->group
             << " (grouped-query attention) and half-split rotary embeddings "
                "has no backward lowering at head_dim "
             << spec->headDim << " yet: above head dim "
             << KernelShape::kMaxOutputCols
             << " the grouped backward makes its gradients in 64-column "
                "chunks, and a half-split pair's columns are D / 2 apart, in "
                "different chunks (interleaved rotary embeddings are built)";
    // From theta the angles are arithmetic on the position, computed next
    // to each rotation and each turned-back chunk; next to the group's dV
    // and dK chunks ptxas (CUDA 13.0) spilled 72-296 bytes (sm_90a at 192
    // and 256, sm_100a at 192): built with tables only.
    if (spec->backward && spec->group > 1 && spec->hasRotary() && spec->theta &&
        spec->headDim > KernelShape::kMaxOutputCols)
      return op->emitOpError()
             << "with group " << spec->group
             << " (grouped-query attention) and rotary_theta has no backward "
                "lowering at head_dim "
             << spec->headDim
             << " yet: the grouped rotary backward above head dim "
             << KernelShape::kMaxOutputCols
             << " is built with cos/sin tables (computing the angles in the "
                "kernel spills registers there)";
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
