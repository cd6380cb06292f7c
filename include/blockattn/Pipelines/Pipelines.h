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
//   convert-warpspec-to-nvvm{chip}                warpspec -> NVVM/LLVM
//   convert-nvvm-to-llvm, reconcile-unrealized-casts
//   gpu-module-to-binary{format}                  PTX (isa) or cubin (bin)
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_PIPELINES_PIPELINES_H
#define BLOCKATTN_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir {
class OpPassManager;
namespace blockattn {

struct BlockAttnToPtxOptions
    : public PassPipelineOptions<BlockAttnToPtxOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("Target GPU: sm_90a or sm_100a"),
      llvm::cl::init("sm_90a")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("What gpu-module-to-binary produces: isa (PTX), bin "
                     "(cubin, runs ptxas), llvm (bitcode), or none (stop at "
                     "the NVVM/LLVM dialects)"),
      llvm::cl::init("isa")};
  PassOptions::Option<int64_t> numStages{
      *this, "num-stages",
      llvm::cl::desc("Ring depth (0: as deep as shared memory allows)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> numConsumers{
      *this, "num-consumers",
      llvm::cl::desc("Hopper: consumer warpgroups (0: the recipe picks)"),
      llvm::cl::init(0)};
  PassOptions::Option<std::string> pOperand{
      *this, "p-operand",
      llvm::cl::desc("Hopper: P for O = P V from 'registers' or 'smem'"),
      llvm::cl::init("registers")};
  PassOptions::Option<std::string> schedule{
      *this, "schedule",
      llvm::cl::desc("Tiles to CTAs: 'auto', 'strided', 'contiguous' or "
                     "'chunked'"),
      llvm::cl::init("auto")};
  PassOptions::Option<int64_t> ctasPerSm{
      *this, "ctas-per-sm",
      llvm::cl::desc("Hopper: CTAs sharing an SM (0: the recipe picks)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> tilesPerCta{
      *this, "tiles-per-cta",
      llvm::cl::desc("Tiles per CTA of a chunked launch (0: the recipe "
                     "picks)"),
      llvm::cl::init(0)};
  PassOptions::Option<std::string> oStore{
      *this, "o-store",
      llvm::cl::desc("Hopper: O stored by 'tma', from 'smem' staging, or "
                     "from 'registers'"),
      llvm::cl::init("tma")};
  PassOptions::Option<std::string> l2Prefetch{
      *this, "l2-prefetch",
      llvm::cl::desc("Prefetch each tile into L2 before waiting for a slot: "
                     "'auto' (the recipe picks), 'on' or 'off'"),
      llvm::cl::init("auto")};
  PassOptions::Option<std::string> ptxFeatures{
      *this, "ptx-features",
      llvm::cl::desc("PTX ISA version for the NVPTX backend: +ptx80 or "
                     "newer on sm_90a, +ptx86 or newer on sm_100a, up to "
                     "+ptx90"),
      llvm::cl::init("+ptx86")};
};

/// Checks the options no pass checks before LLVM's NVPTX backend would abort
/// on them: `format` must name what gpu-module-to-binary produces (isa,
/// bin, fatbin, llvm, or their long names assembly, binary, fatbinary,
/// offloading) or be none, and `ptx-features` must be one PTX ISA version
/// (+ptx80 ... +ptx88, +ptx90) that the chip supports: PTX ISA 8.0 or newer
/// for sm_90a, 8.6 or newer for sm_100a. The chip itself and the tuning
/// options are checked by blockattn-warp-specialize, with the location of
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
