//===- block-attn-compile.cpp - kernels to PTX and launch manifests -------===//
//
//   block-attn-compile INPUT.mlir --chip=sm_90a -o DIR [--cubin]
//   block-attn-compile --kind=forward --head-dim=128 --block-size=64
//                      --dtype=bf16 --chip=sm_90a -o DIR
//                      [--rotary=half_split|interleaved [--positions]
//                       [--rotate-v] [--rotary-theta=THETA]]
//
// Runs the blockattn-to-ptx pipeline on every kernel function of the input
// (or on one kernel described by flags) and writes, per kernel,
// DIR/<kernel>.ptx and DIR/<kernel>.json: the launch manifest (threads,
// shared memory, TMEM, grid policy, the ordered parameter list with what the
// runtime must pass for each). With --cubin it also runs ptxas, writes
// DIR/<kernel>.cubin and records ptxas' resource report in the manifest.
//
// A thin client of the compile API (blockattn/Compiler): the flags are
// parsed by parseCompileCommandLine, the kernels compiled by compileKernels;
// what is left here is reading the input, printing the resource table and
// writing the files.
//
//===----------------------------------------------------------------------===//

#include "blockattn/Compiler/CommandLine.h"
#include "blockattn/Compiler/Compiler.h"
#include "blockattn/InitAllDialects.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::blockattn;

/// "load:4w/40r compute:8w/232r": warps and registers per role.
static std::string partitionSummary(const llvm::json::Object &manifest) {
  std::string s;
  for (const llvm::json::Value &p : *manifest.getArray("partitions")) {
    const llvm::json::Object &o = *p.getAsObject();
    if (!s.empty())
      s += " ";
    s += o.getString("name").value_or("").str() + ":" +
         std::to_string(o.getInteger("warps").value_or(0) *
                        o.getInteger("replicas").value_or(1)) +
         "w/" + std::to_string(o.getInteger("registers").value_or(0)) + "r";
  }
  return s;
}

static void printRow(const CompiledKernel &kernel) {
  const llvm::json::Object &manifest = kernel.manifest;
  std::string registers = "-";
  if (const llvm::json::Object *ptxas = manifest.getObject("ptxas"))
    registers = std::to_string(ptxas->getInteger("registers").value_or(0));
  llvm::outs() << llvm::format(
      "%-28s %-8s %-34s %5s %8lld %5lld %8.1fK %7.3fs\n", kernel.name.c_str(),
      manifest.getString("chip").value_or("").str().c_str(),
      partitionSummary(manifest).c_str(), registers.c_str(),
      static_cast<long long>(manifest.getInteger("smem_bytes").value_or(0)),
      static_cast<long long>(manifest.getInteger("tmem_columns").value_or(0)),
      kernel.ptx.size() / 1024.0, kernel.compileSeconds);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  SmallVector<StringRef> args(argv + 1, argv + argc);
  CompileInvocation invocation;
  if (failed(parseCompileCommandLine(args, invocation, llvm::errs())))
    return 1;
  if (invocation.help) {
    printCompileCommandLineHelp("block-attn-compile");
    return 0;
  }
  DialectRegistry registry;
  registerAllBlockAttnDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);

  OwningOpRef<ModuleOp> module;
  if (invocation.description) {
    module = buildKernelModule(*invocation.description, &context);
    if (module && invocation.emitBlockAttn) {
      module->print(llvm::outs());
      return 0;
    }
  } else {
    std::string error;
    auto file = openInputFile(invocation.inputFile, &error);
    if (!file) {
      llvm::errs() << "error: " << error << "\n";
      return 1;
    }
    sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  }
  if (!module)
    return 1;

  FailureOr<std::vector<CompiledKernel>> kernels =
      compileKernels(*module, invocation.options);
  if (failed(kernels))
    return 1;
  if (!invocation.quiet && !invocation.noHeader)
    llvm::outs() << llvm::format("%-28s %-8s %-34s %5s %8s %5s %9s %8s\n",
                                 "kernel", "chip", "warps/registers per role",
                                 "regs", "smem", "tmem", "ptx", "compile");
  for (const CompiledKernel &kernel : *kernels) {
    std::string error;
    if (failed(writeKernelFiles(kernel, invocation.outputDirectory, error))) {
      llvm::errs() << "error: " << error << "\n";
      return 1;
    }
    if (!invocation.quiet)
      printRow(kernel);
  }
  return 0;
}
