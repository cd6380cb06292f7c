//===- fuzz-compile-flags.cpp - fuzz target: block-attn-compile's flags ---===//
//
// LLVMFuzzerTestOneInput for block-attn-compile's command line: the input is
// an argument vector, one argument per line (a NUL also ends one), parsed by
// parseCompileCommandLine as the tool parses its argv. A command line that
// describes a kernel (--kind) is turned into the kernel's MLIR source and
// parsed: once the description verifies, getKernelSource promises MLIR that
// parses (the op verifier may still reject it, with a diagnostic), so a
// source that does not parse is a broken invariant, not a diagnostic.
// Nothing is compiled: the blockattn-to-ptx target covers the pipeline.
//
//===----------------------------------------------------------------------===//

#include "FuzzTarget.h"

#include "blockattn/Compiler/CommandLine.h"
#include "blockattn/InitAllDialects.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>

using namespace mlir;

namespace {

/// The tool's registry, built once.
DialectRegistry &compileRegistry() {
  static DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    blockattn::registerAllBlockAttnDialects(*r);
    return r;
  }();
  return *registry;
}

/// One argument per line or NUL-terminated piece, as a shell would hand
/// them over (no quoting: an argument cannot hold a newline). Bounded, so
/// that a long input stays one quick parse.
llvm::SmallVector<std::string> splitArguments(llvm::StringRef input) {
  constexpr size_t kMaxArguments = 256;
  llvm::SmallVector<std::string> args;
  while (!input.empty() && args.size() < kMaxArguments) {
    size_t end = input.find_first_of(llvm::StringRef("\n\0", 2));
    args.push_back(input.take_front(end).str());
    input = end == llvm::StringRef::npos ? llvm::StringRef()
                                         : input.drop_front(end + 1);
  }
  return args;
}

/// getKernelSource's promise: a verified description gives MLIR that parses.
void checkKernelSource(const blockattn::KernelDescription &description) {
  MLIRContext context(compileRegistry(), MLIRContext::Threading::DISABLED);
  std::string source = blockattn::getKernelSource(description);
  std::string diagnostics;
  ScopedDiagnosticHandler capture(&context, [&](Diagnostic &diag) {
    llvm::raw_string_ostream(diagnostics) << diag << "\n";
    return success();
  });
  ParserConfig config(&context, /*verifyAfterParse=*/false);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(source, config, "<flags>");
  if (!module) {
    llvm::errs() << "fuzz target: getKernelSource gave MLIR that does not "
                    "parse:\n"
                 << diagnostics << source << "\n";
    std::abort();
  }
  // The op verifier is the right place for the remaining rules: its
  // diagnostic is an answer, not a finding.
  (void)verify(*module);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  llvm::SmallVector<std::string> args = splitArguments(input);
  llvm::SmallVector<llvm::StringRef> argRefs(args.begin(), args.end());
  blockattn::CompileInvocation invocation;
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  if (failed(blockattn::parseCompileCommandLine(argRefs, invocation,
                                                errorStream))) {
    // parseCompileCommandLine's contract: a failure says why, in one line.
    if (!llvm::StringRef(errors).starts_with("error: ")) {
      llvm::errs() << "fuzz target: a rejected command line without an "
                      "error line\n";
      std::abort();
    }
    return 0;
  }
  if (invocation.description && !invocation.help)
    checkKernelSource(*invocation.description);
  return 0;
}
