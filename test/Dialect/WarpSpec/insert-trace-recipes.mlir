// RUN: block-attn-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_90a rotary-warpgroup=off}),warpspec-allocate-tmem,warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,warpspec-insert-trace{records=4})' | FileCheck %s --check-prefix=SM90
// RUN: block-attn-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_100a}),warpspec-allocate-tmem,warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,warpspec-insert-trace{records=4})' | FileCheck %s --check-prefix=SM100

// warpspec-insert-trace on the recipes' kernels: the half-split rotary
// forward on sm_90a with the consumers' rotation (rotary-warpgroup=off; the
// rotation before the first MMA of a tile), and the
// plain backward on sm_100a (the MMA warp's waits name their channels; the
// end anchor follows warp 0's tensor-memory teardown).

// SM90-LABEL: func.func @blockattn_forward_d128_b64_bf16_half_split_trace(
// SM90: warpspec.partition "compute"
// SM90: %[[LANE:.*]] = warpspec.trace_lane
// SM90: warpspec.trace %[[LANE]] tile_begin value(
// SM90-NEXT: warpspec.slot_buffers
// SM90-NEXT: warpspec.trace %[[LANE]] rotate_begin
// SM90-NEXT: warpspec.rotate
// SM90-NEXT: warpspec.trace %[[LANE]] rotate_end
// SM90-NEXT: warpspec.trace %[[LANE]] mma_begin
// SM90-NEXT: warpspec.mma

// SM100-LABEL: func.func @blockattn_backward_d128_b64_bf16_trace(
// SM100: warpspec.partition "load"
// SM100: warpspec.tmem_release %{{.*}} dealloc
// SM100-NEXT: warpspec.trace_anchor %{{.*}} end
// SM100: warpspec.partition "mma"
// SM100: %[[MMA:.*]] = warpspec.trace_lane
// SM100: warpspec.trace %[[MMA]] wait_begin detail(1)
// SM100-NEXT: warpspec.wait_empty
// SM100: warpspec.trace %[[MMA]] mma_begin
// SM100-NEXT: warpspec.mma_async
// SM100-NEXT: warpspec.trace %[[MMA]] mma_end
// SM100: warpspec.partition "softmax"
// SM100: %[[SOFTMAX:.*]] = warpspec.trace_lane
// SM100: warpspec.trace %[[SOFTMAX]] tmem_begin
// SM100-NEXT: warpspec.tmem_load
// SM100-NEXT: warpspec.trace %[[SOFTMAX]] tmem_end
// SM100: warpspec.trace %[[SOFTMAX]] softmax_begin

  func.func @blockattn_forward_d128_b64_bf16_half_split(%arg0: memref<?x?x128xbf16>, %arg1: memref<?x?x128xbf16>, %arg2: memref<?x?x128xbf16>, %arg3: memref<?x?x128xbf16>, %arg4: memref<?xi32>, %arg5: f32, %arg6: memref<?x64xf32>, %arg7: memref<?x64xf32>) {
    blockattn.forward q(%arg0 : memref<?x?x128xbf16>) k(%arg1 : memref<?x?x128xbf16>) v(%arg2 : memref<?x?x128xbf16>) o(%arg3 : memref<?x?x128xbf16>) cu_seqlens(%arg4 : memref<?xi32>) scale(%arg5 : f32) rotary(%arg6, %arg7 : memref<?x64xf32>, memref<?x64xf32>) {element_type = bf16, head_dim = 128 : i64, rotary = #blockattn.rotary<half_split>}
    return
  }
// -----
  func.func @blockattn_backward_d128_b64_bf16(%arg0: memref<?x?x128xbf16>, %arg1: memref<?x?x128xbf16>, %arg2: memref<?x?x128xbf16>, %arg3: memref<?x?x128xbf16>, %arg4: memref<?x?x128xbf16>, %arg5: memref<?x?x128xbf16>, %arg6: memref<?x?x128xbf16>, %arg7: memref<?xi32>, %arg8: f32) {
    blockattn.backward q(%arg0 : memref<?x?x128xbf16>) k(%arg1 : memref<?x?x128xbf16>) v(%arg2 : memref<?x?x128xbf16>) do(%arg3 : memref<?x?x128xbf16>) dq(%arg4 : memref<?x?x128xbf16>) dk(%arg5 : memref<?x?x128xbf16>) dv(%arg6 : memref<?x?x128xbf16>) cu_seqlens(%arg7 : memref<?xi32>) scale(%arg8 : f32) {element_type = bf16, head_dim = 128 : i64}
    return
  }
