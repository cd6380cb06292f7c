// RUN: block-attn-opt %s --warpspec-insert-trace=records=8 | FileCheck %s
// RUN: block-attn-opt %s | FileCheck %s --check-prefix=UNTRACED

// warpspec-insert-trace on the seed forward (sm_90a, chunked), as
// warpspec-dispatch-partitions leaves it. The function takes the trace
// buffer and is renamed, the kernel gets trace_records, each partition a
// lane (and warp 0's the end anchor, the kernel the start anchor), and the waits, arrivals, copies, MMAs,
// softmax and store of each tile are bracketed by trace events. Without the
// pass, nothing of it.

// UNTRACED-NOT: trace

// CHECK-LABEL: func.func @blockattn_forward_d128_b64_bf16_trace(
// CHECK-SAME: %[[TRACE:[a-z0-9]+]]: memref<?xi64> {blockattn.name = "trace"})
// CHECK: warpspec.kernel chip(sm_90a) attributes {{{.*}}trace_records = 8 : i64}

// The start anchor, in the kernel before its partitions (the barrier that
// releases them follows it once lowered).
// CHECK-NOT: warpspec.partition
// CHECK: warpspec.trace_anchor %[[TRACE]] start : memref<?xi64>
// CHECK-NEXT: warpspec.partition "load"

// The load partition: its lane, a tile, the close, the end anchor.
// CHECK: %[[REPLICA:[a-z0-9_]+]], %[[THREAD:[a-z0-9_]+]] = warpspec.partition_index
// CHECK-NEXT: %[[LOAD:.*]] = warpspec.trace_lane %[[TRACE]][%[[REPLICA]]] thread(%[[THREAD]]) : memref<?xi64>
// CHECK-NOT: trace_anchor
// CHECK: warpspec.tile_loop (%[[ROW:[^,]*]],
// CHECK-NEXT: warpspec.trace %[[LOAD]] tile_begin value(%[[ROW]])
// CHECK-NEXT: warpspec.ring_slot
// CHECK-NEXT: warpspec.trace %[[LOAD]] wait_begin
// CHECK-NEXT: warpspec.wait_empty
// CHECK-NEXT: warpspec.trace %[[LOAD]] wait_end
// CHECK-NEXT: warpspec.expect_tx
// CHECK-NEXT: warpspec.slot_buffers
// CHECK-NEXT: warpspec.tma_load
// CHECK-NEXT: warpspec.trace %[[LOAD]] copy
// CHECK-NEXT: warpspec.tma_load
// CHECK-NEXT: warpspec.trace %[[LOAD]] copy
// CHECK-NEXT: warpspec.tma_load
// CHECK-NEXT: warpspec.trace %[[LOAD]] copy
// CHECK-NEXT: warpspec.publish
// CHECK-NEXT: warpspec.trace %[[LOAD]] arrive
// CHECK-NEXT: arith.constant
// CHECK-NEXT: arith.addi
// CHECK-NEXT: warpspec.trace %[[LOAD]] tile_end
// CHECK-NEXT: warpspec.yield
// CHECK: warpspec.trace %[[LOAD]] wait_begin
// CHECK-NEXT: warpspec.wait_empty
// CHECK-NEXT: warpspec.trace %[[LOAD]] wait_end
// CHECK-NEXT: warpspec.publish_close
// CHECK-NEXT: warpspec.trace %[[LOAD]] arrive
// CHECK: warpspec.trace_anchor %[[TRACE]] end : memref<?xi64>
// CHECK-NEXT: }

// The compute partition: its lane (no anchors), the wait on the full
// barrier in the consume loop's test, and the tile: two MMAs around the
// softmax, the slot given back, the store.
// CHECK: warpspec.partition "compute"
// CHECK: %[[REPLICA2:[a-z0-9_]+]], %[[THREAD2:[a-z0-9_]+]] = warpspec.partition_index
// CHECK-NEXT: %[[COMPUTE:.*]] = warpspec.trace_lane %[[TRACE]][%[[REPLICA2]]] thread(%[[THREAD2]]) : memref<?xi64>
// CHECK-NOT: trace_anchor
// CHECK: scf.while
// CHECK-NEXT: warpspec.ring_slot
// CHECK-NEXT: warpspec.trace %[[COMPUTE]] wait_begin
// CHECK-NEXT: warpspec.wait_full
// CHECK-NEXT: warpspec.trace %[[COMPUTE]] wait_end
// CHECK: } do {
// CHECK-NEXT: ^bb0(%[[TROW:[^:]*]]: i32,
// CHECK-NEXT: warpspec.trace %[[COMPUTE]] tile_begin value(%[[TROW]])
// CHECK-NEXT: warpspec.slot_buffers
// CHECK-NEXT: warpspec.trace %[[COMPUTE]] mma_begin
// CHECK-NEXT: warpspec.mma
// CHECK-NEXT: warpspec.trace %[[COMPUTE]] mma_end
// CHECK-NEXT: warpspec.trace %[[COMPUTE]] softmax_begin
// CHECK-NEXT: warpspec.softmax
// CHECK-NEXT: warpspec.trace %[[COMPUTE]] softmax_end
// CHECK-NEXT: warpspec.trace %[[COMPUTE]] mma_begin
// CHECK-NEXT: warpspec.mma
// CHECK-NEXT: warpspec.trace %[[COMPUTE]] mma_end
// CHECK-NEXT: warpspec.arrive_empty
// CHECK-NEXT: warpspec.trace %[[COMPUTE]] arrive
// CHECK-NEXT: warpspec.trace %[[COMPUTE]] store_begin
// CHECK-NEXT: warpspec.store
// CHECK-NEXT: warpspec.trace %[[COMPUTE]] store_end
// CHECK-NEXT: arith.constant
// CHECK-NEXT: arith.addi
// CHECK-NEXT: warpspec.trace %[[COMPUTE]] tile_end
// CHECK-NEXT: scf.yield
// CHECK-NOT: warpspec.trace
// CHECK: return

