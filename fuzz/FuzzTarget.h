//===- FuzzTarget.h - one fuzz target per tool entry point ------*- C++ -*-===//
//
// Every target feeds its input to what a tool does with a file: parse and
// verify it, then run a pass pipeline on it. A finding is a crash, a hang, a
// sanitizer report or a broken invariant (an op that fails to verify after
// a pass that succeeded); a diagnostic is the right answer to a bad input,
// so diagnostics are swallowed.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_FUZZ_FUZZTARGET_H
#define BLOCKATTN_FUZZ_FUZZTARGET_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <cstdint>

namespace mlir::blockattn::fuzz {

/// Why an input is not run: it reaches a crash in upstream MLIR that this
/// project cannot fix (docs/fuzzing.md lists them, with reproducers under
/// fuzz/known-upstream). Null when the input is run.
const char *knownUpstreamCrash(llvm::StringRef input);

/// Parses `input` as MLIR, verifies it, and runs each pipeline of
/// `pipelines` on a fresh parse: the passes on the top-level module, as in
/// `--pass-pipeline='builtin.module(...)'` (so without that anchor). Returns 0,
/// as LLVMFuzzerTestOneInput must; aborts on a broken invariant.
int runPipelines(const uint8_t *data, size_t size,
                 llvm::ArrayRef<llvm::StringRef> pipelines);

} // namespace mlir::blockattn::fuzz

#endif // BLOCKATTN_FUZZ_FUZZTARGET_H
