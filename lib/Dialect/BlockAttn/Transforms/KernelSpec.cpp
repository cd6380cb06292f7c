//===- KernelSpec.cpp - the blockattn op a recipe lowers ------------------===//

#include "KernelSpec.h"

#include "blockattn/Dialect/BlockAttn/IR/BlockAttnOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::blockattn;

namespace {

/// Names the function arguments the kernel's parameters come from, so that
/// the launch manifest can say which tensor each parameter is.
LogicalResult nameKernelArguments(func::FuncOp func, Operation *op,
                                  ArrayRef<std::pair<StringRef, Value>> named) {
  for (auto [name, value] : named) {
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg || arg.getOwner() != &func.getBody().front())
      return op->emitOpError()
             << "operand '" << name
             << "' must be an argument of the enclosing function, since it "
                "becomes a kernel parameter";
    func.setArgAttr(arg.getArgNumber(), "blockattn.name",
                    StringAttr::get(func.getContext(), name));
  }
  return success();
}

/// The function must be exactly `op; return`: the kernel is the function.
LogicalResult checkKernelFunction(func::FuncOp func, Operation *op) {
  Block &body = func.getBody().front();
  if (op->getBlock() != &body || body.getOperations().size() != 2 ||
      func.getNumResults() != 0)
    return op->emitOpError()
           << "must be the only operation of a function with no results "
              "(the function becomes the kernel)";
  return success();
}

template <typename OpTy>
FailureOr<KernelSpec>
describeCommon(func::FuncOp func, OpTy op, bool backward,
               SmallVector<std::pair<StringRef, Value>> named,
               SmallVector<Value> loads, SmallVector<Value> stores) {
  if (op.getScale())
    named.push_back({"softmax_scale", op.getScale()});
  if (op.getRotaryCos()) {
    named.push_back({"cos", op.getRotaryCos()});
    named.push_back({"sin", op.getRotarySin()});
  }
  if (op.getPositions())
    named.push_back({"positions", op.getPositions()});
  if (failed(nameKernelArguments(func, op, named)))
    return failure();
  KernelSpec spec;
  spec.backward = backward;
  spec.blockSize = op.getBlockSize();
  spec.headDim = op.getHeadDim();
  spec.rotary = op.getRotary();
  spec.rotateV = static_cast<bool>(op.getRotateV());
  spec.hasPositions = static_cast<bool>(op.getPositions());
  spec.group = op.getGroup();
  spec.op = op;
  spec.elementType = op.getElementType();
  spec.cuSeqlens = op.getCuSeqlens();
  spec.scale = op.getScale();
  spec.constantScale = op.getEffectiveSoftmaxScale();
  spec.cos = op.getRotaryCos();
  spec.sin = op.getRotarySin();
  spec.positions = op.getPositions();
  if (std::optional<APFloat> theta = op.getRotaryTheta()) {
    spec.theta = theta->convertToFloat();
    spec.rotaryTheta = true;
  }
  spec.causal = static_cast<bool>(op.getCausal());
  spec.loads = std::move(loads);
  spec.stores = std::move(stores);
  return spec;
}

FailureOr<KernelSpec> describe(func::FuncOp func, ForwardOp op) {
  SmallVector<std::pair<StringRef, Value>> named = {
      {"q", op.getQ()},
      {"k", op.getK()},
      {"v", op.getV()},
      {"o", op.getO()},
      {"cu_seqlens", op.getCuSeqlens()}};
  if (op.getLse())
    named.push_back({"lse", op.getLse()});
  FailureOr<KernelSpec> spec =
      describeCommon(func, op, /*backward=*/false, named,
                     {op.getQ(), op.getK(), op.getV()}, {op.getO()});
  if (succeeded(spec))
    spec->lse = op.getLse();
  return spec;
}

FailureOr<KernelSpec> describe(func::FuncOp func, BackwardOp op) {
  SmallVector<std::pair<StringRef, Value>> named = {
      {"q", op.getQ()},   {"k", op.getK()},
      {"v", op.getV()},   {"do", op.getDout()},
      {"dq", op.getDq()}, {"dk", op.getDk()},
      {"dv", op.getDv()}, {"cu_seqlens", op.getCuSeqlens()}};
  if (op.getDlse())
    named.push_back({"dlse", op.getDlse()});
  FailureOr<KernelSpec> spec =
      describeCommon(func, op, /*backward=*/true, named,
                     {op.getQ(), op.getK(), op.getV(), op.getDout()},
                     {op.getDv(), op.getDk(), op.getDq()});
  if (succeeded(spec))
    spec->dlse = op.getDlse();
  return spec;
}

} // namespace

FailureOr<KernelSpec> blockattn::describeKernel(func::FuncOp func,
                                                Operation *op) {
  if (failed(checkKernelFunction(func, op)))
    return failure();
  return TypeSwitch<Operation *, FailureOr<KernelSpec>>(op)
      .Case<ForwardOp, BackwardOp>(
          [&](auto typed) { return describe(func, typed); })
      .Default([](Operation *) { return failure(); });
}
