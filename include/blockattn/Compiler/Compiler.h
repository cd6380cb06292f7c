//===- Compiler.h - blockattn kernels to PTX, cubin and manifest -*- C++
//-*-===//
//
// The compiler as one call. `compileKernels` runs the blockattn-to-ptx
// pipeline on a module of blockattn kernel functions and returns, per kernel,
// its PTX, its cubin (when asked; ptxas -v), ptxas' resource report and the
// launch manifest, the JSON a runtime needs to launch the kernel with no
// other knowledge (docs/embedding.md states its schema). Nothing is read from
// or written to files the caller names; errors are MLIR diagnostics on the
// module's context, with the location of what they concern.
//
// block-attn-compile is a thin client: it parses its flags with
// parseCompileCommandLine (CommandLine.h), calls compileKernels and writes
// what comes back with writeKernelFiles.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_COMPILER_COMPILER_H
#define BLOCKATTN_COMPILER_COMPILER_H

#include "blockattn/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::blockattn {

/// The version of the manifest's schema, its `schema_version` field. It
/// changes when a field changes meaning or disappears; new fields do not
/// change it.
inline constexpr int64_t kManifestSchemaVersion = 1;

/// What compileKernels compiles, and how.
struct CompileOptions {
  /// The pipeline's options: chip, tuning, ptx-features. `format` is not
  /// used: compileKernels stops the pipeline at the NVVM/LLVM dialects, where
  /// the manifest is still on the kernel, and serializes each kernel itself.
  BlockAttnToPtxOptions pipeline;
  /// Also assemble each kernel with `ptxas -arch=<chip> -v`: the cubin, and
  /// ptxas' resource report in the manifest.
  bool cubin = false;
  /// The ptxas to run; empty: ptxas on PATH, then /usr/local/cuda/bin/ptxas.
  std::string ptxas;
  /// Compile only the kernel functions of these names (empty: every one).
  /// A name the module lacks is an error.
  std::vector<std::string> kernels;
};

/// One compiled kernel.
struct CompiledKernel {
  /// The kernel's symbol (the name of its func.func).
  std::string name;
  /// PTX text for the chip.
  std::string ptx;
  /// The cubin ptxas wrote; empty unless CompileOptions::cubin.
  std::string cubin;
  /// What `ptxas -v` printed; empty unless CompileOptions::cubin.
  std::string ptxasLog;
  /// The launch manifest. It names the code files `<name>.ptx` and (with a
  /// cubin) `<name>.cubin`: a runtime looks for them next to the manifest.
  llvm::json::Object manifest;
  /// Seconds spent on this kernel: its share of the pipeline plus its
  /// serialization (and ptxas). Also the manifest's `compile_seconds`.
  double compileSeconds = 0;

  /// The manifest as block-attn-compile writes it: two-space indented JSON,
  /// keys in sorted order, one trailing newline.
  std::string getManifestJson() const;
};

/// Runs the blockattn-to-ptx pipeline (options.pipeline, format none) on
/// `module`, which it rewrites, and serializes every gpu.module it produces
/// (one per kernel function, in the module's order). The context must hold
/// registerAllBlockAttnDialects' registry. Returns the kernels, or failure
/// after emitting diagnostics; ptxas warnings about spills or serialized
/// wgmma are warnings on the kernel's gpu.module.
FailureOr<std::vector<CompiledKernel>>
compileKernels(ModuleOp module, const CompileOptions &options);

/// Parses `source` (MLIR text holding blockattn kernel functions; `name`
/// for its diagnostics) in `context` and compiles it with compileKernels.
FailureOr<std::vector<CompiledKernel>>
compileKernels(StringRef source, StringRef name, MLIRContext *context,
               const CompileOptions &options);

/// Writes DIR/<kernel>.ptx, DIR/<kernel>.json and (if it has one)
/// DIR/<kernel>.cubin, creating DIR. Fails with a message in `error`.
LogicalResult writeKernelFiles(const CompiledKernel &kernel,
                               StringRef directory, std::string &error);

//===----------------------------------------------------------------------===//
// One kernel described by parameters (block-attn-compile --kind ...)
//===----------------------------------------------------------------------===//

/// A blockattn kernel described the way block-attn-compile's flags describe
/// it. The function it stands for takes run-time tokens, heads (unless
/// `heads`) and softmax scale, so that one kernel serves every call.
struct KernelDescription {
  /// "forward" or "backward".
  std::string kind = "forward";
  int64_t headDim = 128;
  int64_t blockSize = 64;
  /// "bf16" or "f16".
  std::string dtype = "bf16";
  /// A static head count (of q; k and v have heads / group); 0: heads are
  /// a run-time size.
  int64_t heads = 0;
  /// Query heads per k/v head (grouped-query attention); 1: none.
  int64_t group = 1;
  /// "none", "half_split" or "interleaved".
  std::string rotary = "none";
  /// With rotary: an i32 positions tensor [T] (default: a token's index
  /// inside its sequence).
  bool positions = false;
  /// With rotary: rotate v as well.
  bool rotateV = false;
  /// With rotary: compute the angles from this base in the kernel instead
  /// of reading cos/sin tables.
  std::optional<double> rotaryTheta;
  /// The kernel's symbol; empty: getKernelName.
  std::string name;
};

/// Checks what the op verifier cannot phrase in terms of the description
/// (the mode names, the rotary options that need a rotary mode, theta, an
/// even head_dim for rotary); the verifier checks the rest when the source
/// is parsed. Fails with a message in `error`.
LogicalResult verifyKernelDescription(const KernelDescription &description,
                                      std::string &error);

/// description.name, or by default
/// blockattn_<kind>_d<D>_b<B>_<dtype>[_g<G>][_<rotary>][_pos][_rv][_theta].
std::string getKernelName(const KernelDescription &description);

/// The MLIR source of the kernel function: one func.func holding one
/// blockattn.forward or blockattn.backward. With rotary the function also
/// takes the f32 tables %cos and %sin [max_position, head_dim/2] (unless
/// rotaryTheta) and with positions the i32 %positions [T].
/// The description must verify.
std::string getKernelSource(const KernelDescription &description);

/// Parses getKernelSource (buffer name "<flags>") into a module, after
/// verifyKernelDescription; null after a diagnostic on `context`.
OwningOpRef<ModuleOp> buildKernelModule(const KernelDescription &description,
                                        MLIRContext *context);

} // namespace mlir::blockattn

#endif // BLOCKATTN_COMPILER_COMPILER_H
