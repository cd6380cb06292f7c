// RUN: block-attn-opt %s --pass-pipeline='builtin.module(warpspec-allocate-smem,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --implicit-check-not=warpspec.

// warpspec.load_positions and warpspec.rotary_angles ... row_positions
// (Rotary.cpp): the positions of the thread's two rows (the wgmma
// accumulator layout: rows r and r + 8) are read where load_positions is,
// each token clamped into the positions tensor (umin with its last index);
// rotary_angles reads no positions, only clamps the given ones into the
// tables (smin with the last table row, smax with 0) and reads the angles
// at them.
// CHECK-LABEL: llvm.func @row_positions(
// CHECK-SAME: %[[POSITIONS:arg[0-9]+]]: !llvm.ptr<1>, %[[NPOS:arg[0-9]+]]: i32)
// CHECK: nvvm.setmaxregister decrease 232
// CHECK: %[[LAST:[0-9]+]] = llvm.sub %[[NPOS]], %{{[0-9]+}} : i32
// CHECK-NEXT: %[[T0:[0-9]+]] = llvm.intr.umin(%{{[0-9]+}}, %[[LAST]]) : (i32, i32) -> i32
// CHECK-NEXT: %[[A0:[0-9]+]] = llvm.getelementptr %[[POSITIONS]][%[[T0]]] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
// CHECK-NEXT: %[[P0:[0-9]+]] = llvm.load %[[A0]] {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// CHECK: llvm.intr.umin
// CHECK: %[[P1:[0-9]+]] = llvm.load %{{[0-9]+}} {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// The product between the two ops, then the angles at the positions read.
// CHECK: nvvm.wgmma.mma_async
// CHECK-NOT: !llvm.ptr<1> -> i32
// CHECK: %[[C0:[0-9]+]] = llvm.intr.smin(%[[P0]], %{{[0-9]+}}) : (i32, i32) -> i32
// CHECK: llvm.intr.smax(%[[C0]], %{{[0-9]+}}) : (i32, i32) -> i32
// CHECK: llvm.load %{{[0-9]+}} {alignment = 8 : i64} : !llvm.ptr<1> -> vector<2xf32>
// CHECK-NOT: !llvm.ptr<1> -> i32
// CHECK: llvm.intr.smin(%[[P1]], %{{[0-9]+}}) : (i32, i32) -> i32
// CHECK-NOT: !llvm.ptr<1> -> i32
// CHECK: llvm.fneg
!tile = !warpspec.buffer<64x64xbf16, smem>
!tab = memref<?x32xf32>
!s = !warpspec.acc<64x64xf32>
!o = memref<?x4x64xbf16>
func.func @row_positions(%o: !o {blockattn.name = "o"},
                         %cos: !tab {blockattn.name = "cos"},
                         %sin: !tab {blockattn.name = "sin"},
                         %positions: memref<?xi32> {blockattn.name = "positions"}) {
  warpspec.kernel chip("sm_90a") {
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      %a = warpspec.scratch : !tile
      %b = warpspec.scratch : !tile
      %row = arith.constant 0 : i32
      %rows = arith.constant 64 : i32
      %pos = arith.constant 0 : i32
      %read = warpspec.load_positions %positions[%row]
          : memref<?xi32> -> !warpspec.rows<64xi32>
      %s = warpspec.mma %a, %b {transpose_b} : !tile, !tile -> !s
      %angles = warpspec.rotary_angles rows(%rows) row(%row) position(%pos)
          cos(%cos, %sin : !tab, !tab)
          row_positions(%read : !warpspec.rows<64xi32>) {interleaved = false}
          : !s
      %r = warpspec.rotate_tile %s rows(%rows) row(%row) position(%pos) angles(%angles : !s) {interleaved = false, inverse} : !s -> !s
      warpspec.store %r to %o[%row, %row] rows(%rows) : !s, !o
    }
  }
  return
}
