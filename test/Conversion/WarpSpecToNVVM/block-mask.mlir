// RUN: block-attn-opt %s | FileCheck %s --check-prefix=ROUND
// RUN: block-attn-opt %s --pass-pipeline='builtin.module(warpspec-allocate-smem,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s

// warpspec.softmax's block(B) (block sizes below the 64-row tile,
// docs/block-sizes.md): after the valid_cols mask, score (i, j) is masked
// unless i / B == j / B. In the wgmma accumulator layout register r holds
// columns 8 (r / 4) + r % 2 + {0, 2, 4, 6}: one 8-column group, so its
// column block is a constant; the row block is a min and a shift per row
// slot (rows 16 w + l / 4 and 8 more; a row past the valid ones takes the
// last valid row's block), and each element is a compare with a constant
// and a select.

!tile = !warpspec.buffer<64x64xbf16, smem>
!s = !warpspec.acc<64x64xf32>
!p = !warpspec.acc<64x64xbf16>

// ROUND-LABEL: func.func @block_16
// ROUND: warpspec.softmax %{{.*}} valid_cols(%{{.*}}) scale(%{{.*}}) block(16) : <64x64xf32> -> <64x64xbf16>, <64xf32>
// ROUND: warpspec.softmax %{{.*}} valid_cols(%{{.*}}) valid_rows(%{{.*}}) scale(%{{.*}}) normalize block(16) : <64x64xf32> -> <64x64xf32>, <64xf32>

// CHECK-LABEL: llvm.func @block_16(
// CHECK: %[[NEGINF:[0-9]+]] = llvm.mlir.constant(0xFF800000 : f32) : f32
// The 32 selects of valid_cols, then the row blocks of the thread's two row
// slots (rows 16 w + l / 4 + {0, 8}, or the last valid row, valid_cols - 1,
// past it): min(row, valid_cols - 1) >> 4.
// CHECK-COUNT-32: llvm.select %{{[0-9]+}}, %{{[0-9]+}}, %[[NEGINF]] : i1, f32
// CHECK-NEXT: %[[ONE:[0-9]+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[LAST:[0-9]+]] = llvm.sub %{{[0-9]+}}, %[[ONE]] : i32
// CHECK-NEXT: %[[OFF0:[0-9]+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: %[[ROW0:[0-9]+]] = llvm.add %{{[0-9]+}}, %[[OFF0]] : i32
// CHECK-NEXT: %[[MIN0:[0-9]+]] = llvm.intr.smin(%[[ROW0]], %[[LAST]]) : (i32, i32) -> i32
// CHECK-NEXT: %[[SHIFT0:[0-9]+]] = llvm.mlir.constant(4 : i32) : i32
// CHECK-NEXT: %[[RB0:[0-9]+]] = llvm.lshr %[[MIN0]], %[[SHIFT0]] : i32
// CHECK-NEXT: %[[OFF1:[0-9]+]] = llvm.mlir.constant(8 : i32) : i32
// CHECK: %[[ROW1:[0-9]+]] = llvm.add %{{[0-9]+}}, %[[OFF1]] : i32
// CHECK-NEXT: %[[MIN1:[0-9]+]] = llvm.intr.smin(%[[ROW1]], %[[LAST]]) : (i32, i32) -> i32
// CHECK-NEXT: %[[SHIFT1:[0-9]+]] = llvm.mlir.constant(4 : i32) : i32
// CHECK-NEXT: %[[RB1:[0-9]+]] = llvm.lshr %[[MIN1]], %[[SHIFT1]] : i32
// Registers 0-7 (columns 0-15) are block 0, registers 0, 1 in row slot 0
// and 2, 3 in row slot 1; no column is computed at run time.
// CHECK-NOT: llvm.lshr
// CHECK: %[[B0:[0-9]+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %[[EQ0:[0-9]+]] = llvm.icmp "eq" %[[RB0]], %[[B0]] : i32
// CHECK-NEXT: llvm.select %[[EQ0]], %{{[0-9]+}}, %[[NEGINF]] : i1, f32
// CHECK-NEXT: llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: llvm.icmp "eq" %[[RB0]], %{{[0-9]+}} : i32
// CHECK-NEXT: llvm.select
// CHECK-NEXT: llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: llvm.icmp "eq" %[[RB1]], %{{[0-9]+}} : i32
// CHECK-NEXT: llvm.select
// CHECK-COUNT-5: llvm.mlir.constant(0 : i32) : i32
// Register 8 (columns 16-23): block 1; register 31 (columns 57-63): block 3.
// CHECK: llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: llvm.icmp "eq" %[[RB0]], %{{[0-9]+}} : i32
// CHECK-COUNT-7: llvm.mlir.constant(1 : i32) : i32
// CHECK-COUNT-8: llvm.mlir.constant(2 : i32) : i32
// CHECK-COUNT-7: llvm.mlir.constant(3 : i32) : i32
// CHECK: %[[B3:[0-9]+]] = llvm.mlir.constant(3 : i32) : i32
// CHECK-NEXT: %[[EQ31:[0-9]+]] = llvm.icmp "eq" %[[RB1]], %[[B3]] : i32
// CHECK-NEXT: llvm.select %[[EQ31]], %{{[0-9]+}}, %[[NEGINF]] : i1, f32
// The row maxima follow.
// CHECK: llvm.intr.maxnum
func.func @block_16(%scale: f32 {blockattn.name = "scale"}) {
  warpspec.kernel chip("sm_90a") {
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      %q = warpspec.scratch : !tile
      %pbuf = warpspec.scratch : !tile
      %cols = arith.constant 10 : i32
      %s = warpspec.mma %q, %q {transpose_b} : !tile, !tile -> !s
      %p, %l = warpspec.softmax %s valid_cols(%cols) scale(%scale) block(16)
          : !s -> !p, !warpspec.rows<64xf32>
      warpspec.write %p, %pbuf : !p, !tile
      %pn, %ln = warpspec.softmax %s valid_cols(%cols) valid_rows(%cols)
          scale(%scale) normalize block(16)
          : !s -> !s, !warpspec.rows<64xf32>
      warpspec.write %pn, %pbuf : !s, !tile
    }
  }
  return
}

