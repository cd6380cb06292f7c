// RUN: block-attn-opt %s --pass-pipeline='builtin.module(warpspec-allocate-smem,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --implicit-check-not=warpspec.

// warpspec.softmax {full_tile_path}: a uniform branch on the tile being
// full (valid_cols >= 64 columns and valid_rows >= 64 rows) to a copy of
// the softmax without the masks' compares and selects; a partial tile takes
// the masked softmax. Both yield P and the row sums to the code after.

!tile = !warpspec.buffer<64x64xbf16, smem>
!s = !warpspec.acc<64x64xf32>
!p = !warpspec.acc<64x64xbf16>

// CHECK-LABEL: llvm.func @full_tile_path(
// CHECK: %[[COLS:[0-9]+]] = llvm.mlir.constant(10 : i32) : i32
// CHECK: %[[ROWS:[0-9]+]] = llvm.mlir.constant(20 : i32) : i32
// CHECK: %[[COLSOK:[0-9]+]] = llvm.icmp "sge" %[[COLS]], %{{[0-9]+}} : i32
// CHECK-NEXT: llvm.mlir.constant(64 : i32) : i32
// CHECK-NEXT: %[[ROWSOK:[0-9]+]] = llvm.icmp "sge" %[[ROWS]], %{{[0-9]+}} : i32
// CHECK-NEXT: %[[FULL:[0-9]+]] = llvm.and %[[COLSOK]], %[[ROWSOK]] : i1
// CHECK-NEXT: llvm.cond_br %[[FULL]], ^[[FAST:bb[0-9]+]], ^[[MASKED:bb[0-9]+]]

// The full tile: row maxima straight from the scores, 32 exponentials, and
// no select before the branch to the join.
// CHECK: ^[[FAST]]:
// CHECK-NOT: llvm.select
// CHECK-COUNT-32: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK-NOT: llvm.select
// CHECK: llvm.br ^[[JOIN:bb[0-9]+]](
// CHECK-SAME: : i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, f32, f32)

// The partial tile: columns at or past valid_cols are -inf, rows at or past
// valid_rows zero.
// CHECK: ^[[MASKED]]:
// CHECK: llvm.icmp "slt" %{{[0-9]+}}, %[[COLS]] : i32
// CHECK-NEXT: llvm.select %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} : i1, f32
// CHECK-COUNT-32: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: llvm.icmp "slt" %{{[0-9]+}}, %[[ROWS]] : i32
// CHECK: llvm.select
// CHECK: llvm.br ^[[JOIN]](
// CHECK: ^[[JOIN]](
// CHECK-COUNT-16: llvm.store %{{[0-9]+}}, %{{[0-9]+}} {alignment = 4 : i64} : i32, !llvm.ptr<3>
func.func @full_tile_path(%scale: f32 {blockattn.name = "scale"}) {
  warpspec.kernel chip("sm_90a") {
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      %q = warpspec.scratch : !tile
      %pbuf = warpspec.scratch : !tile
      %cols = arith.constant 10 : i32
      %rows = arith.constant 20 : i32
      %s = warpspec.mma %q, %q {transpose_b} : !tile, !tile -> !s
      %p, %l = warpspec.softmax %s valid_cols(%cols) valid_rows(%rows)
          scale(%scale) normalize {full_tile_path}
          : !s -> !p, !warpspec.rows<64xf32>
      warpspec.write %p, %pbuf : !p, !tile
    }
  }
  return
}
