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

  LogicalResult lowerKernel(func::FuncOp func, Operation *op) {
    FailureOr<KernelSpec> spec = describeKernel(func, op);
    if (failed(spec))
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
    Operation *previous = op->getPrevNode();
    if (chip == Chip::sm_100a)
      buildSm100aKernel(b, op->getLoc(), *spec, *plan);
    else
      buildSm90aKernel(b, op->getLoc(), *spec, *plan);
    for (Operation *built = previous ? previous->getNextNode()
                                     : &op->getBlock()->front();
         built != op; built = built->getNextNode()) {
      if (plan->softmaxFullTiles)
        markFullTilePaths(built);
      if (plan->stmatrixWrites)
        markStmatrixWrites(built);
    }
    op->erase();
    return success();
  }

  /// Every write of a register tile into shared memory in `root` (a
  /// warpspec.write, or a warpspec.store's staging) that stmatrix can make:
  /// widths of a multiple of 16 columns (every warpspec.write's: its
  /// verifier asks for 32).
  static void markStmatrixWrites(Operation *root) {
    root->walk([](Operation *op) {
      if (auto write = dyn_cast<warpspec::WriteOp>(op)) {
        write.setStmatrix(true);
      } else if (auto store = dyn_cast<warpspec::StoreOp>(op)) {
        if (store.getStaging() &&
            store.getValue().getType().getShape()[1] % 16 == 0)
          store.setStmatrix(true);
      }
    });
  }

  /// Every softmax in `root` whose masks a full tile does not need
  /// branches to a copy without them.
  static void markFullTilePaths(Operation *root) {
    root->walk([](warpspec::SoftmaxOp softmax) {
      if (!softmax.getCausal() && !softmax.getBlock())
        softmax.setFullTilePath(true);
    });
  }
};

} // namespace
