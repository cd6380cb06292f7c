// RUN: block-attn-opt %s --pass-pipeline='builtin.module(warpspec-allocate-smem,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --implicit-check-not=warpspec.

// Tiles 96 columns wide (head dim 96) are three 32-column chunks with the
// 64-byte swizzle (docs/head-dims.md). S = Q K^T reads both K-major with the
// wgmma descriptor bits 0x8000002000010000 (swizzle field 2, SBO 512, LBO
// 16); its 6 k-steps move the start by 0, 32, then one chunk (64 rows x 64
// bytes = 4096) on: 4096, 4128, 8192, 8224. O = P V reads V MN-major with
// 0x8000002001000000 (LBO one chunk, 4096), k-steps of 16 rows x 64 bytes.
// CHECK-LABEL: llvm.func @swizzle_64b(
// CHECK: %[[KMAJOR:[0-9]+]] = llvm.mlir.constant(-9223371899415756800 : i64) : i64
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <zero>]
// CHECK: llvm.mlir.constant(32 : i32) : i32
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>]
// CHECK: llvm.mlir.constant(4096 : i32) : i32
// CHECK: nvvm.wgmma.mma_async
// CHECK: llvm.mlir.constant(4128 : i32) : i32
// CHECK: nvvm.wgmma.mma_async
// CHECK: llvm.mlir.constant(8192 : i32) : i32
// CHECK: nvvm.wgmma.mma_async
// CHECK: llvm.mlir.constant(8224 : i32) : i32
// CHECK: nvvm.wgmma.mma_async
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: llvm.mlir.constant(-9223371899399045120 : i64) : i64
// CHECK: wgmma.mma_async.sync.aligned.m64n96k16.f32.bf16.bf16
// CHECK: llvm.mlir.constant(1024 : i32) : i32
// CHECK: wgmma.mma_async.sync.aligned.m64n96k16.f32.bf16.bf16
// CHECK: llvm.mlir.constant(2048 : i32) : i32
// CHECK: wgmma.mma_async.sync.aligned.m64n96k16.f32.bf16.bf16
// CHECK: llvm.mlir.constant(3072 : i32) : i32
// CHECK: wgmma.mma_async.sync.aligned.m64n96k16.f32.bf16.bf16
// CHECK: nvvm.wgmma.commit.group.sync.aligned

func.func @swizzle_64b(%o: memref<?x4x96xbf16> {blockattn.name = "o"},
                       %scale: f32 {blockattn.name = "scale"}) {
  warpspec.kernel chip("sm_90a") {
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      %a = warpspec.scratch : !warpspec.buffer<64x96xbf16, smem>
      %b = warpspec.scratch : !warpspec.buffer<64x96xbf16, smem>
      %row = arith.constant 0 : i32
      %s = warpspec.mma %a, %b {transpose_b}
          : !warpspec.buffer<64x96xbf16, smem>, !warpspec.buffer<64x96xbf16, smem>
            -> !warpspec.acc<64x64xf32>
      %p, %l = warpspec.softmax %s valid_cols(%row) scale(%scale)
          : !warpspec.acc<64x64xf32> -> !warpspec.acc<64x64xbf16>, !warpspec.rows<64xf32>
      %out = warpspec.mma %p, %b
          : !warpspec.acc<64x64xbf16>, !warpspec.buffer<64x96xbf16, smem>
            -> !warpspec.acc<64x96xf32>
      warpspec.store %out to %o[%row, %row] rows(%row)
          : !warpspec.acc<64x96xf32>, memref<?x4x96xbf16>
    }
  }
  return
}

// warpspec.write of a 64 x 32 tile (O = P V at head dim 32, into the staging
// buffer): the swizzle phase of the 64-byte layout is (row >> 1) & 3, XOR-ed
// into the 16-byte unit; rows are 64 bytes, so the registers 8 rows down are
// 512 bytes on (1024 with the 128-byte swizzle).
// CHECK-LABEL: llvm.func @write_64b(
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: %[[ONE:[0-9]+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[HALF:[0-9]+]] = llvm.lshr %[[ROW:[0-9]+]], %[[ONE]] : i32
// CHECK: %[[PHASE:[0-9]+]] = llvm.and %[[HALF]], %{{[0-9]+}} : i32
// CHECK: %[[ROWBYTES:[0-9]+]] = llvm.mlir.constant(64 : i32) : i32
// CHECK-NEXT: llvm.mul %[[ROW]], %[[ROWBYTES]] : i32
// CHECK: llvm.xor %[[PHASE]], %{{[0-9]+}} : i32
// CHECK: llvm.getelementptr %{{[0-9]+}}[512] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK: nvvm.fence.proxy
func.func @write_64b(%scale: f32 {blockattn.name = "scale"}) {
  warpspec.kernel chip("sm_90a") {
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      %p = warpspec.scratch : !warpspec.buffer<64x64xbf16, smem>
      %v = warpspec.scratch : !warpspec.buffer<64x32xbf16, smem>
      %o = warpspec.mma %p, %v
          : !warpspec.buffer<64x64xbf16, smem>, !warpspec.buffer<64x32xbf16, smem>
            -> !warpspec.acc<64x32xf32>
      warpspec.write %o, %v
          : !warpspec.acc<64x32xf32>, !warpspec.buffer<64x32xbf16, smem>
    }
  }
  return
}
