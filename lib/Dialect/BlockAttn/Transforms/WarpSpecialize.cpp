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

namespace mlir::blockattn {
#define GEN_PASS_DEF_BLOCKATTNWARPSPECIALIZEPASS
#include "blockattn/Dialect/BlockAttn/Transforms/Passes.h.inc"
} // namespace mlir::blockattn

using namespace mlir;
using namespace mlir::blockattn;

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
    std::optional<Chip> target = symbolizeChip(chip);
    if (!target) {
      func.emitError() << "blockattn-warp-specialize: unsupported chip '"
                       << chip << "'; supported chips: sm_90a, sm_100a";
      return signalPassFailure();
    }
    for (Operation *op : kernels)
      if (failed(lowerKernel(func, op, *target)))
        return signalPassFailure();
  }

  LogicalResult lowerKernel(func::FuncOp func, Operation *op, Chip target) {
    FailureOr<KernelSpec> spec = describeKernel(func, op);
    if (failed(spec))
      return failure();
    FailureOr<TuningOptions> options = tuningOptions(op);
    if (failed(options))
      return failure();
    std::string error;
    FailureOr<KernelPlan> plan = planKernel(target, *spec, *options, error);
    if (failed(plan))
      return op->emitOpError() << error;
    OpBuilder b(op);
    if (target == Chip::sm_100a)
      buildSm100aKernel(b, op->getLoc(), *spec, *plan);
    else
      buildSm90aKernel(b, op->getLoc(), *spec, *plan);
    op->erase();
    return success();
  }

  FailureOr<TuningOptions> tuningOptions(Operation *op) {
    TuningOptions options;
    options.numStages = numStages;
    options.numConsumers = numConsumers;
    options.ctasPerSm = ctasPerSm;
    options.tilesPerCta = tilesPerCta;
    std::optional<POperand> p = symbolizePOperand(pOperand);
    if (!p)
      return op->emitOpError()
             << "p-operand must be 'registers' or 'smem', got '" << pOperand
             << "'";
    std::optional<OStore> o = symbolizeOStore(oStore);
    if (!o)
      return op->emitOpError()
             << "o-store must be 'tma', 'smem' or 'registers', got '" << oStore
             << "'";
    std::optional<Schedule> s = symbolizeSchedule(schedule);
    if (!s)
      return op->emitOpError()
             << "schedule must be 'auto', 'strided', 'contiguous' or "
                "'chunked', got '"
             << schedule << "'";
    std::optional<L2Prefetch> l2 = symbolizeL2Prefetch(l2Prefetch);
    if (!l2)
      return op->emitOpError()
             << "l2-prefetch must be 'auto', 'on' or 'off', got '" << l2Prefetch
             << "'";
    options.pOperand = *p;
    options.oStore = *o;
    options.schedule = *s;
    options.l2Prefetch = *l2;
    return options;
  }
};

} // namespace
