//===- CommandLine.h - block-attn-compile's flags as a library --*- C++ -*-===//
//
// block-attn-compile's flag set, parsed into the compile API's options by a
// plain function: no global llvm::cl state, nothing printed, no exit. The
// tool calls it with its argv; a fuzz target or an embedder that wants the
// same command line calls it with any argument vector.
//
//   block-attn-compile INPUT.mlir --chip=sm_90a -o DIR [--cubin]
//   block-attn-compile --kind=forward --head-dim=128 ... -o DIR
//
// Syntax, as llvm::cl spells it: -flag or --flag; a value as --flag=VALUE or
// --flag VALUE (bool flags take only --flag or --flag=true|false|1|0);
// --kernels=a,b and repeated --kernels add up; one positional input; after
// `--` every argument is positional.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_COMPILER_COMMANDLINE_H
#define BLOCKATTN_COMPILER_COMMANDLINE_H

#include "blockattn/Compiler/Compiler.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir::blockattn {

/// Everything one block-attn-compile command line asks for.
struct CompileInvocation {
  /// The input file (empty with --kind).
  std::string inputFile;
  /// -o DIR.
  std::string outputDirectory;
  /// --kind and the flags that describe a kernel; empty with an input file.
  std::optional<KernelDescription> description;
  /// The pipeline options, --cubin, --ptxas and --kernels.
  CompileOptions options;
  /// --quiet: print nothing on success.
  bool quiet = false;
  /// --no-header: omit the resource table's header.
  bool noHeader = false;
  /// --emit-blockattn: print the described kernel's blockattn IR and stop.
  bool emitBlockAttn = false;
  /// --help (or -h): print printCompileCommandLineHelp and stop.
  bool help = false;
};

/// Parses `args` (without the program name) into `invocation`, which must be
/// default-constructed, and checks that they make one command: an input file
/// or --kind (not both), flags that describe a kernel only with --kind, a
/// valid kernel description (verifyKernelDescription), -o unless
/// --emit-blockattn, and pipeline options that verifyBlockAttnToPtxOptions
/// accepts. On failure writes one "error: ..." line to `errorStream`.
LogicalResult parseCompileCommandLine(ArrayRef<StringRef> args,
                                      CompileInvocation &invocation,
                                      raw_ostream &errorStream);

/// Prints the --help text to llvm::outs(): usage and every flag with its
/// description (the pipeline's from BlockAttnToPtxOptions).
void printCompileCommandLineHelp(StringRef programName);

} // namespace mlir::blockattn

#endif // BLOCKATTN_COMPILER_COMMANDLINE_H
