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
  /// it is built up to head dim 64 (with every rotary variant): the group's
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
    // 64 (checkGroupedLargeBlock).
    if (failed(checkGroupedLargeBlock(op, *spec)))
      return failure();
    // Above head dim 128 it makes an item in passes over 64-column chunks
    // of the head dim (KernelPlan::groupPasses); with rotary embeddings a
    // pass would turn back dK's chunk apart from the columns it rotates
    // with (the half-split pairs are D / 2 apart): not built.
    if (spec->backward && spec->group > 1 && spec->hasRotary() &&
        spec->headDim > KernelShape::kMaxOutputCols)
      return op->emitOpError()
             << "with group " << spec->group
             << " (grouped-query attention) and rotary embeddings has no "
                "backward lowering at head_dim "
             << spec->headDim
             << " yet: the grouped rotary backward is built for head dims up "
                "to "
             << KernelShape::kMaxOutputCols
             << " (without rotary embeddings up to 256)";
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
