// RUN: block-attn-opt %s --pass-pipeline='builtin.module(warpspec-allocate-smem,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --implicit-check-not=warpspec. --implicit-check-not="llvm.store %{{[0-9]+}}, %{{[0-9]+}} {alignment = 4 : i64} : i32, !llvm.ptr<3>"

// warpspec.write and warpspec.store's staging with {stmatrix}: a 64x64
// 16-bit tile (16 packed pairs a thread) leaves in four stmatrix.x4, four
// consecutive pairs each, instead of sixteen 4-byte st.shared. Lane l gives
// the address of row (l % 8) + 8 ((l / 8) % 2) of its warp's 16 rows
// (warp * 16 from the thread index), 16-byte unit (2j + l / 16) XOR the
// row's swizzle phase (row % 8 at 128 bytes a row): one XOR per even unit
// 0, 2, 4, 6 with the lane's part (l / 16) XOR phase.

!tile = !warpspec.buffer<64x64xbf16, smem>
!s = !warpspec.acc<64x64xf32>
!o = memref<?x4x64xbf16>

// CHECK-LABEL: llvm.func @stmatrix_writes(
// The scores' registers (the mma's result, then its pinned copy), then the
// lanes' row addresses.
// CHECK: llvm.extractvalue %{{[0-9]+}}[31]
// CHECK: llvm.extractvalue %{{[0-9]+}}[31]
// CHECK-NEXT: llvm.mlir.constant(5 : i32) : i32
// CHECK-NEXT: %[[WARP:[0-9]+]] = llvm.lshr %{{[0-9]+}}, %{{[0-9]+}} : i32
// CHECK-NEXT: llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: llvm.mlir.constant(3 : i32) : i32
// CHECK-NEXT: %[[L8:[0-9]+]] = llvm.lshr %[[LANE:[0-9]+]], %{{[0-9]+}} : i32
// CHECK-NEXT: %[[HALFBIT:[0-9]+]] = llvm.and %[[L8]], %{{[0-9]+}} : i32
// CHECK-NEXT: llvm.mlir.constant(8 : i32) : i32
// CHECK-NEXT: %[[HALF:[0-9]+]] = llvm.mul %[[HALFBIT]], %{{[0-9]+}} : i32
// CHECK-NEXT: llvm.mlir.constant(7 : i32) : i32
// CHECK-NEXT: %[[IN8:[0-9]+]] = llvm.and %[[LANE]], %{{[0-9]+}} : i32
// CHECK-NEXT: llvm.mlir.constant(16 : i32) : i32
// CHECK-NEXT: %[[W16:[0-9]+]] = llvm.mul %[[WARP]], %{{[0-9]+}} : i32
// CHECK-NEXT: %[[R0:[0-9]+]] = llvm.add %[[W16]], %[[IN8]] : i32
// CHECK-NEXT: %[[ROW:[0-9]+]] = llvm.add %[[R0]], %[[HALF]] : i32
// CHECK-NEXT: llvm.mlir.constant(7 : i32) : i32
// CHECK-NEXT: %[[PHASE:[0-9]+]] = llvm.and %[[ROW]], %{{[0-9]+}} : i32
// CHECK-NEXT: llvm.mlir.constant(4 : i32) : i32
// CHECK-NEXT: %[[HI:[0-9]+]] = llvm.lshr %[[LANE]], %{{[0-9]+}} : i32
// CHECK-NEXT: %[[Q:[0-9]+]] = llvm.xor %[[HI]], %[[PHASE]] : i32
// CHECK-NEXT: llvm.mlir.constant(128 : i32) : i32
// CHECK-NEXT: %[[ROWSTART:[0-9]+]] = llvm.mul %[[ROW]], %{{[0-9]+}} : i32
// CHECK: llvm.xor %[[Q]], %{{[0-9]+}} : i32
// CHECK: llvm.xor %[[Q]], %{{[0-9]+}} : i32
// CHECK: llvm.xor %[[Q]], %{{[0-9]+}} : i32
// CHECK: llvm.xor %[[Q]], %{{[0-9]+}} : i32
// CHECK-COUNT-4: nvvm.stmatrix %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : !llvm.ptr<3>, i32, i32, i32, i32
// The write's proxy fence and barrier, as with st.shared.
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// The staged store: the same four.
// CHECK-COUNT-4: nvvm.stmatrix
func.func @stmatrix_writes(%o: !o {blockattn.name = "o"}) {
  warpspec.kernel chip("sm_90a") {
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      %q = warpspec.scratch : !tile
      %pbuf = warpspec.scratch : !tile
      %stage = warpspec.scratch : !tile
      %row = arith.constant 0 : i32
      %rows = arith.constant 64 : i32
      %s = warpspec.mma %q, %q {transpose_b} : !tile, !tile -> !s
      warpspec.write %s, %pbuf {stmatrix} : !s, !tile
      warpspec.store %s to %o[%row, %row] rows(%rows) via(%stage) {stmatrix}
          : !s, !o, !tile
    }
  }
  return
}
