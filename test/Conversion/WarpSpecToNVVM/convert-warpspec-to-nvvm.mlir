// RUN: block-attn-opt %s --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_90a schedule=strided}),warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --implicit-check-not=warpspec.
// S = Q K^T is 8 wgmma of K=16 with A and B from shared memory (NVVM ops);
// O = P V is 4 with the register A operand (inline asm, which MLIR 22's NVVM
// op lacks). With p-operand=smem, P V is 4 more NVVM ops instead.
// RUN: block-attn-opt %s --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_90a}),warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | grep -c 'nvvm.wgmma.mma_async' | FileCheck %s --check-prefix=WGMMA8
// RUN: block-attn-opt %s --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_90a}),warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | grep -c 'wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16' | FileCheck %s --check-prefix=ASM4
// RUN: block-attn-opt %s --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_90a schedule=strided p-operand=smem}),warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --check-prefix=PSMEM --implicit-check-not=wgmma.mma_async.sync
// RUN: block-attn-opt %s --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_90a schedule=strided o-store=registers}),warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --check-prefix=OREGS
// RUN: block-attn-opt %s --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_90a}),warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --check-prefix=CHUNKED --implicit-check-not=warpspec.

// convert-warpspec-to-nvvm on the seed forward (bf16, head_dim 128, any
// number of heads, a run-time softmax scale) after blockattn-warp-specialize
// and warpspec-allocate-smem: the gpu.module and its kernel, the launch
// attributes and the manifest, and the NVVM operations of every part of the
// kernel, in order. Nothing of warpspec remains. The main checks are of the
// persistent launch with two consumers (schedule=strided); CHUNKED checks
// the default launch of the sm_90a forward.

// The module and its target; the dynamic shared memory, aligned at run time.
// CHECK: gpu.module @seed_forward [#nvvm.target<O = 3, chip = "sm_90a", features = "+ptx86">] {
// CHECK-NEXT: llvm.mlir.global external @__blockattn_dynamic_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>

// The parameters, in argument order: Q's tensor map (by value in parameter
// space, a __grid_constant__), the two dynamic sizes of Q the kernel reads
// (tokens, heads), K's and V's tensor maps, O's tensor map (bulk stores of
// full tiles) and O's base and outer strides (the partial tiles),
// cu_seqlens' base and length, the scale.
// CHECK-NEXT: llvm.func @seed_forward(
// CHECK-SAME: %[[QMAP:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %{{[a-z0-9]+}}: i32, %{{[a-z0-9]+}}: i32,
// CHECK-SAME: %[[KMAP:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %[[VMAP:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %[[OMAP:[a-z0-9]+]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant},
// CHECK-SAME: %{{[a-z0-9]+}}: !llvm.ptr<1>, %{{[a-z0-9]+}}: i64, %{{[a-z0-9]+}}: i64,
// CHECK-SAME: %{{[a-z0-9]+}}: !llvm.ptr<1>, %{{[a-z0-9]+}}: i32,
// CHECK-SAME: %{{[a-z0-9]+}}: f32)

