// RUN: block-attn-opt %s --pass-pipeline='builtin.module(warpspec-allocate-smem,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --implicit-check-not=warpspec.

// TileMath.cpp's per-row pieces of causal attention and the log-sum-exp
// (issue 21), from hand-written warpspec IR (tile-math.mlir has the rest):
// the causal mask (column <= row, and'ed with the valid columns), the
// softmax's log-sum-exp (ln 2 (log2 L + m k), lg2.approx through its
// intrinsic), warpspec.store_rows (the quad's lane 0 stores its two rows'
// values, f32 at lse[head * stride + row]), warpspec.load_rows (rows past
// the tile read row 0 and take 0), softmax_grad's dlse (D - g), and the
// causal mask's run-time row offset (dynamic_row_offset).

!tile = !warpspec.buffer<64x64xbf16, smem>
!s = !warpspec.acc<64x64xf32>
!p = !warpspec.acc<64x64xbf16>
!rows = !warpspec.rows<64xf32>
!lse = memref<4x?xf32>

// CHECK-LABEL: llvm.func @causal_lse(
// CHECK-SAME: %[[LSE:arg0]]: !llvm.ptr<1>, %[[STRIDE:arg1]]: i64, %[[G:arg2]]: !llvm.ptr<1>, %{{.*}}: i64, %[[SCALE:arg4]]: f32)

// softmax causal: per register, column < valid_cols and column <= its row.
// CHECK: %[[IN:[0-9]+]] = llvm.icmp "slt" %[[COL:[0-9]+]], %{{[0-9]+}} : i32
// CHECK-NEXT: %[[CAUSAL:[0-9]+]] = llvm.icmp "sle" %[[COL]], %{{[0-9]+}} : i32
// CHECK-NEXT: %[[KEEP:[0-9]+]] = llvm.and %[[IN]], %[[CAUSAL]] : i1
// CHECK-NEXT: llvm.select %[[KEEP]], %{{[0-9]+}}, %{{[0-9]+}} : i1, f32

// the log-sum-exp of each row slot: lg2 of the sum, plus max * k, times ln 2.
// CHECK: %[[K:[0-9]+]] = llvm.fmul %[[SCALE]], %{{[0-9]+}} : f32
// CHECK: %[[LG:[0-9]+]] = llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"(%{{[0-9]+}}) : (f32) -> f32
// CHECK-NEXT: %[[L2:[0-9]+]] = llvm.intr.fma(%{{[0-9]+}}, %[[K]], %[[LG]]) : (f32, f32, f32) -> f32
// CHECK-NEXT: %[[LN2:[0-9]+]] = llvm.mlir.constant(0.693147182 : f32) : f32
// CHECK-NEXT: llvm.fmul %[[L2]], %[[LN2]] : f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.lg2.approx.f"

// store_rows: lane & 3 == 0 and a valid row stores one f32 per row slot.
// CHECK: %[[THREE:[0-9]+]] = llvm.mlir.constant(3 : i32) : i32
// CHECK-NEXT: %[[LANEBITS:[0-9]+]] = llvm.and %{{[0-9]+}}, %[[THREE]] : i32
// CHECK: %[[LEADER:[0-9]+]] = llvm.icmp "eq" %[[LANEBITS]], %{{[0-9]+}} : i32
// CHECK: %[[VALIDROW:[0-9]+]] = llvm.icmp "slt" %{{[0-9]+}}, %{{[0-9]+}} : i32
// CHECK-NEXT: %[[OWNS:[0-9]+]] = llvm.and %[[LEADER]], %[[VALIDROW]] : i1
// CHECK-NEXT: llvm.cond_br %[[OWNS]]
// CHECK: llvm.mul %{{[0-9]+}}, %[[STRIDE]] : i64
// CHECK: %[[PTR:[0-9]+]] = llvm.getelementptr %[[LSE]][%{{[0-9]+}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK-NEXT: llvm.store %{{[0-9]+}}, %[[PTR]] {alignment = 4 : i64} : f32, !llvm.ptr<1>
// CHECK: llvm.store %{{[0-9]+}}, %{{[0-9]+}} {alignment = 4 : i64} : f32, !llvm.ptr<1>

