// RUN: block-attn-opt %s --pass-pipeline='builtin.module(warpspec-allocate-smem,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --implicit-check-not=warpspec.

// TileMath.cpp's patterns, from hand-written warpspec IR: softmax,
// softmax_grad, write and store of 64x64 register tiles (32 f32 registers
// per thread in the wgmma accumulator layout: two row slots, whose rows are
// shared by the 4 lanes of a quad). The scores come from a warpspec.mma
// (Hopper.cpp), whose registers are pinned by an empty inline asm.

!tile = !warpspec.buffer<64x64xbf16, smem>
!s = !warpspec.acc<64x64xf32>
!p = !warpspec.acc<64x64xbf16>
!o = memref<?x4x64xbf16>

// CHECK-LABEL: llvm.func @tile_math(
// CHECK-SAME: %[[O:arg0]]: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64, %[[SCALE:arg3]]: f32)
// CHECK: %[[VALID:[0-9]+]] = llvm.mlir.constant(10 : i32) : i32
// CHECK: %[[SCORES:[0-9]+]] = llvm.inline_asm has_side_effects asm_dialect = att ""

// softmax: columns at or past valid_cols (10) are -inf; the row maxima are
// reduced over the quad with butterfly shuffles (lane masks 1, then 2).
// CHECK: %[[S0:[0-9]+]] = llvm.extractvalue %[[SCORES]][0]
// CHECK: %[[NEGINF:[0-9]+]] = llvm.mlir.constant(0xFF800000 : f32) : f32
// CHECK: %[[IN:[0-9]+]] = llvm.icmp "slt" %{{[0-9]+}}, %[[VALID]] : i32
// CHECK-NEXT: llvm.select %[[IN]], %[[S0]], %[[NEGINF]] : i1, f32
// CHECK: llvm.mlir.constant(31 : i32) : i32
// CHECK-NEXT: %[[M1:[0-9]+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[ALL:[0-9]+]] = llvm.mlir.constant(-1 : i32) : i32
// CHECK-NEXT: %[[X1:[0-9]+]] = nvvm.shfl.sync  bfly %[[ALL]], %[[MAX:[0-9]+]], %[[M1]], %{{[0-9]+}} : f32 -> f32
// CHECK-NEXT: %[[MAX1:[0-9]+]] = llvm.intr.maxnum(%[[MAX]], %[[X1]]) : (f32, f32) -> f32
// CHECK-NEXT: llvm.mlir.constant(31 : i32) : i32
// CHECK-NEXT: %[[M2:[0-9]+]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: %[[ALL2:[0-9]+]] = llvm.mlir.constant(-1 : i32) : i32
// CHECK-NEXT: %[[X2:[0-9]+]] = nvvm.shfl.sync  bfly %[[ALL2]], %[[MAX1]], %[[M2]], %{{[0-9]+}} : f32 -> f32
// CHECK-NEXT: llvm.intr.maxnum(%[[MAX1]], %[[X2]]) : (f32, f32) -> f32
// exp(scale (s - m)) = exp2(s k - m k), k = scale log2(e): one FMA and one
// ex2 per element, flushing subnormal results (ex2.approx.ftz: one MUFU.EX2,
// where ex2.approx.f32 is four instructions).
// CHECK: %[[LOG2E:[0-9]+]] = llvm.mlir.constant(1.44269502 : f32) : f32
// CHECK-NEXT: %[[K:[0-9]+]] = llvm.fmul %[[SCALE]], %[[LOG2E]] : f32
// CHECK: %[[X:[0-9]+]] = llvm.intr.fma(%{{[0-9]+}}, %[[K]], %{{[0-9]+}}) : (f32, f32, f32) -> f32
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[X]]) : (f32) -> f32
// The bf16 probabilities: packed pairs, register 2i in the low half.
// CHECK: %[[PAIR:[0-9]+]] = llvm.fptrunc %{{[0-9]+}} : vector<2xf32> to vector<2xbf16>
// CHECK-NEXT: llvm.bitcast %[[PAIR]] : vector<2xbf16> to i32

// write: 16 packed pairs into the swizzled tile, then the proxy fence and
// the replica's named barrier (id 1, 128 threads).
// CHECK-COUNT-16: llvm.store %{{[0-9]+}}, %{{[0-9]+}} {alignment = 4 : i64} : i32, !llvm.ptr<3>
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: %[[ONE:[0-9]+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[ID:[0-9]+]] = llvm.add %[[ONE]], %{{[0-9]+}} : i32
// CHECK-NEXT: %[[THREADS:[0-9]+]] = llvm.mlir.constant(128 : i32) : i32
// CHECK-NEXT: nvvm.barrier id = %[[ID]] number_of_threads = %[[THREADS]]

// softmax_grad: D = sum_j P dP over the quad, then P (scale dP - scale D):
// -scale D once a row, one FMA and one multiply per element.
// CHECK: llvm.intr.fma(%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}) : (f32, f32, f32) -> f32
// CHECK: nvvm.shfl.sync  bfly
// CHECK: %[[SD:[0-9]+]] = llvm.fmul %{{[0-9]+}}, %[[SCALE]] : f32
// CHECK-NEXT: %[[NSD:[0-9]+]] = llvm.fneg %[[SD]] : f32
// CHECK: %[[C:[0-9]+]] = llvm.intr.fma(%{{[0-9]+}}, %[[SCALE]], %[[NSD]]) : (f32, f32, f32) -> f32
// CHECK-NEXT: llvm.fmul %{{[0-9]+}}, %[[C]] : f32
// CHECK-COUNT-16: llvm.store %{{[0-9]+}}, %{{[0-9]+}} {alignment = 4 : i64} : i32, !llvm.ptr<3>

// store with divide_by: one reciprocal per row slot, then per row slot a
// guard on the valid rows and 4-byte stores of scaled, packed pairs.
// CHECK: %[[RCP:[0-9]+]] = llvm.fdiv %{{[0-9]+}}, %{{[0-9]+}} : f32
// CHECK: llvm.fdiv
// CHECK: %[[ROWOK:[0-9]+]] = llvm.icmp "slt" %{{[0-9]+}}, %{{[0-9]+}} : i32
// CHECK-NEXT: llvm.cond_br %[[ROWOK]]
// CHECK: llvm.fmul %{{[0-9]+}}, %[[RCP]] : f32
// CHECK: %[[DST:[0-9]+]] = llvm.getelementptr %[[O]][%{{[0-9]+}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, bf16
// CHECK: llvm.store %{{[0-9]+}}, %[[DST]] {alignment = 4 : i64} : i32, !llvm.ptr<1>
func.func @tile_math(%o: !o {blockattn.name = "o"},
                     %scale: f32 {blockattn.name = "scale"}) {
  warpspec.kernel chip("sm_90a") {
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      %q = warpspec.scratch : !tile
      %pbuf = warpspec.scratch : !tile
      %row = arith.constant 0 : i32
      %cols = arith.constant 10 : i32
      %s = warpspec.mma %q, %q {transpose_b} : !tile, !tile -> !s
      %p, %l = warpspec.softmax %s valid_cols(%cols) scale(%scale)
          : !s -> !p, !warpspec.rows<64xf32>
      warpspec.write %p, %pbuf : !p, !tile
      %ds = warpspec.softmax_grad %s, %s scale(%scale) : !s, !s -> !p
      warpspec.write %ds, %pbuf : !p, !tile
      warpspec.store %s to %o[%row, %row] rows(%cols) divide_by(%l)
          : !s, !o, !warpspec.rows<64xf32>
    }
  }
  return
}
