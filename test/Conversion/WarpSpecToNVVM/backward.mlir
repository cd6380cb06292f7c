// RUN: block-attn-opt %s --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_90a schedule=strided}),warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --implicit-check-not=warpspec. --implicit-check-not=nvvm.maxnreg
//
// The five wgmma chains, counted: S = Q K^T and dP = dO V^T are 8 x K=16
// each (N=64, both operands K-major: A row, B col); dV = P^T dO and
// dK = dS^T Q are 4 x K=16 each (N=128, A read transposed from the P and
// dS buffers: A col, B row, MN-major): 24 NVVM ops. dQ = dS K is 4 x K=16
// with dS in registers: inline asm (MLIR 22's NVVM op has no register A).
// RUN: block-attn-opt %s --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_90a schedule=strided}),warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' > %t.mlir
// RUN: grep -c 'nvvm.wgmma.mma_async' %t.mlir | FileCheck %s --check-prefix=WGMMA24
// RUN: grep -c 'nvvm.wgmma.mma_async .*<m = 64, n = 64, k = 16>.*A\[<bf16>, <one>, <row>\], B\[<bf16>, <one>, <col>\]' %t.mlir | FileCheck %s --check-prefix=WGMMA16
// RUN: grep -c 'nvvm.wgmma.mma_async .*<m = 64, n = 128, k = 16>.*A\[<bf16>, <one>, <col>\], B\[<bf16>, <one>, <row>\]' %t.mlir | FileCheck %s --check-prefix=WGMMA8
// RUN: grep -c 'llvm.inline_asm .*wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16' %t.mlir | FileCheck %s --check-prefix=ASM4
// Row reductions are butterfly shuffles across the 4 threads of a row, two
// rows per thread: the softmax's maxima (4) and sums (4), softmax_grad's
// rowsum(P dP) (4).
// RUN: grep -c 'nvvm.shfl.sync  bfly' %t.mlir | FileCheck %s --check-prefix=SHFL12
// Three outputs, each a group of two bulk tensor stores (one per 64-column
// box).
// RUN: grep -c 'nvvm.cp.async.bulk.commit.group' %t.mlir | FileCheck %s --check-prefix=GROUPS3
// RUN: grep -c 'nvvm.cp.async.bulk.tensor.global.shared.cta' %t.mlir | FileCheck %s --check-prefix=BULK6

// convert-warpspec-to-nvvm on the seed backward (bf16, head_dim 128, 4
// heads, the constant scale 1/sqrt(128)) after blockattn-warp-specialize
// (the persistent launch, schedule=strided: two consumer replicas, a
// 2-slot ring, o-store=tma; the chunked default is checked in
// test/Pipelines/blockattn-to-ptx-sm90a-backward.mlir) and
// warpspec-allocate-smem: the kernel's parameters and manifest, then the
// NVVM operations of the producer and of one consumer tile, in order.

// CHECK: gpu.module @seed_backward [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx86">] {
// CHECK-NEXT: llvm.mlir.global external @__blockattn_dynamic_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>

// The parameters, in argument order: the tensor maps of the loaded tensors
// q, k, v, do (q's with its one dynamic size, the token count; the head
// count is static), then per output (dq, dk, dv, the function's order) a
// tensor map for the bulk stores of full tiles and the base and outer
// strides for the threads' copy of partial ones; cu_seqlens. No scale
// parameter: it is a constant.
// CHECK-NEXT: llvm.func @seed_backward(
// CHECK-SAME: %[[QMAP:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %{{[a-z0-9]+}}: i32,
// CHECK-SAME: %[[KMAP:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %[[VMAP:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %[[DOMAP:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %[[DQMAP:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %[[DQ:[a-z0-9]+]]: !llvm.ptr<1>, %{{[a-z0-9]+}}: i64, %{{[a-z0-9]+}}: i64,
// CHECK-SAME: %[[DKMAP:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %[[DK:[a-z0-9]+]]: !llvm.ptr<1>, %{{[a-z0-9]+}}: i64, %{{[a-z0-9]+}}: i64,
// CHECK-SAME: %[[DVMAP:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %[[DV:[a-z0-9]+]]: !llvm.ptr<1>, %{{[a-z0-9]+}}: i64, %{{[a-z0-9]+}}: i64,
// CHECK-SAME: %{{[a-z0-9]+}}: !llvm.ptr<1>, %{{[a-z0-9]+}}: i32)