// load_rows: the row clamped to 0 past the tile, then 0 taken there.
// CHECK: %[[OK:[0-9]+]] = llvm.icmp "slt" %{{[0-9]+}}, %{{[0-9]+}} : i32
// CHECK-NEXT: %[[ZERO:[0-9]+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: llvm.select %[[OK]], %{{[0-9]+}}, %[[ZERO]] : i1, i32
// CHECK: %[[GPTR:[0-9]+]] = llvm.getelementptr %[[G]][%{{[0-9]+}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK-NEXT: %[[LOADED:[0-9]+]] = llvm.load %[[GPTR]] {alignment = 4 : i64} : !llvm.ptr<1> -> f32
// CHECK-NEXT: %[[FZERO:[0-9]+]] = llvm.mlir.constant(0.000000e+00 : f32) : f32
// CHECK-NEXT: %[[G0:[0-9]+]] = llvm.select %[[OK]], %[[LOADED]], %[[FZERO]] : i1, f32

// softmax_grad with dlse: D - g per row slot, then P (scale dP - scale (D - g)).
// CHECK: nvvm.shfl.sync  bfly
// CHECK: %[[DG:[0-9]+]] = llvm.fsub %{{[0-9]+}}, %[[G0]] : f32
// CHECK: %[[SDG:[0-9]+]] = llvm.fmul %[[DG]], %{{[a-z0-9]+}} : f32
// CHECK-NEXT: %[[NSDG:[0-9]+]] = llvm.fneg %[[SDG]] : f32
// CHECK: llvm.intr.fma(%{{[0-9]+}}, %{{[a-z0-9]+}}, %[[NSDG]]) : (f32, f32, f32) -> f32
func.func @causal_lse(%lse: !lse {blockattn.name = "lse"},
                      %dlse: memref<?x?xf32> {blockattn.name = "dlse"},
                      %scale: f32 {blockattn.name = "scale"}) {
  warpspec.kernel chip("sm_90a") {
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      %q = warpspec.scratch : !tile
      %row = arith.constant 0 : i32
      %cols = arith.constant 10 : i32
      %s = warpspec.mma %q, %q {transpose_b} : !tile, !tile -> !s
      %p, %l, %x = warpspec.softmax %s valid_cols(%cols) scale(%scale) causal
          : !s -> !p, !rows, !rows
      warpspec.store_rows %x, %lse[%row, %row] rows(%cols) : !rows, !lse
      %g = warpspec.load_rows %dlse[%row, %row] rows(%cols) : memref<?x?xf32> -> !rows
      %ds = warpspec.softmax_grad %s, %s scale(%scale) dlse(%g : !rows) : !s, !s -> !p
      warpspec.write %ds, %q : !p, !tile
    }
  }
  return
}

// softmax causal dynamic_row_offset(%off) (a sm_100a softmax replica's query
// half): the i32 offset is added to each row slot's index, then compared
// with the column as without it. %off here is 32 * replica_id.
// CHECK-LABEL: llvm.func @causal_dynamic_row_offset(
// CHECK: llvm.mlir.constant(10 : i32) : i32
// CHECK-NEXT: %[[C32:[0-9]+]] = llvm.mlir.constant(32 : i32) : i32
// CHECK-NEXT: %[[OFF:[0-9]+]] = llvm.mul %{{[0-9]+}}, %[[C32]] : i32
// CHECK: %[[ROW0:[0-9]+]] = llvm.add %{{[0-9]+}}, %[[OFF]] : i32
// CHECK: llvm.add %{{[0-9]+}}, %[[OFF]] : i32
// CHECK: %[[IN:[0-9]+]] = llvm.icmp "slt" %[[COL:[0-9]+]], %{{[0-9]+}} : i32
// CHECK-NEXT: %[[CAUSAL:[0-9]+]] = llvm.icmp "sle" %[[COL]], %[[ROW0]] : i32
// CHECK-NEXT: %[[KEEP:[0-9]+]] = llvm.and %[[IN]], %[[CAUSAL]] : i1
// CHECK-NEXT: llvm.select %[[KEEP]], %{{[0-9]+}}, %{{[0-9]+}} : i1, f32
func.func @causal_dynamic_row_offset(%scale: f32 {blockattn.name = "scale"}) {
  warpspec.kernel chip("sm_90a") {
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      %q = warpspec.scratch : !tile
      %cols = arith.constant 10 : i32
      %c32 = arith.constant 32 : i32
      %r = warpspec.replica_id
      %off = arith.muli %r, %c32 : i32
      %s = warpspec.mma %q, %q {transpose_b} : !tile, !tile -> !s
      %p, %l = warpspec.softmax %s valid_cols(%cols) scale(%scale) causal dynamic_row_offset(%off)
          : !s -> !p, !rows
      warpspec.write %p, %q : !p, !tile
    }
  }
  return
}
