// RUN: block-attn-opt %s --pass-pipeline='builtin.module(warpspec-allocate-smem,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --implicit-check-not=warpspec.

// warpspec.store of a register tile without `via` (each thread stores its
// fragment's pairs), with and without `pinned_steps` (and `wide_offsets`): 64 columns in the
// wgmma accumulator layout, 8 pairs a row slot at columns colBase + 8 k.

!tile = !warpspec.buffer<64x64xbf16, smem>
!s = !warpspec.acc<64x64xf32>
!o = memref<?x4x256xbf16>

// pinned_steps: the thread's column base (2 (lane mod 4)) and each row slot's
// row are pinned (empty inline asm) at the store. With wide_offsets the column
// offsets are added to the widened base in 64 bits, so that they become the stores'
// immediate offsets: added in 32 bits to the opaque base, LLVM could not
// widen them, and each took a register through the store (session 26: the
// sm_90a grouped block-128 interleaved backward at head dim 256 with
// positions and rotate_v spilled for them at G >= 4).
// CHECK-LABEL: llvm.func @pinned_store(
// CHECK: %[[COL:[0-9]+]] = llvm.inline_asm has_side_effects asm_dialect = att "", "=r,0" %{{[0-9]+}} : (i32) -> i32
// CHECK: %[[ROW:[0-9]+]] = llvm.inline_asm has_side_effects asm_dialect = att "", "=r,0" %{{[0-9]+}} : (i32) -> i32
// CHECK-NEXT: llvm.icmp "slt" %[[ROW]], %{{[0-9]+}} : i32
// CHECK: %[[ROWBASE:[0-9]+]] = llvm.add %{{[0-9]+}}, %{{[0-9]+}} : i64
// CHECK-NEXT: %[[ZERO:[0-9]+]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT: %[[COL0:[0-9]+]] = llvm.zext %[[COL]] : i32 to i64
// CHECK-NEXT: %[[AT0:[0-9]+]] = llvm.add %[[COL0]], %[[ZERO]] : i64
// CHECK-NEXT: %[[E0:[0-9]+]] = llvm.add %[[ROWBASE]], %[[AT0]] : i64
// CHECK-NEXT: llvm.getelementptr %arg0[%[[E0]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, bf16
// CHECK: %[[EIGHT:[0-9]+]] = llvm.mlir.constant(8 : i64) : i64
// CHECK-NEXT: %[[COL1:[0-9]+]] = llvm.zext %[[COL]] : i32 to i64
// CHECK-NEXT: %[[AT1:[0-9]+]] = llvm.add %[[COL1]], %[[EIGHT]] : i64
// CHECK-NEXT: %[[E1:[0-9]+]] = llvm.add %[[ROWBASE]], %[[AT1]] : i64
// CHECK-NEXT: llvm.getelementptr %arg0[%[[E1]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, bf16
// CHECK-COUNT-6: llvm.add %{{[0-9]+}}, %{{[0-9]+}} : i64
// CHECK-NOT: llvm.add %[[COL]]
// CHECK: llvm.return
func.func @pinned_store(%o: !o {blockattn.name = "o"}) {
  warpspec.kernel chip("sm_90a") {
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      %q = warpspec.scratch : !tile
      %row = arith.constant 0 : i32
      %rows = arith.constant 10 : i32
      %s = warpspec.mma %q, %q {transpose_b} : !tile, !tile -> !s
      warpspec.store %s to %o[%row, %row] rows(%rows)
          {col_offset = 64 : i64, pinned_steps, wide_offsets} : !s, !o
    }
  }
  return
}

// pinned_steps without wide_offsets: pinned as above, the column offsets
// added to the pinned base in 32 bits, then widened (the half-split
// rotate_v accumulate warpgroups at head dim 192 spill with 64-bit ones).
// CHECK-LABEL: llvm.func @pinned_narrow_store(
// CHECK: %[[NCOL:[0-9]+]] = llvm.inline_asm has_side_effects asm_dialect = att "", "=r,0" %{{[0-9]+}} : (i32) -> i32
// CHECK: %[[NEIGHT:[0-9]+]] = llvm.mlir.constant(8 : i32) : i32
// CHECK-NEXT: %[[NAT:[0-9]+]] = llvm.add %[[NCOL]], %[[NEIGHT]] : i32
// CHECK-NEXT: llvm.zext %[[NAT]] : i32 to i64
// CHECK: llvm.return
func.func @pinned_narrow_store(%o: !o {blockattn.name = "o"}) {
  warpspec.kernel chip("sm_90a") {
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      %q = warpspec.scratch : !tile
      %row = arith.constant 0 : i32
      %rows = arith.constant 10 : i32
      %s = warpspec.mma %q, %q {transpose_b} : !tile, !tile -> !s
      warpspec.store %s to %o[%row, %row] rows(%rows)
          {col_offset = 64 : i64, pinned_steps} : !s, !o
    }
  }
  return
}

// Without pinned_steps nothing is pinned, and the column offsets are added
// in 32 bits (LLVM widens them itself: it knows the base is small).
// CHECK-LABEL: llvm.func @unpinned_store(
// CHECK-NOT: "=r,0"
// CHECK: %[[EIGHT32:[0-9]+]] = llvm.mlir.constant(8 : i32) : i32
// CHECK-NEXT: %[[AT:[0-9]+]] = llvm.add %{{[0-9]+}}, %[[EIGHT32]] : i32
// CHECK-NEXT: llvm.zext %[[AT]] : i32 to i64
// CHECK-NOT: "=r,0"
// CHECK: llvm.return
func.func @unpinned_store(%o: !o {blockattn.name = "o"}) {
  warpspec.kernel chip("sm_90a") {
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      %q = warpspec.scratch : !tile
      %row = arith.constant 0 : i32
      %rows = arith.constant 10 : i32
      %s = warpspec.mma %q, %q {transpose_b} : !tile, !tile -> !s
      warpspec.store %s to %o[%row, %row] rows(%rows)
          {col_offset = 64 : i64} : !s, !o
    }
  }
  return
}