// The manifest: kind backward, 384 threads, the shared memory of the plan
// (2 x 64 KiB of slots, 2 x 32 KiB of scratch and the alignment slack that
// holds the barriers and tile records), the constant scale, and every
// parameter in order.
// CHECK-SAME: attributes {blockattn.manifest = {block_size = 64 : i64, chip = "sm_90a", element_type = bf16, grid = "persistent", head_dim = 128 : i64, kernel = "seed_backward", kind = "backward", max_registers = 168 : i64,
// CHECK-SAME: params = [
// CHECK-SAME: {box = [64, 1, 64], dims = ["head_dim", "heads", "tokens"], dtype = "bf16", interleave = "none", kind = "tensormap", l2_promotion = "128B", name = "q_tmap", oob_fill = "zero", swizzle = "128B", tensor = "q", value = "tensormap"},
// CHECK-SAME: {dim = 0 : i64, kind = "i32", name = "q_size0", tensor = "q", value = "size"},
// CHECK-SAME: {box = [64, 1, 64], dims = ["head_dim", "heads", "tokens"], dtype = "bf16", interleave = "none", kind = "tensormap", l2_promotion = "128B", name = "k_tmap", oob_fill = "zero", swizzle = "128B", tensor = "k", value = "tensormap"},
// CHECK-SAME: {box = [64, 1, 64], dims = ["head_dim", "heads", "tokens"], dtype = "bf16", interleave = "none", kind = "tensormap", l2_promotion = "128B", name = "v_tmap", oob_fill = "zero", swizzle = "128B", tensor = "v", value = "tensormap"},
// CHECK-SAME: {box = [64, 1, 64], dims = ["head_dim", "heads", "tokens"], dtype = "bf16", interleave = "none", kind = "tensormap", l2_promotion = "128B", name = "do_tmap", oob_fill = "zero", swizzle = "128B", tensor = "do", value = "tensormap"},
// CHECK-SAME: {box = [64, 1, 64], dims = ["head_dim", "heads", "tokens"], dtype = "bf16", interleave = "none", kind = "tensormap", l2_promotion = "128B", name = "dq_tmap", oob_fill = "zero", swizzle = "128B", tensor = "dq", value = "tensormap"},
// CHECK-SAME: {dtype = "bf16", kind = "pointer", name = "dq", tensor = "dq", value = "base"},
// CHECK-SAME: {dim = 0 : i64, kind = "i64", name = "dq_stride0", tensor = "dq", value = "stride"},
// CHECK-SAME: {dim = 1 : i64, kind = "i64", name = "dq_stride1", tensor = "dq", value = "stride"},
// CHECK-SAME: {box = [64, 1, 64], dims = ["head_dim", "heads", "tokens"], dtype = "bf16", interleave = "none", kind = "tensormap", l2_promotion = "128B", name = "dk_tmap", oob_fill = "zero", swizzle = "128B", tensor = "dk", value = "tensormap"},
// CHECK-SAME: {dtype = "bf16", kind = "pointer", name = "dk", tensor = "dk", value = "base"},
// CHECK-SAME: {dim = 0 : i64, kind = "i64", name = "dk_stride0", tensor = "dk", value = "stride"},
// CHECK-SAME: {dim = 1 : i64, kind = "i64", name = "dk_stride1", tensor = "dk", value = "stride"},
// CHECK-SAME: {box = [64, 1, 64], dims = ["head_dim", "heads", "tokens"], dtype = "bf16", interleave = "none", kind = "tensormap", l2_promotion = "128B", name = "dv_tmap", oob_fill = "zero", swizzle = "128B", tensor = "dv", value = "tensormap"},
// CHECK-SAME: {dtype = "bf16", kind = "pointer", name = "dv", tensor = "dv", value = "base"},
// CHECK-SAME: {dim = 0 : i64, kind = "i64", name = "dv_stride0", tensor = "dv", value = "stride"},
// CHECK-SAME: {dim = 1 : i64, kind = "i64", name = "dv_stride1", tensor = "dv", value = "stride"},
// CHECK-SAME: {dtype = "i32", kind = "pointer", name = "cu_seqlens", tensor = "cu_seqlens", value = "base"},
// CHECK-SAME: {dim = 0 : i64, kind = "i32", name = "cu_seqlens_size0", tensor = "cu_seqlens", value = "size"}],
// CHECK-SAME: partitions = [{name = "load", registers = 40 : i64, replicas = 1 : i64, role = "load", warps = 4 : i64}, {name = "compute", registers = 232 : i64, replicas = 2 : i64, role = "compute", warps = 4 : i64}],
// CHECK-SAME: rotary = "none", smem_bytes = 197616 : i64, softmax_scale = 0.0883883461 : f32, threads = 384 : i64, tmem_columns = 0 : i64},
// CHECK-SAME: nvvm.kernel, nvvm.minctasm = 1 : i32, nvvm.reqntid = array<i32: 384, 1, 1>} {

