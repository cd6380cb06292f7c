//===- WarpSpecToNVVM.h - warpspec ops to NVVM patterns ---------*- C++ -*-===//
//
// The patterns of convert-warpspec-to-nvvm, one per op, grouped by concern
// (one source file each). They lower the ops inside a warpspec.kernel that
// the pass's pre-step has moved into its llvm.func (see
// lib/Conversion/WarpSpecToNVVM/KernelBuilder.h for what a pattern may read
// from around its op).
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_CONVERSION_WARPSPECTONVVM_WARPSPECTONVVM_H
#define BLOCKATTN_CONVERSION_WARPSPECTONVVM_WARPSPECTONVVM_H

#include "blockattn/Conversion/WarpSpecToNVVM/TargetInfo.h"

namespace mlir {
class LLVMTypeConverter;
class RewritePatternSet;

namespace blockattn {

/// Adds the conversions of the warpspec types to `converter`: a
/// `!warpspec.acc` becomes its registers per thread (f32, or i32 pairs of
/// 16-bit elements), a `!warpspec.rows` the thread's row values, a
/// `!warpspec.buffer` its shared-memory pointer or tensor-memory address, a
/// `!warpspec.trace` its lane's base pointer and the per-thread variable
/// that counts its records.
/// Memrefs and channels stay: their ops read what they bind to. Types.cpp.
void populateWarpSpecToNVVMTypeConversions(LLVMTypeConverter &converter);

/// Scalars (arith, memref.dim) and the partitions' dispatch ops
/// (set_max_registers, scratch, wait_bulk_stores; the pass lowers
/// partition_index and single_thread with the partitions, after the
/// patterns). KernelPatterns.cpp.
void populateWarpSpecKernelToNVVMPatterns(LLVMTypeConverter &converter,
                                          const TargetInfo &target,
                                          RewritePatternSet &patterns);
/// warpspec.tile_loop (the persistent schedule) and scf.while with carried
/// values. Schedule.cpp.
void populateWarpSpecScheduleToNVVMPatterns(LLVMTypeConverter &converter,
                                            const TargetInfo &target,
                                            RewritePatternSet &patterns);
/// The lowered channel protocol on mbarriers, and TMA. Channels.cpp.
void populateWarpSpecChannelsToNVVMPatterns(LLVMTypeConverter &converter,
                                            const TargetInfo &target,
                                            RewritePatternSet &patterns);
/// softmax, softmax_grad, store, write. TileMath.cpp.
void populateWarpSpecTileMathToNVVMPatterns(LLVMTypeConverter &converter,
                                            const TargetInfo &target,
                                            RewritePatternSet &patterns);
/// warpspec.mma (wgmma, sm_90a). Hopper.cpp.
void populateWarpSpecHopperToNVVMPatterns(LLVMTypeConverter &converter,
                                          const TargetInfo &target,
                                          RewritePatternSet &patterns);
/// Tensor memory and tcgen05 (sm_100a). Blackwell.cpp.
void populateWarpSpecBlackwellToNVVMPatterns(LLVMTypeConverter &converter,
                                             const TargetInfo &target,
                                             RewritePatternSet &patterns);
/// rotate, rotate_tile, rotary_angles. Rotary.cpp.
void populateWarpSpecRotaryToNVVMPatterns(LLVMTypeConverter &converter,
                                          const TargetInfo &target,
                                          RewritePatternSet &patterns);

/// trace_anchor, trace_lane, trace (a traced kernel's records). Trace.cpp.
void populateWarpSpecTraceToNVVMPatterns(LLVMTypeConverter &converter,
                                         const TargetInfo &target,
                                         RewritePatternSet &patterns);

/// All of the above.
void populateWarpSpecToNVVMPatterns(LLVMTypeConverter &converter,
                                    const TargetInfo &target,
                                    RewritePatternSet &patterns);

} // namespace blockattn
} // namespace mlir

#endif // BLOCKATTN_CONVERSION_WARPSPECTONVVM_WARPSPECTONVVM_H