// The manifest: launch configuration (384 threads: one load warpgroup and
// two compute replicas; max_registers, the register file shared evenly:
// 65536 / 384 rounded down to a multiple of 8), the shared memory of the
// plan, then every parameter, in order, with what a runtime needs to build
// it. The kernel has no nvvm.maxnreg: ptxas derives the same 168-register
// cap from reqntid and minctasm.
// CHECK-SAME: attributes {blockattn.manifest = {block_size = 64 : i64, chip = "sm_90a", element_type = bf16, grid = "persistent", head_dim = 128 : i64, kernel = "seed_forward", kind = "forward", max_registers = 168 : i64,
// CHECK-SAME: params = [
// CHECK-SAME: {box = [64, 1, 64], dims = ["head_dim", "heads", "tokens"], dtype = "bf16", interleave = "none", kind = "tensormap", l2_promotion = "128B", name = "q_tmap", oob_fill = "zero", swizzle = "128B", tensor = "q", value = "tensormap"},
// CHECK-SAME: {dim = 0 : i64, kind = "i32", name = "q_size0", tensor = "q", value = "size"},
// CHECK-SAME: {dim = 1 : i64, kind = "i32", name = "q_size1", tensor = "q", value = "size"},
// CHECK-SAME: {box = [64, 1, 64], dims = ["head_dim", "heads", "tokens"], dtype = "bf16", interleave = "none", kind = "tensormap", l2_promotion = "128B", name = "k_tmap", oob_fill = "zero", swizzle = "128B", tensor = "k", value = "tensormap"},
// CHECK-SAME: {box = [64, 1, 64], dims = ["head_dim", "heads", "tokens"], dtype = "bf16", interleave = "none", kind = "tensormap", l2_promotion = "128B", name = "v_tmap", oob_fill = "zero", swizzle = "128B", tensor = "v", value = "tensormap"},
// CHECK-SAME: {box = [64, 1, 64], dims = ["head_dim", "heads", "tokens"], dtype = "bf16", interleave = "none", kind = "tensormap", l2_promotion = "128B", name = "o_tmap", oob_fill = "zero", swizzle = "128B", tensor = "o", value = "tensormap"},
// CHECK-SAME: {dtype = "bf16", kind = "pointer", name = "o", tensor = "o", value = "base"},
// CHECK-SAME: {dim = 0 : i64, kind = "i64", name = "o_stride0", tensor = "o", value = "stride"},
// CHECK-SAME: {dim = 1 : i64, kind = "i64", name = "o_stride1", tensor = "o", value = "stride"},
// CHECK-SAME: {dtype = "i32", kind = "pointer", name = "cu_seqlens", tensor = "cu_seqlens", value = "base"},
// CHECK-SAME: {dim = 0 : i64, kind = "i32", name = "cu_seqlens_size0", tensor = "cu_seqlens", value = "size"},
// CHECK-SAME: {kind = "f32", name = "softmax_scale", tensor = "softmax_scale", value = "scalar"}],
// CHECK-SAME: partitions = [{name = "load", registers = 40 : i64, replicas = 1 : i64, role = "load", warps = 4 : i64}, {name = "compute", registers = 232 : i64, replicas = 2 : i64, role = "compute", warps = 4 : i64}],
// CHECK-SAME: rotary = "none", smem_bytes = 230384 : i64, threads = 384 : i64, tmem_columns = 0 : i64},
// CHECK-SAME: nvvm.kernel, nvvm.minctasm = 1 : i32, nvvm.reqntid = array<i32: 384, 1, 1>} {

// Prologue: thread 0 initializes the full and empty barriers of the 4 slots.
// CHECK-COUNT-8: nvvm.mbarrier.init %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32
// CHECK-NOT: nvvm.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.barrier0

// The load partition gives registers back, waits for a free slot, announces
// its bytes and copies Q, K and V in (two 64-column boxes each), and
// publishes the slot; closing the ring publishes one end marker per replica.
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: nvvm.mbarrier.try_wait.parity %{{.*}}, %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32, i32
// CHECK: nvvm.mbarrier.expect_tx
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[QMAP]], %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[KMAP]], %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[VMAP]], %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK: nvvm.mbarrier.arrive
// CHECK-COUNT-2: nvvm.mbarrier.try_wait.parity

// A compute replica takes the registers, waits for a full slot, computes
// S = Q K^T (8 x K=16, the first one overwriting the accumulator).
// CHECK: nvvm.setmaxregister increase 232
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-COUNT-7: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0

// Softmax: row maxima across the 4 threads of a row (butterfly shuffles),
// exp2 of the 32 scores a thread holds, row sums.
// CHECK-COUNT-4: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : f32 -> f32
// CHECK-COUNT-32: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%{{.*}}) : (f32) -> f32
// CHECK-COUNT-4: nvvm.shfl.sync bfly

// O = P V with P in registers: 4 x K=16, N=128, through inline asm.
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: llvm.inline_asm has_side_effects asm_dialect = att "{{.*}}wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK-NOT: wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0

