//===- Passes.td - block-attn conversions ------------------*- tablegen -*-===//

#ifndef BLOCKATTN_CONVERSION_PASSES_TD
#define BLOCKATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// WarpSpecToNVVM
//===----------------------------------------------------------------------===//

def ConvertWarpSpecToNVVMPass : Pass<"convert-warpspec-to-nvvm", "ModuleOp"> {
  let summary = "Lower warpspec kernels to NVVM/LLVM kernels in gpu.modules";
  let description = [{
    Turns every function whose body is a `warpspec.kernel` into a
    `gpu.module` of the same name holding one `llvm.func` kernel (NVVM and
    LLVM dialect ops only) with a `#nvvm.target` for the kernel's chip:

    - the kernel's parameters follow from how it uses the function's
      arguments (tensor maps for TMA-loaded tensors, pointers and strides for
      stored ones, lengths, scalars) and are described, with the launch
      configuration, in the `blockattn.manifest` attribute of the kernel;
    - a prologue initializes every channel's mbarriers (thread 0,
      `fence.mbarrier_init`, CTA barrier), then warps dispatch to their
      partition by warp index and rebalance registers with `setmaxnreg`;
    - channels become full/empty mbarrier rings with phase tracking, TMA
      loads `cp.async.bulk.tensor` with expect-tx, the tile loop the
      persistent jagged schedule;
    - `warpspec.mma` becomes `wgmma.mma_async` on sm_90a (register A operand
      through `llvm.inline_asm`, which MLIR 22's NVVM op lacks), tile math
      and masked stores plain LLVM/NVVM arithmetic.

    #### Input invariant
    `warpspec-allocate-smem` has placed every channel and scratch buffer.

    #### Output IR
    `gpu.module @k [#nvvm.target<chip = ...>] { llvm.func @k(...)
    attributes {nvvm.kernel, nvvm.reqntid, nvvm.minctasm, blockattn.manifest} }`
    (no `nvvm.maxnreg`: ptxas derives the launch register cap from
    `reqntid` and `minctasm`, the CTAs per SM); `convert-nvvm-to-llvm` and
    `gpu-module-to-binary` take it from there.
  }];
  let dependentDialects = ["LLVM::LLVMDialect", "NVVM::NVVMDialect",
                           "gpu::GPUDialect", "scf::SCFDialect",
                           "cf::ControlFlowDialect"];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"\"",
           "Expected chip (sm_90a or sm_100a); empty takes each kernel's own">,
    Option<"features", "ptx-features", "std::string", /*default=*/"\"+ptx86\"",
           "PTX ISA version for the NVPTX backend (+ptx86 is the first with "
           "tcgen05; ptxas 13.0 accepts up to +ptx90)">,
  ];
}

#endif // BLOCKATTN_CONVERSION_PASSES_TD