// Blocks of 32: a shift by 5, registers 0-15 (columns 0-31) block 0 and
// 16-31 block 1.
// CHECK-LABEL: llvm.func @block_32(
// CHECK: %[[NEGINF32:[0-9]+]] = llvm.mlir.constant(0xFF800000 : f32) : f32
// CHECK-COUNT-32: llvm.select %{{[0-9]+}}, %{{[0-9]+}}, %[[NEGINF32]] : i1, f32
// CHECK-NEXT: llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[LAST32:[0-9]+]] = llvm.sub
// CHECK: llvm.intr.smin(%{{[0-9]+}}, %[[LAST32]]) : (i32, i32) -> i32
// CHECK-NEXT: %[[SHIFT:[0-9]+]] = llvm.mlir.constant(5 : i32) : i32
// CHECK-NEXT: llvm.lshr %{{[0-9]+}}, %[[SHIFT]] : i32
// CHECK: llvm.intr.smin(%{{[0-9]+}}, %[[LAST32]]) : (i32, i32) -> i32
// CHECK-NEXT: %[[SHIFTB:[0-9]+]] = llvm.mlir.constant(5 : i32) : i32
// CHECK-NEXT: llvm.lshr %{{[0-9]+}}, %[[SHIFTB]] : i32
// CHECK-NOT: llvm.lshr
// CHECK-COUNT-16: llvm.mlir.constant(0 : i32) : i32
// CHECK-COUNT-16: llvm.mlir.constant(1 : i32) : i32
// CHECK: llvm.intr.maxnum
func.func @block_32(%scale: f32 {blockattn.name = "scale"}) {
  warpspec.kernel chip("sm_90a") {
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      %q = warpspec.scratch : !tile
      %pbuf = warpspec.scratch : !tile
      %cols = arith.constant 64 : i32
      %s = warpspec.mma %q, %q {transpose_b} : !tile, !tile -> !s
      %p, %l = warpspec.softmax %s valid_cols(%cols) scale(%scale) block(32)
          : !s -> !p, !warpspec.rows<64xf32>
      warpspec.write %p, %pbuf : !p, !tile
    }
  }
  return
}
