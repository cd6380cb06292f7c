// RUN: block-attn-opt %s --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_90a l2-prefetch=on}),warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s
// RUN: block-attn-opt %s --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_90a}),warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --check-prefix=OFF --implicit-check-not=nvvm.cp.async.bulk.tensor.prefetch

// warpspec.acquire {l2_prefetch} on the seed forward (l2-prefetch=on): the
// producer issues a bulk tensor prefetch into L2 for each box the copies
// into the slot will read (q, k, v; two 64-column boxes each), at the same
// coordinates, and only then waits for the slot to be free, announces the
// bytes and issues the copies. Without the option (the forward's default)
// there is no prefetch.

// CHECK: llvm.func @seed_forward(
// CHECK-SAME: %[[QMAP:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %{{[a-z0-9]+}}: i32, %{{[a-z0-9]+}}: i32,
// CHECK-SAME: %[[KMAP:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %[[VMAP:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK: nvvm.cp.async.bulk.tensor.prefetch %[[QMAP]], box[%[[C0:.*]], %[[HEAD:.*]], %[[ROW:.*]]] : !llvm.ptr
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.prefetch %[[QMAP]], box[%[[C64:.*]], %[[HEAD]], %[[ROW]]] : !llvm.ptr
// CHECK: nvvm.cp.async.bulk.tensor.prefetch %[[KMAP]], box[%{{.*}}, %[[HEAD]], %[[ROW]]] : !llvm.ptr
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.prefetch %[[KMAP]], box[%{{.*}}, %[[HEAD]], %[[ROW]]] : !llvm.ptr
// CHECK: nvvm.cp.async.bulk.tensor.prefetch %[[VMAP]], box[%{{.*}}, %[[HEAD]], %[[ROW]]] : !llvm.ptr
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.prefetch %[[VMAP]], box[%{{.*}}, %[[HEAD]], %[[ROW]]] : !llvm.ptr
// CHECK-NOT: nvvm.cp.async.bulk.tensor.prefetch
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.expect_tx
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[QMAP]], %{{.*}}, box[%{{.*}}, %[[HEAD]], %[[ROW]]]
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KMAP]], %{{.*}}, box[%{{.*}}, %[[HEAD]], %[[ROW]]]
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[VMAP]], %{{.*}}, box[%{{.*}}, %[[HEAD]], %[[ROW]]]
// CHECK-NOT: nvvm.cp.async.bulk.tensor.prefetch

// OFF: llvm.func @seed_forward(
// OFF: nvvm.mbarrier.try_wait.parity
// OFF: nvvm.cp.async.bulk.tensor.shared.cluster.global

func.func @seed_forward(%q: memref<?x?x128xbf16>, %k: memref<?x?x128xbf16>,
                        %v: memref<?x?x128xbf16>, %o: memref<?x?x128xbf16>,
                        %cu: memref<?xi32>, %scale: f32) {
  blockattn.forward q(%q : memref<?x?x128xbf16>) k(%k : memref<?x?x128xbf16>)
      v(%v : memref<?x?x128xbf16>) o(%o : memref<?x?x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>) scale(%scale : f32)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}
