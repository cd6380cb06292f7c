// RUN: block-attn-opt %s --pass-pipeline='builtin.module(warpspec-allocate-smem,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --implicit-check-not=warpspec.

// Hopper.cpp's pattern, from hand-written warpspec IR: warpspec.mma on
// sm_90a. Each chain is fenced, issued as K/16 wgmma.mma_async steps (the
// first overwrites D), committed and waited for, and its accumulators are
// pinned by an empty inline asm.

!tile = !warpspec.buffer<64x64xbf16, smem>
!s = !warpspec.acc<64x64xf32>
!p = !warpspec.acc<64x64xbf16>
!o = memref<?x4x64xbf16>

// A and B from shared memory, B transposed (S = Q K^T): K-major A is `row`,
// K-major B is `col`; descriptors are the fixed bits | (address >> 4) &
// 0x3FFF, the K-major 128-byte swizzle's fixed bits being 1 << 62 |
// 64 << 32 | 1 << 16.
// CHECK-LABEL: llvm.func @hopper(
// CHECK: nvvm.setmaxregister
// CHECK: %[[B:[0-9]+]] = llvm.ptrtoint %{{[0-9]+}} : !llvm.ptr<3> to i32
// CHECK-NEXT: %[[A:[0-9]+]] = llvm.ptrtoint %{{[0-9]+}} : !llvm.ptr<3> to i32
// CHECK-NEXT: nvvm.wgmma.fence.aligned
// CHECK-NEXT: %[[ACC:[0-9]+]] = llvm.mlir.undef : !llvm.struct<(f32,
// CHECK: llvm.add %[[A]], %{{[0-9]+}} : i32
// CHECK: %[[FIXED:[0-9]+]] = llvm.mlir.constant(4611686293305360384 : i64) : i64
// CHECK-NEXT: %[[DESCA:[0-9]+]] = llvm.or %{{[0-9]+}}, %[[FIXED]] : i64
// CHECK: llvm.add %[[B]], %{{[0-9]+}} : i32
// CHECK: %[[DESCB:[0-9]+]] = llvm.or
// CHECK-NEXT: %[[D0:[0-9]+]] = nvvm.wgmma.mma_async %[[DESCA]], %[[DESCB]], %[[ACC]], <m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK: %[[D1:[0-9]+]] = nvvm.wgmma.mma_async %{{[0-9]+}}, %{{[0-9]+}}, %[[D0]], <m = 64, n = 64, k = 16>, D[<f32>, <one>]
// CHECK: %[[D2:[0-9]+]] = nvvm.wgmma.mma_async %{{[0-9]+}}, %{{[0-9]+}}, %[[D1]], {{.*}} D[<f32>, <one>]
// CHECK: nvvm.wgmma.mma_async %{{[0-9]+}}, %{{[0-9]+}}, %[[D2]], {{.*}} D[<f32>, <one>]
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "", "=f,

// A stored K x M (transpose_a) is MN-major: `col` for A, and B (not
// transposed) MN-major `row`.
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}} D[<f32>, <zero>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}} D[<f32>, <one>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned

// A from registers (P V with P where softmax left it): the 16-bit tile's
// packed pairs are pinned first, then each k-step is the register-A PTX
// form (NVVM's op takes A as a descriptor only), 4 registers of A each.
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "", "=r,=r,
// CHECK-NEXT: llvm.extractvalue
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $69, 0;\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0, {{.*}}}, {$64, $65, $66, $67}, $68, p, 1, 1, 1;\0A}\0A"
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
func.func @hopper(%o: !o {blockattn.name = "o"},
                  %scale: f32 {blockattn.name = "scale"}) {
  warpspec.kernel chip("sm_90a") {
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      %a = warpspec.scratch : !tile
      %b = warpspec.scratch : !tile
      %row = arith.constant 0 : i32
      %s = warpspec.mma %a, %b {transpose_b} : !tile, !tile -> !s
      %t = warpspec.mma %a, %b {transpose_a} : !tile, !tile -> !s
      %p, %l = warpspec.softmax %s valid_cols(%row) scale(%scale)
          : !s -> !p, !warpspec.rows<64xf32>
      %out = warpspec.mma %p, %b : !p, !tile -> !s
      warpspec.store %out to %o[%row, %row] rows(%row) : !s, !o
      warpspec.store %t to %o[%row, %row] rows(%row) : !s, !o
    }
  }
  return
}
