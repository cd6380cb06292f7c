//===- FuzzTarget.cpp - parse, verify and run a pipeline on an input ------===//

#include "FuzzTarget.h"

#include "blockattn/InitAllDialects.h"
#include "blockattn/InitAllPasses.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <mutex>

using namespace mlir;

const char *blockattn::fuzz::knownUpstreamCrash(llvm::StringRef input) {
  // MLIR's bytecode reader trusts the sizes in the bytecode: a corrupted
  // .mlirbc asks for a vector past its size limit ("SmallVector unable to
  // grow", a report_fatal_error) or reads out of bounds. Bytecode starts
  // with the magic "ML\xefR".
  if (input.starts_with("ML\xef\x52"))
    return "MLIR bytecode (upstream: the bytecode reader aborts on corrupted "
           "sizes)";
  // parseDenseArrayAttr dereferences a null element type for a dense array
  // of index elements (SIGSEGV in mlir::AsmParser), before anything of ours
  // runs. Textual IR never needs the spelling.
  if (input.contains("array<index"))
    return "`array<index: ...>` (upstream: SIGSEGV in parseDenseArrayAttr)";
  return nullptr;
}

// Built with AddressSanitizer (`make fuzz`, `make check-sanitize`), our code
// is instrumented but Debian's libLLVM/libMLIR are not. LLVM's
// BumpPtrAllocator poisons a new slab and unpoisons each allocation only
// where it is inlined into instrumented code, so memory that the libraries
// carve from a slab our code started stays poisoned: every run would report
// a use-after-poison that is not one. Ignore that manual poisoning (ASan's
// own redzones stay checked), and leaks (the registries live for the
// process by design).
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BLOCKATTN_FUZZ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(BLOCKATTN_FUZZ_ASAN)
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0:detect_leaks=0";
}
#endif

namespace {

/// The tools' registries, built once: registering passes is global.
DialectRegistry &toolRegistry() {
  static DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    blockattn::registerBlockAttnToolDialects(*r);
    blockattn::registerBlockAttnToolPasses();
    return r;
  }();
  return *registry;
}

/// A fatal error of LLVM's (report_fatal_error) on user input is a finding:
/// make it a crash the fuzzer records, not an exit(1) it cannot tell apart.
void installFatalErrorHandler() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::install_fatal_error_handler(
        [](void *, const char *reason, bool) {
          llvm::errs() << "fatal error on fuzz input: " << reason << "\n";
          std::abort();
        },
        nullptr);
  });
}

/// Parses and verifies; null for input that the parser or verifier rejects.
OwningOpRef<ModuleOp> parse(MLIRContext &context, llvm::StringRef input) {
  // MLIR's lexer stops at the buffer's terminating NUL, as a file read by a
  // tool has it; libFuzzer's data has none, so parse a terminated copy.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(input, "fuzz-input"), llvm::SMLoc());
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}

void runOnePipeline(llvm::StringRef input, llvm::StringRef pipeline) {
  MLIRContext context(toolRegistry(), MLIRContext::Threading::DISABLED);
  context.allowUnregisteredDialects(false);
  // A diagnostic is a correct answer; keep it off stderr unless asked
  // (BLOCKATTN_FUZZ_VERBOSE=1, to see what a replayed input reaches).
  static const bool verbose = std::getenv("BLOCKATTN_FUZZ_VERBOSE");
  ScopedDiagnosticHandler quiet(&context, [](Diagnostic &diag) {
    if (verbose)
      llvm::errs() << diag.getLocation() << ": " << diag << "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module = parse(context, input);
  if (!module || pipeline.empty())
    return;
  // As in the tools, the pass manager verifies after every pass: a pass
  // whose output breaks a verifier rule is reported like any diagnostic
  // (some rules, such as the kernel name's, are meant to catch a recipe's
  // output).
  PassManager pm(&context, ModuleOp::getOperationName());
  if (failed(parsePassPipeline(pipeline, pm))) {
    llvm::errs() << "fuzz target: cannot parse its pipeline '" << pipeline
                 << "'\n";
    std::abort();
  }
  (void)pm.run(*module);
}

} // namespace

int blockattn::fuzz::runPipelines(const uint8_t *data, size_t size,
                                  llvm::ArrayRef<llvm::StringRef> pipelines) {
  installFatalErrorHandler();
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  if (knownUpstreamCrash(input))
    return 0;
  for (llvm::StringRef pipeline : pipelines)
    runOnePipeline(input, pipeline);
  return 0;
}
