//===- consumer-opt.cpp - an opt tool of an embedding compiler ------------===//
//
// Built by test/Install/consumer.test against an installed block-attn
// package: the embedder's own mlir-opt. It registers block-attn's dialects
// and passes next to its own pass, consumer-build-forward, which builds a
// blockattn kernel with the ODS builders, the way a frontend lowering into
// blockattn would.
//
//===----------------------------------------------------------------------===//

#include "blockattn/Dialect/BlockAttn/IR/BlockAttnOps.h"
#include "blockattn/InitAllDialects.h"
#include "blockattn/InitAllPasses.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

using namespace mlir;

namespace {

/// Adds @blockattn_forward_d128_b64_bf16, the kernel that
/// `block-attn-compile --kind=forward` describes with its flags: q, k, v, o
/// [T, H, 128] bf16 with run-time tokens and heads, cu_seqlens, and the
/// softmax scale as an argument.
struct BuildForwardPass
    : PassWrapper<BuildForwardPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(BuildForwardPass)

  StringRef getArgument() const final { return "consumer-build-forward"; }
  StringRef getDescription() const final {
    return "Build a blockattn.forward kernel with the ODS builders";
  }
  void getDependentDialects(DialectRegistry &registry) const final {
    registry.insert<blockattn::BlockAttnDialect, func::FuncDialect>();
  }

  void runOnOperation() final {
    ModuleOp module = getOperation();
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    Location loc = b.getUnknownLoc();
    Type bf16 = b.getBF16Type();
    auto act = MemRefType::get(
        {ShapedType::kDynamic, ShapedType::kDynamic, 128}, bf16);
    auto cu = MemRefType::get({ShapedType::kDynamic}, b.getI32Type());
    auto type = b.getFunctionType({act, act, act, act, cu, b.getF32Type()}, {});
    auto func =
        func::FuncOp::create(b, loc, "blockattn_forward_d128_b64_bf16", type);
    Block *body = func.addEntryBlock();
    b.setInsertionPointToStart(body);
    auto args = body->getArguments();
    blockattn::ForwardOp::create(
        b, loc, args[0], args[1], args[2], args[3], args[4],
        /*scale=*/args[5], /*rotary_cos=*/Value(), /*rotary_sin=*/Value(),
        /*positions=*/Value(), /*lse=*/Value(), /*block_size=*/64,
        /*head_dim=*/128, bf16,
        /*softmax_scale=*/FloatAttr(), blockattn::RotaryMode::none,
        /*rotary_theta=*/FloatAttr());
    func::ReturnOp::create(b, loc);
  }
};

} // namespace

int main(int argc, char **argv) {
  DialectRegistry registry;
  blockattn::registerAllBlockAttnDialects(registry);
  blockattn::registerAllBlockAttnPasses();
  PassRegistration<BuildForwardPass>();
  return asMainReturnCode(
      MlirOptMain(argc, argv, "block-attn consumer opt tool\n", registry));
}