module {
  func.func @blockattn_forward_d128_b64_bf16(%arg0: memref<?x?x128xbf16> {blockattn.name = "q"}, %arg1: memref<?x?x128xbf16> {blockattn.name = "k"}, %arg2: memref<?x?x128xbf16> {blockattn.name = "v"}, %arg3: memref<?x?x128xbf16> {blockattn.name = "o"}, %arg4: memref<?xi32> {blockattn.name = "cu_seqlens"}, %arg5: f32 {blockattn.name = "softmax_scale"}) {
    warpspec.kernel chip("sm_90a") attributes {ctas_per_sm = 2 : i64, info = {block_size = 64 : i64, element_type = bf16, head_dim = 128 : i64, kind = "forward", rotary = "none"}, smem_bytes = 115696 : i64, tiles_per_cta = 4 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %dim = memref.dim %arg0, %c0 : memref<?x?x128xbf16>
      %dim_0 = memref.dim %arg0, %c1 : memref<?x?x128xbf16>
      %0 = warpspec.channel "qkv" depth(2) {barrier_offset = 114688 : i64, buffer_offset = 0 : i64, info_offset = 114720 : i64, slot_stride = 49152 : i64} : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
      warpspec.partition "load" role(load) warps(4) regs(40) first_warp(0) barrier_base(1) {
        warpspec.set_max_registers decrease 40
        %replica, %thread = warpspec.partition_index
        warpspec.single_thread %thread {
          %c0_i32 = arith.constant 0 : i32
          %1 = warpspec.tile_loop (%arg6, %arg7, %arg8) in %arg4 : memref<?xi32> heads(%dim_0) tokens(%dim) block_size(64) contiguous iter_args(%arg9 = %c0_i32) -> (i32) {
            %stage_1, %phase_2 = warpspec.ring_slot %0[%arg9] : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
            warpspec.wait_empty %0[%stage_1] phase(%phase_2) : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
            warpspec.expect_tx %0[%stage_1] bytes(49152) : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
            %3:3 = warpspec.slot_buffers %0[%stage_1] : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
            warpspec.tma_load %arg0[%arg6, %arg8] into %3#0 : memref<?x?x128xbf16>, <64x128xbf16, smem>
            warpspec.tma_load %arg1[%arg6, %arg8] into %3#1 : memref<?x?x128xbf16>, <64x128xbf16, smem>
            warpspec.tma_load %arg2[%arg6, %arg8] into %3#2 : memref<?x?x128xbf16>, <64x128xbf16, smem>
            warpspec.publish %0[%stage_1] tile(%arg6, %arg7, %arg8) : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
            %c1_i32_3 = arith.constant 1 : i32
            %4 = arith.addi %arg9, %c1_i32_3 : i32
            warpspec.yield %4 : i32
          }
          %stage, %phase = warpspec.ring_slot %0[%1] : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
          warpspec.wait_empty %0[%stage] phase(%phase) : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
          warpspec.publish_close %0[%stage] : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
          %c1_i32 = arith.constant 1 : i32
          %2 = arith.addi %1, %c1_i32 : i32
        }
      }
      warpspec.partition "compute" role(compute) warps(4) regs(216) first_warp(4) barrier_base(2) {
        warpspec.set_max_registers increase 216
        %replica, %thread = warpspec.partition_index
        %1 = warpspec.scratch {offset = 98304 : i64, replica_stride = 16384 : i64} : <64x128xbf16, smem>
        %2:6 = scf.while (%arg6 = %replica) : (i32) -> (i32, i32, i32, i32, i32, i32) {
          %stage, %phase = warpspec.ring_slot %0[%arg6] : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
          warpspec.wait_full %0[%stage] phase(%phase) : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
          %row, %rows, %head, %position = warpspec.read_tile %0[%stage] : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
          %c0_i32 = arith.constant 0 : i32
          %3 = arith.cmpi sge, %rows, %c0_i32 : i32
          scf.condition(%3) %row, %rows, %head, %position, %stage, %arg6 : i32, i32, i32, i32, i32, i32
        } do {
        ^bb0(%arg6: i32, %arg7: i32, %arg8: i32, %arg9: i32, %arg10: i32, %arg11: i32):
          %3:3 = warpspec.slot_buffers %0[%arg10] : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
          %4 = warpspec.mma %3#0, %3#1 {transpose_b} : !warpspec.buffer<64x128xbf16, smem>, <64x128xbf16, smem> -> <64x64xf32>
          %probs, %row_sums = warpspec.softmax %4 valid_cols(%arg7) scale(%arg5) : <64x64xf32> -> <64x64xbf16>, <64xf32>
          %5 = warpspec.mma %probs, %3#2 : !warpspec.acc<64x64xbf16>, <64x128xbf16, smem> -> <64x128xf32>
          warpspec.arrive_empty %0[%arg10] : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
          warpspec.store %5 to %arg3[%arg6, %arg8] rows(%arg7) divide_by(%row_sums) via(%1) bulk : <64x128xf32>, memref<?x?x128xbf16>, !warpspec.rows<64xf32>, !warpspec.buffer<64x128xbf16, smem>
          %c1_i32 = arith.constant 1 : i32
          %6 = arith.addi %arg11, %c1_i32 : i32
          scf.yield %6 : i32
        }
        warpspec.single_thread %thread {
          warpspec.wait_bulk_stores
        }
      }
    }
    return
  }
}