// Prologue: the full and empty barriers of the 2 slots.
// CHECK-COUNT-4: nvvm.mbarrier.init %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32
// CHECK-NOT: nvvm.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.barrier0

// The producer copies Q, K, V and dO into a slot, two 64-column boxes each.
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.expect_tx
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[QMAP]], %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KMAP]], %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[VMAP]], %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[DOMAP]], %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK-NOT: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: nvvm.mbarrier.arrive

// A consumer replica: S = Q K^T.
// CHECK: nvvm.setmaxregister increase 232
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-COUNT-7: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0

// The softmax: row maxima, exp2 of the 32 scores a thread holds, row sums,
// one reciprocal per row (normalize), rows past the tile zeroed.
// CHECK-COUNT-4: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : f32 -> f32
// CHECK-COUNT-32: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%{{.*}}) : (f32) -> f32
// CHECK-COUNT-4: nvvm.shfl.sync bfly
// CHECK-COUNT-2: llvm.fdiv
// CHECK-NOT: llvm.intr.exp2
// CHECK: llvm.select

// P written to its buffer as bf16 (16 pairs a thread), fenced for the async
// proxy and published to the warpgroup (named barrier).
// CHECK-COUNT-16: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<3>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}

// dP = dO V^T: 8 more K-major wgmma.
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-COUNT-7: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0

// softmax_grad: rowsum(P dP) by fused multiply-adds and 4 shuffles, then
// dS = P (scale dP - scale D), an FMA and a multiply per element; written to
// its buffer like P.
// CHECK: llvm.intr.fma
// CHECK-COUNT-4: nvvm.shfl.sync bfly
// CHECK: llvm.fneg
// CHECK: llvm.intr.fma
// CHECK-COUNT-16: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<3>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}

// dV = P^T dO: 4 wgmma of N=128 with A read MN-major from P's buffer.
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0

// dV stored: once the previous bulk store has read the staging buffer, the
// tile goes there (named barriers around it, an async-proxy fence), then a
// full tile leaves in two bulk stores through dv's map; a partial one in
// 16-byte stores of whole row segments through dv's base.
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: nvvm.barrier id
// CHECK: nvvm.fence.proxy
// CHECK: nvvm.barrier id
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.global.shared.cta %[[DVMAP]], %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}] : !llvm.ptr, <3>
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK-COUNT-8: llvm.getelementptr %[[DV]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, bf16

// dK = dS^T Q: the same, from dS's buffer, stored through dk's map.
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.global.shared.cta %[[DKMAP]], %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}] : !llvm.ptr, <3>
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK-COUNT-8: llvm.getelementptr %[[DK]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, bf16

// dQ = dS K with dS from registers: 4 inline-asm wgmma, no NVVM op.
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: llvm.inline_asm has_side_effects asm_dialect = att "{{.*}}wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0

// The slot is released after the last product that reads it; then dQ is
// stored through dq's map. The kernel waits for its bulk stores at the end.
// CHECK: nvvm.mbarrier.arrive
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.global.shared.cta %[[DQMAP]], %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}] : !llvm.ptr, <3>
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK-COUNT-8: llvm.getelementptr %[[DQ]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, bf16
// CHECK-NOT: nvvm.mbarrier.arrive
// CHECK: nvvm.cp.async.bulk.wait_group 0{{$}}
// CHECK: llvm.return
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NOT: func.func

// WGMMA24: {{^}}24{{$}}
// WGMMA16: {{^}}16{{$}}
// WGMMA8: {{^}}8{{$}}
// ASM4: {{^}}4{{$}}
// SHFL12: {{^}}12{{$}}
// GROUPS3: {{^}}3{{$}}
// BULK6: {{^}}6{{$}}

!act = memref<?x4x128xbf16>
func.func @seed_backward(%q: !act, %k: !act, %v: !act, %do: !act,
                         %dq: !act, %dk: !act, %dv: !act,
                         %cu_seqlens: memref<?xi32>) {
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu_seqlens : memref<?xi32>)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}
