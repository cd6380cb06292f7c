// RUN: block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a positions-load=producer" | FileCheck %s
// RUN: block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a positions-load=producer" | block-attn-opt | FileCheck %s
// RUN: block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a positions-load=readers" | FileCheck %s --check-prefix=READERS
// RUN: block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a" | FileCheck %s --check-prefix=AUTO
// RUN: block-attn-opt %s --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_90a positions-load=producer}),warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --check-prefix=NVVM

// positions-load=producer: the sm_90a rotary kernels with a positions tensor
// and a rotary warpgroup at block size 64 get each tile's positions in the
// load ring's slot (a 64xi32 buffer after the tiles), copied there by the
// producer (warpspec.copy_positions); the rotary warpgroup's rotation and
// the backward consumer's angles read them from the slot, so no warpgroup
// but the producer reads the positions tensor (docs/rotary.md). With
// positions-load=readers each reads the tensor itself. auto (AUTO) picks
// the producer for the backward at head dim 128 and with rotate_v, readers
// for the backward at 64 without rotate_v (its consumers read the positions
// as the tile arrives and the tables after the softmax) and the forwards
// without rotate_v (docs/performance-notes.md, run 19).

// CHECK-LABEL: func.func @blockattn_backward_d128_b64_bf16_interleaved_pos(
// CHECK-SAME: %[[POSITIONS:arg11]]: memref<?xi32> {blockattn.name = "positions"}, %{{[a-z0-9_]+}}: memref<2xi32> {blockattn.name = "schedule"})
// CHECK: %[[RING:.*]] = warpspec.channel "qkvdo" depth(3) : <[64x128xbf16, 64x128xbf16, 64x128xbf16, 64x128xbf16, 64xi32], smem>
// CHECK: warpspec.partition "load"
// CHECK: warpspec.tile_loop (%[[ROW:[a-z0-9_]+]],
// CHECK: %{{.*}}, %[[BUF:.*]]:5 = warpspec.acquire %[[RING]]
// CHECK-COUNT-4: warpspec.tma_load
// CHECK-NEXT: warpspec.copy_positions %[[POSITIONS]][%[[ROW]]] into %[[BUF]]#4 : memref<?xi32>, <64xi32, smem>
// CHECK-NEXT: warpspec.commit
// CHECK: warpspec.partition "rotary"
// CHECK: warpspec.consume %[[RING]] ({{.*}}, %[[RP:[a-z0-9_]+]]) :
// CHECK: warpspec.rotate({{.*}} positions(%[[RP]] : !warpspec.buffer<64xi32, smem>) {interleaved = true}
// CHECK: warpspec.partition "compute"
// CHECK: warpspec.consume %[[RING]] ({{.*}}, %[[CP:[a-z0-9_]+]]) :
// CHECK: warpspec.rotary_angles {{.*}} positions(%[[CP]] : !warpspec.buffer<64xi32, smem>) {interleaved = true}
// CHECK-NOT: memref<?xi32>)
// CHECK: return

// READERS-LABEL: func.func @blockattn_backward_d128_b64_bf16_interleaved_pos(
// READERS: warpspec.channel "qkvdo" depth(3) : <[64x128xbf16, 64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
// READERS-NOT: copy_positions
// READERS: warpspec.rotate({{.*}} positions(%arg11 : memref<?xi32>)
// READERS: warpspec.rotary_angles {{.*}} positions(%arg11 : memref<?xi32>)

// AUTO-LABEL: func.func @blockattn_backward_d128_b64_bf16_interleaved_pos(
// AUTO: warpspec.copy_positions
// AUTO-LABEL: func.func @blockattn_backward_d64_b64_bf16_half_split_pos(
// AUTO-NOT: warpspec.copy_positions
// AUTO: warpspec.load_positions %{{.*}} : memref<?xi32> -> <64xi32>
// AUTO-LABEL: func.func @blockattn_forward_d128_b64_bf16_half_split_pos_rv(
// AUTO: warpspec.copy_positions

// At head dim 64 the consumers read the positions as the tile arrives and
// the tables after the softmax (rotary-angles=after-softmax):
// warpspec.load_positions then reads the slot's buffer.
// CHECK-LABEL: func.func @blockattn_backward_d64_b64_bf16_half_split_pos(
// CHECK: warpspec.channel "qkvdo" depth(4) : <[64x64xbf16, 64x64xbf16, 64x64xbf16, 64x64xbf16, 64xi32], smem>
// CHECK: warpspec.copy_positions
// CHECK: warpspec.partition "compute"
// CHECK: warpspec.consume {{.*}}, %[[P64:[a-z0-9_]+]]) :
// CHECK: warpspec.load_positions %[[P64]][%{{.*}}] : !warpspec.buffer<64xi32, smem> -> <64xi32>
// CHECK: warpspec.rotary_angles {{.*}} row_positions(

