//===- main.cpp - embeds the installed blockattn dialect ------------------===//
//
// Built by test/Install/consumer.test against an installed block-attn
// package: registers the dialects through the public registration hook,
// parses a module holding one blockattn.forward, verifies it, queries the op
// through its generated C++ API, and prints it. Then checks that the
// verifier linked in from the package rejects an unsupported head_dim.
//
//===----------------------------------------------------------------------===//

#include "blockattn/Dialect/BlockAttn/IR/BlockAttnOps.h"
#include "blockattn/InitAllDialects.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

static constexpr const char *kForward = R"mlir(
func.func @consumer_forward(%q: memref<?x4x128xbf16>, %cu: memref<?xi32>) {
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%q : memref<?x4x128xbf16>)
      v(%q : memref<?x4x128xbf16>) o(%q : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16,
       softmax_scale = 0.125 : f32}
  return
}
)mlir";

static constexpr const char *kUnsupported = R"mlir(
func.func @consumer_head_dim_96(%q: memref<?x4x96xbf16>, %cu: memref<?xi32>) {
  blockattn.forward q(%q : memref<?x4x96xbf16>) k(%q : memref<?x4x96xbf16>)
      v(%q : memref<?x4x96xbf16>) o(%q : memref<?x4x96xbf16>)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 96 : i64, element_type = bf16}
  return
}
)mlir";

int main() {
  DialectRegistry registry;
  blockattn::registerAllBlockAttnDialects(registry);
  registry.insert<func::FuncDialect>();
  MLIRContext context(registry);

  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(kForward, &context, "forward.mlir");
  if (!module || failed(verify(*module))) {
    llvm::errs() << "consumer: the valid module was rejected\n";
    return 1;
  }
  int numForward = 0;
  module->walk([&](blockattn::ForwardOp op) {
    ++numForward;
    llvm::outs() << "forward: head_dim=" << op.getHeadDim()
                 << " block_size=" << op.getBlockSize()
                 << " element_type=" << op.getElementType()
                 << " scale=" << op.getEffectiveSoftmaxScale()
                 << " rotary=" << blockattn::stringifyRotaryMode(op.getRotary())
                 << "\n";
  });
  if (numForward != 1) {
    llvm::errs() << "consumer: expected one blockattn.forward, found "
                 << numForward << "\n";
    return 1;
  }
  module->print(llvm::outs());
  llvm::outs().flush();

  // The verifier comes from the installed library: head_dim 96 is rejected
  // with a diagnostic (printed to stderr by the context's default handler).
  OwningOpRef<ModuleOp> bad =
      parseSourceString<ModuleOp>(kUnsupported, &context, "unsupported.mlir");
  if (bad) {
    llvm::errs() << "consumer: the unsupported head_dim was accepted\n";
    return 1;
  }
  llvm::outs() << "consumer: ok\n";
  return 0;
}