// The slot is released; O, divided by the row sums, goes to the replica's
// staging buffer (once the previous bulk store has read it, between two
// named barriers of the warpgroup, the writes fenced for the async proxy),
// then out: a full tile in two bulk tensor stores (one per 64-column box)
// through O's tensor map, a partial one in 16-byte stores of whole row
// segments. The kernel waits for its last bulk stores before it exits.
// CHECK: nvvm.mbarrier.arrive
// CHECK: llvm.fdiv
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.global.shared.cta %[[OMAP]], %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}] : !llvm.ptr, <3>
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK-COUNT-8: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
// CHECK: nvvm.cp.async.bulk.wait_group 0{{$}}
// CHECK: llvm.return
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NOT: func.func

// WGMMA8: {{^}}8{{$}}
// ASM4: {{^}}4{{$}}

// P staged through shared memory: every wgmma is an NVVM op (8 for S, 4 for
// O = P V with A from shared memory), no inline asm; a third named barrier
// (after the P write); 2 slots.
// PSMEM: smem_bytes = 148464 : i64
// PSMEM-COUNT-4: nvvm.mbarrier.init
// PSMEM-NOT: nvvm.mbarrier.init
// PSMEM-COUNT-8: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>
// PSMEM: nvvm.barrier id
// PSMEM: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// PSMEM-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
// PSMEM-NOT: nvvm.wgmma.mma_async
// PSMEM-COUNT-2: nvvm.barrier id
// PSMEM-COUNT-8: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>

// O stored from registers: no staging buffer (197616 bytes), no named
// barrier for the store, each thread stores its fragment in 4-byte pairs of
// bf16. The one named barrier gathers the warpgroup before its thread 0
// releases the slot (every thread read the slot's tile record).
// OREGS: smem_bytes = 197616 : i64
// OREGS: llvm.inline_asm
// OREGS: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// OREGS-NOT: nvvm.barrier id
// OREGS: nvvm.mbarrier.arrive
// OREGS-NOT: nvvm.barrier id
// OREGS-COUNT-32: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : i32, !llvm.ptr<1>
// OREGS-NOT: !llvm.ptr<1>
// OREGS: llvm.return

// The default launch of the sm_90a forward: chunked, a CTA per 4 tiles, two
// CTAs per SM (.minnctapersm 2), each with one consumer warpgroup of 216
// registers next to the producer (256 threads launched with 128 registers,
// half the register file), a ring of 2 slots.
// CHUNKED: llvm.func @seed_forward(
// CHUNKED-SAME: attributes {blockattn.manifest = {block_size = 64 : i64, chip = "sm_90a", ctas_per_sm = 2 : i64, element_type = bf16, grid = "chunked", head_dim = 128 : i64, kernel = "seed_forward", kind = "forward", max_registers = 128 : i64,
// CHUNKED-SAME: partitions = [{name = "load", registers = 40 : i64, replicas = 1 : i64, role = "load", warps = 4 : i64}, {name = "compute", registers = 216 : i64, replicas = 1 : i64, role = "compute", warps = 4 : i64}],
// CHUNKED-SAME: rotary = "none", smem_bytes = 115696 : i64, threads = 256 : i64, tiles_per_cta = 4 : i64, tmem_columns = 0 : i64},
// CHUNKED-SAME: nvvm.kernel, nvvm.minctasm = 2 : i32, nvvm.reqntid = array<i32: 256, 1, 1>} {
// CHUNKED-COUNT-4: nvvm.mbarrier.init %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32
// CHUNKED-NOT: nvvm.mbarrier.init
// CHUNKED: nvvm.fence.mbarrier.init
// CHUNKED: nvvm.setmaxregister decrease 40
// CHUNKED: nvvm.setmaxregister increase 216
// CHUNKED: llvm.return

!act = memref<?x?x128xbf16>
func.func @seed_forward(%q: !act, %k: !act, %v: !act, %o: !act,
                        %cu_seqlens: memref<?xi32>, %scale: f32) {
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu_seqlens : memref<?xi32>) scale(%scale : f32)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}
