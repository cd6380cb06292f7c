// RUN: block-attn-opt %s --pass-pipeline='builtin.module(warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm,canonicalize,cse)' | FileCheck %s

// warpspec.tma_load's pair_halves into buffers of 32-column pieces
// (chunk_cols = 32; the half-split rotary backward's pair-complete chunks,
// docs/head-dims.md): chunk i of the buffer is two boxes of the ordinary
// map (32-column box, 64-byte swizzle), columns 32 (j + i) into piece 2 i
// and their partners D / 2 = 128 on into piece 2 i + 1, j = col_offset / 64,
// the pieces 4 KiB apart. The l2_prefetch acquire prefetches the same boxes
// (warpspec.tma_prefetch takes the load's col_offset and pair_halves).

// CHECK-LABEL: llvm.func @pair_halves(
// CHECK-SAME: %[[QMAP:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}
// CHECK-DAG: %[[C32:.+]] = llvm.mlir.constant(32 : i32) : i32
// CHECK-DAG: %[[C160:.+]] = llvm.mlir.constant(160 : i32) : i32
// CHECK-DAG: %[[C64:.+]] = llvm.mlir.constant(64 : i32) : i32
// CHECK-DAG: %[[C192:.+]] = llvm.mlir.constant(192 : i32) : i32
// CHECK-DAG: %[[C96:.+]] = llvm.mlir.constant(96 : i32) : i32
// CHECK-DAG: %[[C224:.+]] = llvm.mlir.constant(224 : i32) : i32
// The prefetches come before the wait for the slot.
// CHECK: nvvm.cp.async.bulk.tensor.prefetch %[[QMAP]], box[%[[C32]], %[[HEAD:[0-9]+]], %[[ROW:[0-9]+]]]
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.prefetch %[[QMAP]], box[%[[C160]], %[[HEAD]], %[[ROW]]]
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.prefetch %[[QMAP]], box[%[[C64]], %[[HEAD]], %[[ROW]]]
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.prefetch %[[QMAP]], box[%[[C192]], %[[HEAD]], %[[ROW]]]
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.prefetch %[[QMAP]], box[%[[C96]], %[[HEAD]], %[[ROW]]]
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.prefetch %[[QMAP]], box[%[[C224]], %[[HEAD]], %[[ROW]]]
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.expect_tx
// CHECK: %[[X:[0-9]+]] = llvm.getelementptr %{{[0-9]+}}[%{{[0-9]+}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK: %[[Y:[0-9]+]] = llvm.getelementptr %{{[0-9]+}}[%{{[0-9]+}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK: %[[X0:[0-9]+]] = llvm.addrspacecast %[[X]]
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global %[[X0]], %[[QMAP]], %{{[0-9]+}}, box[%[[C32]], %[[HEAD]], %[[ROW]]]
// CHECK-NEXT: %[[X1P:[0-9]+]] = llvm.getelementptr %[[X]][4096]
// CHECK-NEXT: %[[X1:[0-9]+]] = llvm.addrspacecast %[[X1P]]
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global %[[X1]], %[[QMAP]], %{{[0-9]+}}, box[%[[C160]], %[[HEAD]], %[[ROW]]]
// CHECK-NEXT: %[[Y0:[0-9]+]] = llvm.addrspacecast %[[Y]]
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global %[[Y0]], %[[QMAP]], %{{[0-9]+}}, box[%[[C64]], %[[HEAD]], %[[ROW]]]
// CHECK: llvm.getelementptr %[[Y]][4096]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{[0-9]+}}, %[[QMAP]], %{{[0-9]+}}, box[%[[C192]], %[[HEAD]], %[[ROW]]]
// CHECK: llvm.getelementptr %[[Y]][8192]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{[0-9]+}}, %[[QMAP]], %{{[0-9]+}}, box[%[[C96]], %[[HEAD]], %[[ROW]]]
// CHECK: llvm.getelementptr %[[Y]][12288]
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{[0-9]+}}, %[[QMAP]], %{{[0-9]+}}, box[%[[C224]], %[[HEAD]], %[[ROW]]]
// CHECK-NOT: nvvm.cp.async.bulk.tensor

!act = memref<?x4x256xbf16>
!a = !warpspec.channel<[64x64xbf16 chunk_cols = 32, 64x128xbf16 chunk_cols = 32], smem>
func.func @pair_halves(%q: !act, %cu: memref<?xi32>) {
  warpspec.kernel chip(sm_90a) {
    %n = arith.constant 4 : index
    %a = warpspec.channel "a" depth(1) : !a
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32> heads(%n) tokens(%n) block_size(64) {
        %a_slot, %x, %y = warpspec.acquire %a {l2_prefetch} : !a
        warpspec.tma_load %q[%row, %head] into %x {col_offset = 64 : i64, pair_halves} : !act, !warpspec.buffer<64x64xbf16, smem, chunk_cols = 32>
        warpspec.tma_load %q[%row, %head] into %y {col_offset = 128 : i64, pair_halves} : !act, !warpspec.buffer<64x128xbf16, smem, chunk_cols = 32>
        warpspec.commit %a_slot tile(%row, %rows, %head)
      }
      warpspec.close %a : !a
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %a (%a_slot1, %row, %rows, %head, %x, %y) : !a {
        warpspec.release %a_slot1
      }
    }
  }
  return
}
