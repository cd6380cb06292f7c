//===- Pipelines.h - the blockattn-to-ptx pipeline --------------*- C++ -*-===//
//
// The whole compiler as one pass pipeline, so that block-attn-opt, the
// block-attn-compile driver and embedding compilers run the same passes:
//
//   func.func(blockattn-warp-specialize{chip})   blockattn -> warpspec
//   warpspec-allocate-tmem                        tensor-memory plan (sm_100a)
//   warpspec-allocate-smem                        shared-memory plan
//   warpspec-lower-protocol                       ring positions in SSA,
//                                                 mbarrier-level slot ops
//   warpspec-dispatch-partitions                  warp ranges, registers,
//                                                 replica/thread indices
//   warpspec-insert-trace{records}                with trace-records > 0:
//                                                 pipeline events recorded
//   convert-warpspec-to-nvvm{chip}                warpspec -> NVVM/LLVM
//   convert-nvvm-to-llvm, reconcile-unrealized-casts
//   gpu-module-to-binary{format}                  PTX (isa) or cubin (bin)
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_PIPELINES_PIPELINES_H
#define BLOCKATTN_PIPELINES_PIPELINES_H

#include "blockattn/Dialect/BlockAttn/Transforms/PlanEnums.h"
#include "blockattn/Dialect/WarpSpec/IR/WarpSpecEnums.h"

#include "mlir/Pass/PassOptions.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir {
class OpPassManager;
namespace blockattn {

struct BlockAttnToPtxOptions
    : public PassPipelineOptions<BlockAttnToPtxOptions> {
  /// blockattn-warp-specialize's options, the chip and the tuning options,
  /// declared once in its Passes.td: chip, num-stages, num-consumers,
  /// p-operand, schedule, ctas-per-sm, tiles-per-cta, o-store, l2-prefetch.
#define BLOCKATTN_PASS_OPTION(TYPE, NAME, ARGUMENT, ...)                       \
  PassOptions::Option<TYPE> NAME{*this, ARGUMENT, __VA_ARGS__};
#define GEN_PASS_OPTION_LIST_BLOCKATTNWARPSPECIALIZEPASS
#include "blockattn/Dialect/BlockAttn/Transforms/PassOptionList.h.inc"

  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("What gpu-module-to-binary produces: isa (PTX), bin "
                     "(cubin, runs ptxas), llvm (bitcode), or none (stop at "
                     "the NVVM/LLVM dialects)"),
      llvm::cl::init("isa")};
  PassOptions::Option<std::string> ptxFeatures{
      *this, "ptx-features",
      llvm::cl::desc("PTX ISA version for the NVPTX backend: +ptx80 or "
                     "newer on sm_90a, +ptx86 or newer on sm_100a, up to "
                     "+ptx90"),
      llvm::cl::init("+ptx86")};
  PassOptions::Option<int64_t> traceRecords{
      *this, "trace-records",
      llvm::cl::desc("Trace the kernels (warpspec-insert-trace): each warp "
                     "role records up to this many pipeline events per CTA "
                     "(a power of two from 4 to 65536) into a trace buffer "
                     "parameter, and the kernel's name gets the suffix "
                     "_trace; 0 (the default) leaves the kernels untouched"),
      llvm::cl::init(0)};
};

/// Checks the options no pass checks before LLVM's NVPTX backend would abort
/// on them: `format` must name what gpu-module-to-binary produces (isa,
/// bin, fatbin, llvm, or their long names assembly, binary, fatbinary,
/// offloading) or be none, and `ptx-features` must be one PTX ISA version
/// (+ptx80 ... +ptx88, +ptx90) that the chip supports: PTX ISA 8.0 or newer
/// for sm_90a, 8.6 or newer for sm_100a. The chip and the other options
/// that take one of a few values are enums, checked when they are parsed;
/// the counts are checked by blockattn-warp-specialize, with the location of
/// the op they concern. Writes the reason to `errorStream` on failure.
LogicalResult verifyBlockAttnToPtxOptions(const BlockAttnToPtxOptions &options,
                                          raw_ostream &errorStream);

/// Adds the blockattn-to-ptx passes to `pm` (anchored on a builtin.module).
/// Fails, adding nothing, on options verifyBlockAttnToPtxOptions rejects.
LogicalResult
buildBlockAttnToPtxPipeline(OpPassManager &pm,
                            const BlockAttnToPtxOptions &options,
                            raw_ostream &errorStream = llvm::errs());

/// Registers `blockattn-to-ptx` with the global pass registry. A textual
/// pipeline with bad options fails to parse (mlir-opt exits with 1).
void registerBlockAttnPipelines();

} // namespace blockattn
} // namespace mlir

#endif // BLOCKATTN_PIPELINES_PIPELINES_H