// The forward: only the rotary warpgroups read positions.
// CHECK-LABEL: func.func @blockattn_forward_d128_b64_bf16_half_split_pos_rv(
// CHECK: warpspec.channel "qkv" depth(4) : <[64x128xbf16, 64x128xbf16, 64x128xbf16, 64xi32], smem>
// CHECK: warpspec.copy_positions
// CHECK: warpspec.partition "rotary" role(rotary) warps(4) regs(104) replicas(2)
// CHECK: warpspec.rotate({{.*}} positions(%{{.*}} : !warpspec.buffer<64xi32, smem>)

// The lowering: the producer's thread copies the 64 positions with 4-byte
// cp.async, each token clamped into the tensor, into the slot's row values
// (apart from its tiles: 256 bytes a slot at rows_offset), then arrives on
// the slot's full barrier once they land; readers load them from shared
// memory.
// NVVM-LABEL: llvm.func @blockattn_backward_d128_b64_bf16_interleaved_pos(
// NVVM-SAME: smem_bytes = 231408 : i64
// NVVM: nvvm.cp.async.bulk.tensor.shared.cluster.global
// NVVM: llvm.intr.umin
// NVVM: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache = ca : !llvm.ptr<3>, !llvm.ptr<1>
// NVVM-COUNT-63: nvvm.cp.async.shared.global
// NVVM-NEXT: llvm.mlir.constant
// NVVM: nvvm.cp.async.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// NVVM: nvvm.mbarrier.arrive
// NVVM: llvm.return

func.func @blockattn_backward_d128_b64_bf16_interleaved_pos(%arg0: memref<?x?x128xbf16>, %arg1: memref<?x?x128xbf16>, %arg2: memref<?x?x128xbf16>, %arg3: memref<?x?x128xbf16>, %arg4: memref<?x?x128xbf16>, %arg5: memref<?x?x128xbf16>, %arg6: memref<?x?x128xbf16>, %arg7: memref<?xi32>, %arg8: f32, %arg9: memref<?x64xf32>, %arg10: memref<?x64xf32>, %arg11: memref<?xi32>) {
  blockattn.backward q(%arg0 : memref<?x?x128xbf16>) k(%arg1 : memref<?x?x128xbf16>) v(%arg2 : memref<?x?x128xbf16>) do(%arg3 : memref<?x?x128xbf16>) dq(%arg4 : memref<?x?x128xbf16>) dk(%arg5 : memref<?x?x128xbf16>) dv(%arg6 : memref<?x?x128xbf16>) cu_seqlens(%arg7 : memref<?xi32>) scale(%arg8 : f32) rotary(%arg9, %arg10 : memref<?x64xf32>, memref<?x64xf32>) positions(%arg11 : memref<?xi32>) {element_type = bf16, head_dim = 128 : i64, rotary = #blockattn.rotary<interleaved>}
  return
}
func.func @blockattn_backward_d64_b64_bf16_half_split_pos(%arg0: memref<?x?x64xbf16>, %arg1: memref<?x?x64xbf16>, %arg2: memref<?x?x64xbf16>, %arg3: memref<?x?x64xbf16>, %arg4: memref<?x?x64xbf16>, %arg5: memref<?x?x64xbf16>, %arg6: memref<?x?x64xbf16>, %arg7: memref<?xi32>, %arg8: f32, %arg9: memref<?x32xf32>, %arg10: memref<?x32xf32>, %arg11: memref<?xi32>) {
  blockattn.backward q(%arg0 : memref<?x?x64xbf16>) k(%arg1 : memref<?x?x64xbf16>) v(%arg2 : memref<?x?x64xbf16>) do(%arg3 : memref<?x?x64xbf16>) dq(%arg4 : memref<?x?x64xbf16>) dk(%arg5 : memref<?x?x64xbf16>) dv(%arg6 : memref<?x?x64xbf16>) cu_seqlens(%arg7 : memref<?xi32>) scale(%arg8 : f32) rotary(%arg9, %arg10 : memref<?x32xf32>, memref<?x32xf32>) positions(%arg11 : memref<?xi32>) {element_type = bf16, head_dim = 64 : i64, rotary = #blockattn.rotary<half_split>}
  return
}
func.func @blockattn_forward_d128_b64_bf16_half_split_pos_rv(%arg0: memref<?x?x128xbf16>, %arg1: memref<?x?x128xbf16>, %arg2: memref<?x?x128xbf16>, %arg3: memref<?x?x128xbf16>, %arg4: memref<?xi32>, %arg5: f32, %arg6: memref<?x64xf32>, %arg7: memref<?x64xf32>, %arg8: memref<?xi32>) {
  blockattn.forward q(%arg0 : memref<?x?x128xbf16>) k(%arg1 : memref<?x?x128xbf16>) v(%arg2 : memref<?x?x128xbf16>) o(%arg3 : memref<?x?x128xbf16>) cu_seqlens(%arg4 : memref<?xi32>) scale(%arg5 : f32) rotary(%arg6, %arg7 : memref<?x64xf32>, memref<?x64xf32>) positions(%arg8 : memref<?xi32>) {element_type = bf16, head_dim = 128 : i64, rotary = #blockattn.rotary<half_split>, rotate_v}
  return
}
