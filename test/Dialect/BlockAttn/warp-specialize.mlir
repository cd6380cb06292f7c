// RUN: split-file %s %t
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_90a o-store=smem" | FileCheck %s --implicit-check-not=blockattn.forward
// The persistent launch the chunked default replaced: two consumers, no
// ctas_per_sm or tiles_per_cta.
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_90a schedule=strided o-store=smem" | FileCheck %s --check-prefix=STRIDED --implicit-check-not=blockattn.forward --implicit-check-not=ctas_per_sm --implicit-check-not=tiles_per_cta
// o-store=tma is the default: the same kernels, with bulk stores.
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_90a" | FileCheck %s --check-prefix=TMA --implicit-check-not=blockattn.forward
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_90a o-store=registers" | FileCheck %s --check-prefix=OREGS --implicit-check-not=warpspec.scratch
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_90a p-operand=smem o-store=smem" | FileCheck %s --check-prefix=SMEM
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_90a p-operand=smem" | FileCheck %s --check-prefix=SMEM
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_90a p-operand=smem o-store=registers" | FileCheck %s --check-prefix=SMEM-OREGS
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_90a num-consumers=1" | FileCheck %s --check-prefix=ONEWG
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_90a schedule=strided num-consumers=1" | FileCheck %s --check-prefix=ONEWG-STRIDED --implicit-check-not=ctas_per_sm
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_90a num-consumers=3" | FileCheck %s --check-prefix=THREEWG
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_90a num-consumers=3 o-store=registers" | FileCheck %s --check-prefix=THREEWG-OREGS
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_90a num-stages=2" | FileCheck %s --check-prefix=STAGES2
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_90a num-consumers=3 num-stages=6" | FileCheck %s --check-prefix=STAGES6
// The backward kernels (the second part of this file), both head dims in one
// run; three consumers at head_dim 64 only.
// RUN: cat %t/backward.mlir %t/backward-d64.mlir | block-attn-opt -blockattn-warp-specialize="chip=sm_90a num-consumers=2" | FileCheck %s --check-prefix=BWD --implicit-check-not=blockattn.backward
// RUN: cat %t/backward.mlir %t/backward-d64.mlir | block-attn-opt -blockattn-warp-specialize="chip=sm_90a num-consumers=2 p-operand=smem" | FileCheck %s --check-prefix=BWD --implicit-check-not=blockattn.backward
// RUN: cat %t/backward.mlir %t/backward-d64.mlir | block-attn-opt -blockattn-warp-specialize="chip=sm_90a num-consumers=2 o-store=smem" | FileCheck %s --check-prefix=BWD-OSMEM --implicit-check-not=bulk
// RUN: cat %t/backward.mlir %t/backward-d64.mlir | block-attn-opt -blockattn-warp-specialize="chip=sm_90a num-consumers=2 o-store=registers" | FileCheck %s --check-prefix=BWD-OREGS --implicit-check-not=via
// RUN: cat %t/backward.mlir %t/backward-d64.mlir | block-attn-opt -blockattn-warp-specialize="chip=sm_90a num-consumers=1 schedule=strided" | FileCheck %s --check-prefix=BWD-ONEWG
// RUN: block-attn-opt %t/backward-d64.mlir -blockattn-warp-specialize="chip=sm_90a num-consumers=3" | FileCheck %s --check-prefix=BWD64-THREEWG
// By default the backward is chunked (two CTAs per SM, one consumer each);
// persistent, the head_dim 64 backward gets one consumer (and a deeper
// ring), the head_dim 128 one two. The chunked head_dim 64 backward's
// producer prefetches each tile into L2 before it waits for a slot
// (l2-prefetch=auto); the forwards do not, unless told to.
// RUN: cat %t/backward.mlir %t/backward-d64.mlir | block-attn-opt -blockattn-warp-specialize="chip=sm_90a" | FileCheck %s --check-prefix=BWD-DEFAULT
// RUN: cat %t/backward.mlir %t/backward-d64.mlir | block-attn-opt -blockattn-warp-specialize="chip=sm_90a schedule=strided" | FileCheck %s --check-prefix=BWD-PERSISTENT --implicit-check-not=l2_prefetch
// RUN: cat %t/backward.mlir %t/backward-d64.mlir | block-attn-opt -blockattn-warp-specialize="chip=sm_90a l2-prefetch=off" | FileCheck %s --check-prefix=BWD-DEFAULT-NOPF --implicit-check-not=l2_prefetch
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_90a l2-prefetch=on" | FileCheck %s --check-prefix=FWD-PF
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_90a" | FileCheck %s --check-prefix=FWD-NOPF --implicit-check-not=l2_prefetch

// blockattn-warp-specialize on Hopper forward kernels: the seed forward
// (bf16, head_dim 128) and an f16 head_dim-64 forward; P from registers or
// staged through shared memory; O stored from registers or staged through a
// per-replica shared-memory buffer (o-store=smem, or tma, the default, which
// adds bulk tensor stores of full tiles); one, two or three
// consumer warpgroups (their register budgets); the launch (by default
// chunked: two CTAs per SM, each with one consumer warpgroup and a few
// tiles, taken in order, contiguous; schedule=strided or more than one
// consumer: a persistent grid); the ring depth the pass picks or is given;
// a run-time scale against the constant one (the kernel's info has
// softmax_scale only when it is a constant); and the blockattn.name
// attributes that name the kernel's parameters.
//
// The depth the pass picks: as many 3-tile slots as fit in the CTA's
// shared memory (227 KiB for a persistent CTA; 228 / 2 - 1 = 113 KiB for
// each of two CTAs on an SM) less 1 KiB (barriers, records, alignment) and
// the scratch buffers (per consumer: 8 KiB for P with p-operand=smem,
// 64 x head_dim x 2 bytes for O with o-store=smem or tma), at most 8,
// rounded down to a multiple of num-consumers (consumer replicas take the
// slots round-robin, see the warpspec.kernel verifier).
//
// Chunked (the default; one consumer, 216 registers, 4 tiles per CTA at
// head_dim 128, 8 at 64), at head_dim 128 (48 KiB slots):
//   p-operand  o-store    scratch  fits  depth
//   registers  tma/smem    16 KiB     2      2
//   registers  registers       0      2      2
//   smem       tma/smem    24 KiB     1      1
//   smem       registers    8 KiB     2      2
// At head_dim 64 (24 KiB slots) 4 fit in every case above.
//
// Persistent (schedule=strided, or num-consumers above 1), at head_dim 128:
//   num-consumers  p-operand  o-store    scratch  fits  depth
//   1              registers  smem        16 KiB     4      4
//   2              registers  smem        32 KiB     4      4
//   2              registers  registers       0      4      4
//   2              smem       smem        48 KiB     3      2
//   2              smem       registers   16 KiB     4      4
//   3              registers  smem        48 KiB     3      3
//   3              registers  registers       0      4      3
// At head_dim 64 (24 KiB slots) 8 fit in every case above; three consumers
// get 6.
//
// The backward kernels are in a second part (split-file): a head_dim-128
// backward in the forward's input would fail the num-consumers=3 runs (see
// warp-specialize-invalid.mlir).

//--- forward.mlir

!act = memref<?x4x128xbf16>
!act64 = memref<?x8x64xf16>
!cu = memref<?xi32>

// The seed forward, with every default: a chunked launch, two CTAs per SM
// and 4 tiles per CTA, taken contiguously; a load warpgroup (40 registers)
// fills a 2-slot ring; one compute warpgroup (216 registers: the 128 a
// thread two CTAs per SM launch with, less the producer's share; replicas(1)
// is the default and is not printed) takes its slots, with a 64x128 staging
// buffer that O is stored through; the default scale 1/sqrt(128) is a
// constant.
// CHECK-LABEL: func.func @forward_seed_d128
// CHECK-SAME: (%[[Q:[a-z0-9_]+]]: memref<?x4x128xbf16> {blockattn.name = "q"}
// CHECK-SAME: %[[K:[a-z0-9_]+]]: memref<?x4x128xbf16> {blockattn.name = "k"}
// CHECK-SAME: %[[V:[a-z0-9_]+]]: memref<?x4x128xbf16> {blockattn.name = "v"}
// CHECK-SAME: %[[O:[a-z0-9_]+]]: memref<?x4x128xbf16> {blockattn.name = "o"}
// CHECK-SAME: %[[CU:[a-z0-9_]+]]: memref<?xi32> {blockattn.name = "cu_seqlens"})
// CHECK: warpspec.kernel chip(sm_90a) attributes {ctas_per_sm = 2 : i64, info = {block_size = 64 : i64, element_type = bf16, head_dim = 128 : i64, kind = "forward", rotary = "none", softmax_scale = 0.0883883461 : f32}, tiles_per_cta = 4 : i64} {
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[T:.*]] = memref.dim %[[Q]], %[[ZERO]]
// CHECK-DAG: %[[H:.*]] = memref.dim %[[Q]], %[[ONE]]
// CHECK-DAG: %[[SCALE:.*]] = arith.constant 0.0883883461 : f32
// CHECK: %[[QKV:.*]] = warpspec.channel "qkv" depth(2) : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
// CHECK: warpspec.partition "load" role(load) warps(4) regs(40) {
// CHECK-NEXT: warpspec.tile_loop (%[[ROW:.*]], %[[ROWS:.*]], %[[HEAD:.*]]) in %[[CU]] : memref<?xi32> heads(%[[H]]) tokens(%[[T]]) block_size(64) contiguous {
// CHECK-NEXT: %[[S_QKV:.*]], %[[BUF:.*]]:3 = warpspec.acquire %[[QKV]]
// CHECK-NEXT: warpspec.tma_load %[[Q]][%[[ROW]], %[[HEAD]]] into %[[BUF]]#0
// CHECK-NEXT: warpspec.tma_load %[[K]][%[[ROW]], %[[HEAD]]] into %[[BUF]]#1
// CHECK-NEXT: warpspec.tma_load %[[V]][%[[ROW]], %[[HEAD]]] into %[[BUF]]#2
// CHECK-NEXT: warpspec.commit %[[S_QKV]] tile(%[[ROW]], %[[ROWS]], %[[HEAD]])
// CHECK-NEXT: }
// CHECK-NEXT: warpspec.close %[[QKV]]
// CHECK-NEXT: }
// CHECK-NEXT: warpspec.partition "compute" role(compute) warps(4) regs(216) {
// CHECK-NEXT: %[[OBUF:.*]] = warpspec.scratch : <64x128xbf16, smem>
// CHECK-NEXT: warpspec.consume %[[QKV]] (%[[S_QKV:[^,]*]], %[[CROW:.*]], %[[CROWS:.*]], %[[CHEAD:.*]], %[[QT:.*]], %[[KT:.*]], %[[VT:.*]]) :
// CHECK-NEXT: %[[S:.*]] = warpspec.mma %[[QT]], %[[KT]] {transpose_b} : {{.*}} -> <64x64xf32>
// CHECK-NEXT: %[[P:.*]], %[[L:.*]] = warpspec.softmax %[[S]] valid_cols(%[[CROWS]]) scale(%[[SCALE]]) : <64x64xf32> -> <64x64xbf16>, <64xf32>
// CHECK-NEXT: %[[OT:.*]] = warpspec.mma %[[P]], %[[VT]] : !warpspec.acc<64x64xbf16>, {{.*}} -> <64x128xf32>
// CHECK-NEXT: warpspec.release %[[S_QKV]]
// CHECK-NEXT: warpspec.store %[[OT]] to %[[O]][%[[CROW]], %[[CHEAD]]] rows(%[[CROWS]]) divide_by(%[[L]]) via(%[[OBUF]]) : <64x128xf32>, memref<?x4x128xbf16>, !warpspec.rows<64xf32>, !warpspec.buffer<64x128xbf16, smem>
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: return

// schedule=strided: the persistent launch, as before the chunked default:
// no ctas_per_sm or tiles_per_cta, a 4-slot ring, tiles dealt round-robin
// (no contiguous), two compute replicas of 232 registers, each with its O
// staging buffer.
// STRIDED-LABEL: func.func @forward_seed_d128
// STRIDED: warpspec.kernel chip(sm_90a) attributes {info = {block_size = 64 : i64, element_type = bf16, head_dim = 128 : i64, kind = "forward", rotary = "none", softmax_scale = 0.0883883461 : f32}} {
// STRIDED: %[[QKV:.*]] = warpspec.channel "qkv" depth(4) : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
// STRIDED-NEXT: warpspec.partition "load" role(load) warps(4) regs(40) {
// STRIDED-NEXT: warpspec.tile_loop ({{.*}}) in %{{.*}} : memref<?xi32> heads(%{{.*}}) tokens(%{{.*}}) block_size(64) {
// STRIDED: warpspec.partition "compute" role(compute) warps(4) regs(232) replicas(2) {
// STRIDED-NEXT: %[[OBUF:.*]] = warpspec.scratch : <64x128xbf16, smem>
// STRIDED-NEXT: warpspec.consume %[[QKV]]
// STRIDED: warpspec.store {{.*}} via(%[[OBUF]]) : <64x128xf32>, memref<?x4x128xbf16>, !warpspec.rows<64xf32>, !warpspec.buffer<64x128xbf16, smem>

// O stored from registers: no scratch buffer, no via; the ring is as deep
// as with the staging buffers.
// OREGS-LABEL: func.func @forward_seed_d128
// OREGS: warpspec.channel "qkv" depth(2) :
// OREGS: warpspec.partition "compute" role(compute) warps(4) regs(216) {
// OREGS-NEXT: warpspec.consume
// OREGS: warpspec.release
// OREGS-NEXT: warpspec.store %{{.*}} divide_by(%{{.*}}) : <64x128xf32>, memref<?x4x128xbf16>, !warpspec.rows<64xf32>{{$}}

// P staged through a per-replica scratch buffer: softmax, write, then P V
// with A from shared memory; O staged through a second one (declared after
// P's). The two buffers (24 KiB) leave room for one slot in the 112 KiB of
// a chunked CTA.
// SMEM-LABEL: func.func @forward_seed_d128
// SMEM: warpspec.channel "qkv" depth(1) :
// SMEM: warpspec.partition "compute" role(compute) warps(4) regs(216) {
// SMEM-NEXT: %[[PBUF:.*]] = warpspec.scratch : <64x64xbf16, smem>
// SMEM-NEXT: %[[OBUF:.*]] = warpspec.scratch : <64x128xbf16, smem>
// SMEM-NEXT: warpspec.consume
// SMEM-NEXT: warpspec.mma
// SMEM-NEXT: %[[P:.*]], %[[L:.*]] = warpspec.softmax
// SMEM-NEXT: warpspec.write %[[P]], %[[PBUF]] : <64x64xbf16>, <64x64xbf16, smem>
// SMEM-NEXT: %[[OT:.*]] = warpspec.mma %[[PBUF]], %{{.*}} : !warpspec.buffer<64x64xbf16, smem>, <64x128xbf16, smem> -> <64x128xf32>
// SMEM-NEXT: warpspec.release
// SMEM-NEXT: warpspec.store %[[OT]] to {{.*}} divide_by(%[[L]]) via(%[[OBUF]])

// P staged, O from registers: one scratch buffer, a 2-slot ring.
// SMEM-OREGS-LABEL: func.func @forward_seed_d128
// SMEM-OREGS: warpspec.channel "qkv" depth(2) :
// SMEM-OREGS: warpspec.partition "compute" role(compute) warps(4) regs(216) {
// SMEM-OREGS-NEXT: %[[PBUF:.*]] = warpspec.scratch : <64x64xbf16, smem>
// SMEM-OREGS-NEXT: warpspec.consume
// SMEM-OREGS: warpspec.write %{{.*}}, %[[PBUF]]
// SMEM-OREGS: warpspec.store %{{.*}} divide_by(%{{.*}}) : <64x128xf32>, memref<?x4x128xbf16>, !warpspec.rows<64xf32>{{$}}

// An explicit single consumer is the default chunked launch: 216
// registers, two CTAs per SM. Persistent (schedule=strided), one consumer
// warpgroup gets the most setmaxnreg allows and a 4-slot ring; replicas(1)
// is the default and is not printed.
// ONEWG-LABEL: func.func @forward_seed_d128
// ONEWG: warpspec.kernel chip(sm_90a) attributes {ctas_per_sm = 2 : i64, {{.*}}, tiles_per_cta = 4 : i64} {
// ONEWG: warpspec.channel "qkv" depth(2) :
// ONEWG: warpspec.partition "load" role(load) warps(4) regs(40) {
// ONEWG-NEXT: warpspec.tile_loop {{.*}} block_size(64) contiguous {
// ONEWG: warpspec.partition "compute" role(compute) warps(4) regs(216) {
// ONEWG-NEXT: warpspec.scratch : <64x128xbf16, smem>
// ONEWG-STRIDED-LABEL: func.func @forward_seed_d128
// ONEWG-STRIDED: warpspec.channel "qkv" depth(4) :
// ONEWG-STRIDED: warpspec.partition "load" role(load) warps(4) regs(40) {
// ONEWG-STRIDED: warpspec.partition "compute" role(compute) warps(4) regs(256) {
// ONEWG-STRIDED-NEXT: warpspec.scratch : <64x128xbf16, smem>

// Three consumer warpgroups (a persistent launch: no ctas_per_sm) share
// the registers the producer leaves: 40 x 128 + 152 x 384 <= 65536. Their
// three O buffers leave room for 3 slots, one per replica.
// THREEWG-LABEL: func.func @forward_seed_d128
// THREEWG: warpspec.kernel chip(sm_90a) attributes {info = {{.*}}} {
// THREEWG: warpspec.channel "qkv" depth(3) :
// THREEWG: warpspec.partition "load" role(load) warps(4) regs(40) {
// THREEWG: warpspec.partition "compute" role(compute) warps(4) regs(152) replicas(3) {
// THREEWG-NEXT: warpspec.scratch : <64x128xbf16, smem>

// Without the O buffers 4 slots fit, rounded down to 3 for three replicas.
// THREEWG-OREGS-LABEL: func.func @forward_seed_d128
// THREEWG-OREGS: warpspec.channel "qkv" depth(3) :
// THREEWG-OREGS: warpspec.partition "compute" role(compute) warps(4) regs(152) replicas(3) {
// THREEWG-OREGS-NEXT: warpspec.consume

// An explicit num-stages is taken as given (a multiple of num-consumers;
// warpspec-allocate-smem checks that it fits).
// STAGES2-LABEL: func.func @forward_seed_d128
// STAGES2: warpspec.channel "qkv" depth(2) :
// STAGES6-LABEL: func.func @forward_seed_d128
// STAGES6: warpspec.channel "qkv" depth(6) :
// STAGES6: warpspec.partition "compute" role(compute) warps(4) regs(152) replicas(3) {
func.func @forward_seed_d128(%q: !act, %k: !act, %v: !act, %o: !act, %cu: !cu) {
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : !cu)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}

// f16, head_dim 64: a slot is half as large, so a chunked CTA gets 8
// tiles and a 4-slot ring, also with the P and O scratch buffers; a
// persistent one 8 slots (the most the pass picks); with three consumers,
// 6. The O staging buffer is f16, 64x64.
// CHECK-LABEL: func.func @forward_f16_d64
// TMA-LABEL: func.func @forward_seed_d128
// TMA: %[[OBUF:.*]] = warpspec.scratch : <64x128xbf16, smem>
// TMA: warpspec.store {{.*}} via(%[[OBUF]]) bulk : <64x128xf32>
// TMA-LABEL: func.func @forward_f16_d64
// TMA: warpspec.store {{.*}} via(%{{.*}}) bulk : <64x64xf32>

// CHECK: warpspec.kernel chip(sm_90a) attributes {ctas_per_sm = 2 : i64, info = {block_size = 64 : i64, element_type = f16, head_dim = 64 : i64, kind = "forward", rotary = "none", softmax_scale = 1.250000e-01 : f32}, tiles_per_cta = 8 : i64} {
// CHECK: warpspec.channel "qkv" depth(4) : <[64x64xf16, 64x64xf16, 64x64xf16], smem>
// CHECK: warpspec.tile_loop {{.*}} contiguous {
// CHECK: warpspec.partition "compute" role(compute) warps(4) regs(216) {
// CHECK: %[[OBUF64:.*]] = warpspec.scratch : <64x64xf16, smem>
// CHECK: warpspec.softmax {{.*}} -> <64x64xf16>, <64xf32>
// CHECK: warpspec.mma {{.*}} : !warpspec.acc<64x64xf16>, <64x64xf16, smem> -> <64x64xf32>
// CHECK: warpspec.store {{.*}} via(%[[OBUF64]]) : <64x64xf32>, memref<?x8x64xf16>, !warpspec.rows<64xf32>, !warpspec.buffer<64x64xf16, smem>
// STRIDED-LABEL: func.func @forward_f16_d64
// STRIDED: warpspec.kernel chip(sm_90a) attributes {info = {block_size = 64 : i64, element_type = f16, head_dim = 64 : i64, kind = "forward", rotary = "none", softmax_scale = 1.250000e-01 : f32}} {
// STRIDED: warpspec.channel "qkv" depth(8) : <[64x64xf16, 64x64xf16, 64x64xf16], smem>
// STRIDED: warpspec.partition "compute" role(compute) warps(4) regs(232) replicas(2) {
// OREGS-LABEL: func.func @forward_f16_d64
// OREGS: warpspec.channel "qkv" depth(4) :
// SMEM-LABEL: func.func @forward_f16_d64
// SMEM: warpspec.channel "qkv" depth(4) :
// SMEM: warpspec.scratch : <64x64xf16, smem>
// SMEM-NEXT: warpspec.scratch : <64x64xf16, smem>
// THREEWG-LABEL: func.func @forward_f16_d64
// THREEWG: warpspec.channel "qkv" depth(6) :
// THREEWG-OREGS-LABEL: func.func @forward_f16_d64
// THREEWG-OREGS: warpspec.channel "qkv" depth(6) :
// STAGES2-LABEL: func.func @forward_f16_d64
// STAGES2: warpspec.channel "qkv" depth(2) :
func.func @forward_f16_d64(%q: !act64, %k: !act64, %v: !act64, %o: !act64,
                           %cu: !cu) {
  blockattn.forward q(%q : !act64) k(%k : !act64) v(%v : !act64) o(%o : !act64)
      cu_seqlens(%cu : !cu) {head_dim = 64 : i64, element_type = f16}
  return
}

// A run-time scale: it is named as a kernel parameter, used by the softmax,
// and the info has no softmax_scale. Arguments are named by role, whatever
// their position.
// CHECK-LABEL: func.func @forward_runtime_scale
// CHECK-SAME: (%[[CU:[a-z0-9_]+]]: memref<?xi32> {blockattn.name = "cu_seqlens"}
// CHECK-SAME: %[[SCALE:[a-z0-9_]+]]: f32 {blockattn.name = "softmax_scale"}
// CHECK-SAME: {blockattn.name = "q"}
// CHECK-SAME: {blockattn.name = "k"}
// CHECK-SAME: {blockattn.name = "v"}
// CHECK-SAME: {blockattn.name = "o"})
// CHECK: warpspec.kernel chip(sm_90a) attributes {ctas_per_sm = 2 : i64, info = {block_size = 64 : i64, element_type = bf16, head_dim = 128 : i64, kind = "forward", rotary = "none"}, tiles_per_cta = 4 : i64} {
// CHECK-NOT: arith.constant {{.*}} : f32
// CHECK: warpspec.tile_loop ({{.*}}) in %[[CU]]
// CHECK: warpspec.softmax %{{.*}} valid_cols(%{{.*}}) scale(%[[SCALE]])
func.func @forward_runtime_scale(%cu: !cu, %scale: f32, %q: !act, %k: !act,
                                 %v: !act, %o: !act) {
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : !cu) scale(%scale : f32)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// A constant softmax_scale replaces the default 1/sqrt(head_dim), in the
// info and in the constant the softmax uses.
// CHECK-LABEL: func.func @forward_constant_scale
// CHECK: warpspec.kernel chip(sm_90a) attributes {ctas_per_sm = 2 : i64, info = {block_size = 64 : i64{{.*}}softmax_scale = 5.000000e-01 : f32}, tiles_per_cta = 4 : i64} {
// CHECK: %[[SCALE:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: warpspec.softmax %{{.*}} valid_cols(%{{.*}}) scale(%[[SCALE]])
func.func @forward_constant_scale(%q: !act, %k: !act, %v: !act, %o: !act,
                                  %cu: !cu) {
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : !cu)
      {head_dim = 128 : i64, element_type = bf16, softmax_scale = 0.5 : f32}
  return
}

// A function without a blockattn op is left alone, arguments unnamed.
// CHECK-LABEL: func.func @negative_no_blockattn_op
// CHECK-SAME: (%{{[a-z0-9_]+}}: memref<?x4x128xbf16>)
// CHECK-NEXT: return
func.func @negative_no_blockattn_op(%q: !act) {
  return
}

//--- backward.mlir

//===----------------------------------------------------------------------===//
// Backward
//===----------------------------------------------------------------------===//

// blockattn-warp-specialize on Hopper backward kernels: the same shell as
// the forward (one load warpgroup, consumer replicas taking a ring's slots
// round-robin), a 4-tile ring "qkvdo" (Q, K, V, dO), and per consumer two
// 64x64 scratch buffers (P and dS, A operands of dV = P^T dO and dK = dS^T Q
// read transposed) and the output staging buffer that dV, dK and dQ leave
// through in turn. P is always staged (p-operand only changes the forward).
// The scale is folded into dS, so dK and dQ are plain products; the slot is
// released after the last product that reads it (dQ = dS K, dS from
// registers), before dQ is stored.
//
// The depth: as for the forward, with 4-tile slots and 8 KiB (P) + 8 KiB
// (dS) + 64 x head_dim x 2 bytes (staging, unless o-store=registers) of
// scratch per consumer:
//   head_dim  num-consumers  o-store     scratch  fits  depth
//   128       2              tma/smem     64 KiB     2      2
//   128       2              registers    32 KiB     3      2
//   128       1              tma          32 KiB     3      3
//   128       3              any       >= 48 KiB     2  (error)
//   64        2              tma/smem     48 KiB     5      4
//   64        2              registers    32 KiB     6      6
//   64        1              tma          24 KiB     6      6
//   64        3              tma          72 KiB     4      3

// The seed backward, every default: a 2-slot ring of 64 KiB slots, two
// compute replicas of 232 registers, the constant scale 1/sqrt(128); the
// body in order: S = Q K^T; P = softmax(S), rows past the tile zeroed and
// normalized, in f32; P written (as bf16) to its buffer; dP = dO V^T;
// dS = softmax_grad(P, dP) in bf16; dS written; dV = P^T dO stored; dK =
// dS^T Q stored; dQ = dS K; release; dQ stored. The three stores are bulk
// through the one staging buffer.
// BWD-LABEL: func.func @backward_seed_d128
// BWD-SAME: (%[[Q:[a-z0-9_]+]]: memref<?x4x128xbf16> {blockattn.name = "q"}
// BWD-SAME: %[[K:[a-z0-9_]+]]: memref<?x4x128xbf16> {blockattn.name = "k"}
// BWD-SAME: %[[V:[a-z0-9_]+]]: memref<?x4x128xbf16> {blockattn.name = "v"}
// BWD-SAME: %[[DO:[a-z0-9_]+]]: memref<?x4x128xbf16> {blockattn.name = "do"}
// BWD-SAME: %[[DQ:[a-z0-9_]+]]: memref<?x4x128xbf16> {blockattn.name = "dq"}
// BWD-SAME: %[[DK:[a-z0-9_]+]]: memref<?x4x128xbf16> {blockattn.name = "dk"}
// BWD-SAME: %[[DV:[a-z0-9_]+]]: memref<?x4x128xbf16> {blockattn.name = "dv"}
// BWD-SAME: %[[CU:[a-z0-9_]+]]: memref<?xi32> {blockattn.name = "cu_seqlens"})
// BWD: warpspec.kernel chip(sm_90a) attributes {info = {block_size = 64 : i64, element_type = bf16, head_dim = 128 : i64, kind = "backward", rotary = "none", softmax_scale = 0.0883883461 : f32}} {
// BWD-DAG: %[[ZERO:.*]] = arith.constant 0 : index
// BWD-DAG: %[[ONE:.*]] = arith.constant 1 : index
// BWD-DAG: %[[T:.*]] = memref.dim %[[Q]], %[[ZERO]]
// BWD-DAG: %[[H:.*]] = memref.dim %[[Q]], %[[ONE]]
// BWD-DAG: %[[SCALE:.*]] = arith.constant 0.0883883461 : f32
// BWD: %[[RING:.*]] = warpspec.channel "qkvdo" depth(2) : <[64x128xbf16, 64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
// BWD-NEXT: warpspec.partition "load" role(load) warps(4) regs(40) {
// BWD-NEXT: warpspec.tile_loop (%[[ROW:[a-z0-9_]+]], %[[ROWS:[a-z0-9_]+]], %[[HEAD:[a-z0-9_]+]]) in %[[CU]] : memref<?xi32> heads(%[[H]]) tokens(%[[T]]) block_size(64) {
// BWD-NEXT: %[[S_RING:.*]], %[[BUF:.*]]:4 = warpspec.acquire %[[RING]]
// BWD-NEXT: warpspec.tma_load %[[Q]][%[[ROW]], %[[HEAD]]] into %[[BUF]]#0 : memref<?x4x128xbf16>, <64x128xbf16, smem>
// BWD-NEXT: warpspec.tma_load %[[K]][%[[ROW]], %[[HEAD]]] into %[[BUF]]#1
// BWD-NEXT: warpspec.tma_load %[[V]][%[[ROW]], %[[HEAD]]] into %[[BUF]]#2
// BWD-NEXT: warpspec.tma_load %[[DO]][%[[ROW]], %[[HEAD]]] into %[[BUF]]#3
// BWD-NEXT: warpspec.commit %[[S_RING]] tile(%[[ROW]], %[[ROWS]], %[[HEAD]])
// BWD-NEXT: }
// BWD-NEXT: warpspec.close %[[RING]]
// BWD-NEXT: }
// BWD-NEXT: warpspec.partition "compute" role(compute) warps(4) regs(232) replicas(2) {
// BWD-NEXT: %[[PBUF:.*]] = warpspec.scratch : <64x64xbf16, smem>
// BWD-NEXT: %[[DSBUF:.*]] = warpspec.scratch : <64x64xbf16, smem>
// BWD-NEXT: %[[STAGE:.*]] = warpspec.scratch : <64x128xbf16, smem>
// BWD-NEXT: warpspec.consume %[[RING]] (%[[S_RING:[^,]*]], %[[CROW:[a-z0-9_]+]], %[[CROWS:[a-z0-9_]+]], %[[CHEAD:[a-z0-9_]+]], %[[QT:[a-z0-9_]+]], %[[KT:[a-z0-9_]+]], %[[VT:[a-z0-9_]+]], %[[DOT:[a-z0-9_]+]]) : !warpspec.channel<[64x128xbf16, 64x128xbf16, 64x128xbf16, 64x128xbf16], smem> {
// BWD-NEXT: %[[S:.*]] = warpspec.mma %[[QT]], %[[KT]] {transpose_b} : !warpspec.buffer<64x128xbf16, smem>, <64x128xbf16, smem> -> <64x64xf32>
// BWD-NEXT: %[[P:[a-z0-9_]+]], %{{.*}} = warpspec.softmax %[[S]] valid_cols(%[[CROWS]]) valid_rows(%[[CROWS]]) scale(%[[SCALE]]) normalize : <64x64xf32> -> <64x64xf32>, <64xf32>
// BWD-NEXT: warpspec.write %[[P]], %[[PBUF]] : <64x64xf32>, <64x64xbf16, smem>
// BWD-NEXT: %[[DP:.*]] = warpspec.mma %[[DOT]], %[[VT]] {transpose_b} : !warpspec.buffer<64x128xbf16, smem>, <64x128xbf16, smem> -> <64x64xf32>
// BWD-NEXT: %[[DS:.*]] = warpspec.softmax_grad %[[P]], %[[DP]] scale(%[[SCALE]]) : <64x64xf32>, <64x64xf32> -> <64x64xbf16>
// BWD-NEXT: warpspec.write %[[DS]], %[[DSBUF]] : <64x64xbf16>, <64x64xbf16, smem>
// BWD-NEXT: %[[DVT:.*]] = warpspec.mma %[[PBUF]], %[[DOT]] {transpose_a} : !warpspec.buffer<64x64xbf16, smem>, <64x128xbf16, smem> -> <64x128xf32>
// BWD-NEXT: warpspec.store %[[DVT]] to %[[DV]][%[[CROW]], %[[CHEAD]]] rows(%[[CROWS]]) via(%[[STAGE]]) bulk : <64x128xf32>, memref<?x4x128xbf16>, !warpspec.buffer<64x128xbf16, smem>
// BWD-NEXT: %[[DKT:.*]] = warpspec.mma %[[DSBUF]], %[[QT]] {transpose_a} : !warpspec.buffer<64x64xbf16, smem>, <64x128xbf16, smem> -> <64x128xf32>
// BWD-NEXT: warpspec.store %[[DKT]] to %[[DK]][%[[CROW]], %[[CHEAD]]] rows(%[[CROWS]]) via(%[[STAGE]]) bulk : <64x128xf32>, memref<?x4x128xbf16>, !warpspec.buffer<64x128xbf16, smem>
// BWD-NEXT: %[[DQT:.*]] = warpspec.mma %[[DS]], %[[KT]] : !warpspec.acc<64x64xbf16>, <64x128xbf16, smem> -> <64x128xf32>
// BWD-NEXT: warpspec.release %[[S_RING]]
// BWD-NEXT: warpspec.store %[[DQT]] to %[[DQ]][%[[CROW]], %[[CHEAD]]] rows(%[[CROWS]]) via(%[[STAGE]]) bulk : <64x128xf32>, memref<?x4x128xbf16>, !warpspec.buffer<64x128xbf16, smem>
// BWD-NEXT: }
// BWD-NEXT: }
// BWD-NEXT: }
// BWD-NEXT: return

// Staged stores without bulk: the same body, plain via.
// BWD-OSMEM-LABEL: func.func @backward_seed_d128
// BWD-OSMEM: warpspec.channel "qkvdo" depth(2) :
// BWD-OSMEM: %[[STAGE:.*]] = warpspec.scratch : <64x128xbf16, smem>
// BWD-OSMEM-COUNT-3: warpspec.store %{{.*}} via(%[[STAGE]]) : <64x128xf32>, memref<?x4x128xbf16>, !warpspec.buffer<64x128xbf16, smem>{{$}}

// Outputs stored from registers: P and dS buffers only, stores without via;
// the ring does not get deeper (3 slots fit, not a multiple of 2).
// BWD-OREGS-LABEL: func.func @backward_seed_d128
// BWD-OREGS: warpspec.channel "qkvdo" depth(2) :
// BWD-OREGS: warpspec.partition "compute" role(compute) warps(4) regs(232) replicas(2) {
// BWD-OREGS-NEXT: warpspec.scratch : <64x64xbf16, smem>
// BWD-OREGS-NEXT: warpspec.scratch : <64x64xbf16, smem>
// BWD-OREGS-NEXT: warpspec.consume
// BWD-OREGS-COUNT-3: warpspec.store %{{.*}} rows(%{{.*}}) : <64x128xf32>, memref<?x4x128xbf16>{{$}}

// One consumer: 256 registers, and 3 slots fit next to its 32 KiB.
// BWD-ONEWG-LABEL: func.func @backward_seed_d128
// BWD-ONEWG: warpspec.channel "qkvdo" depth(3) :
// BWD-ONEWG: warpspec.partition "compute" role(compute) warps(4) regs(256) {
!act = memref<?x4x128xbf16>
func.func @backward_seed_d128(%q: !act, %k: !act, %v: !act, %do: !act,
                              %dq: !act, %dk: !act, %dv: !act,
                              %cu: memref<?xi32>) {
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}

//--- backward-d64.mlir

// f16, head_dim 64, 8 heads, a run-time scale (a named parameter, no
// softmax_scale in the info): 32 KiB slots, a 4-slot ring; every buffer and
// tile is 64x64 f16 (P is still f32 in registers, written as f16).
// BWD-LABEL: func.func @backward_f16_d64
// BWD-SAME: (%[[Q:[a-z0-9_]+]]: memref<?x8x64xf16> {blockattn.name = "q"}
// BWD-SAME: %[[K:[a-z0-9_]+]]: memref<?x8x64xf16> {blockattn.name = "k"}
// BWD-SAME: %[[V:[a-z0-9_]+]]: memref<?x8x64xf16> {blockattn.name = "v"}
// BWD-SAME: %[[DO:[a-z0-9_]+]]: memref<?x8x64xf16> {blockattn.name = "do"}
// BWD-SAME: %[[DQ:[a-z0-9_]+]]: memref<?x8x64xf16> {blockattn.name = "dq"}
// BWD-SAME: %[[DK:[a-z0-9_]+]]: memref<?x8x64xf16> {blockattn.name = "dk"}
// BWD-SAME: %[[DV:[a-z0-9_]+]]: memref<?x8x64xf16> {blockattn.name = "dv"}
// BWD-SAME: %[[CU:[a-z0-9_]+]]: memref<?xi32> {blockattn.name = "cu_seqlens"}
// BWD-SAME: %[[SCALE:[a-z0-9_]+]]: f32 {blockattn.name = "softmax_scale"})
// BWD: warpspec.kernel chip(sm_90a) attributes {info = {block_size = 64 : i64, element_type = f16, head_dim = 64 : i64, kind = "backward", rotary = "none"}} {
// BWD-NOT: arith.constant {{.*}} : f32
// BWD: %[[RING:.*]] = warpspec.channel "qkvdo" depth(4) : <[64x64xf16, 64x64xf16, 64x64xf16, 64x64xf16], smem>
// BWD: warpspec.tile_loop ({{.*}}) in %[[CU]]
// BWD: warpspec.tma_load %[[DO]][{{.*}}] into %{{.*}}#3 : memref<?x8x64xf16>, <64x64xf16, smem>
// BWD: warpspec.partition "compute" role(compute) warps(4) regs(232) replicas(2) {
// BWD-NEXT: %[[PBUF:.*]] = warpspec.scratch : <64x64xf16, smem>
// BWD-NEXT: %[[DSBUF:.*]] = warpspec.scratch : <64x64xf16, smem>
// BWD-NEXT: %[[STAGE:.*]] = warpspec.scratch : <64x64xf16, smem>
// BWD-NEXT: warpspec.consume %[[RING]] (%[[S_RING:[^,]*]], %{{.*}}, %[[CROWS:[a-z0-9_]+]], %{{.*}}, %[[QT:[a-z0-9_]+]], %[[KT:[a-z0-9_]+]], %[[VT:[a-z0-9_]+]], %[[DOT:[a-z0-9_]+]]) :
// BWD-NEXT: %[[S:.*]] = warpspec.mma %[[QT]], %[[KT]] {transpose_b} : !warpspec.buffer<64x64xf16, smem>, <64x64xf16, smem> -> <64x64xf32>
// BWD-NEXT: %[[P:[a-z0-9_]+]], %{{.*}} = warpspec.softmax %[[S]] valid_cols(%[[CROWS]]) valid_rows(%[[CROWS]]) scale(%[[SCALE]]) normalize : <64x64xf32> -> <64x64xf32>, <64xf32>
// BWD-NEXT: warpspec.write %[[P]], %[[PBUF]] : <64x64xf32>, <64x64xf16, smem>
// BWD-NEXT: %[[DP:.*]] = warpspec.mma %[[DOT]], %[[VT]] {transpose_b} : !warpspec.buffer<64x64xf16, smem>, <64x64xf16, smem> -> <64x64xf32>
// BWD-NEXT: %[[DS:.*]] = warpspec.softmax_grad %[[P]], %[[DP]] scale(%[[SCALE]]) : <64x64xf32>, <64x64xf32> -> <64x64xf16>
// BWD-NEXT: warpspec.write %[[DS]], %[[DSBUF]] : <64x64xf16>, <64x64xf16, smem>
// BWD-NEXT: %[[DVT:.*]] = warpspec.mma %[[PBUF]], %[[DOT]] {transpose_a} : !warpspec.buffer<64x64xf16, smem>, <64x64xf16, smem> -> <64x64xf32>
// BWD-NEXT: warpspec.store %[[DVT]] to %[[DV]][{{.*}}] rows(%[[CROWS]]) via(%[[STAGE]]) bulk : <64x64xf32>, memref<?x8x64xf16>, !warpspec.buffer<64x64xf16, smem>
// BWD-NEXT: %[[DKT:.*]] = warpspec.mma %[[DSBUF]], %[[QT]] {transpose_a} : !warpspec.buffer<64x64xf16, smem>, <64x64xf16, smem> -> <64x64xf32>
// BWD-NEXT: warpspec.store %[[DKT]] to %[[DK]][{{.*}}] rows(%[[CROWS]]) via(%[[STAGE]]) bulk : <64x64xf32>, memref<?x8x64xf16>, !warpspec.buffer<64x64xf16, smem>
// BWD-NEXT: %[[DQT:.*]] = warpspec.mma %[[DS]], %[[KT]] : !warpspec.acc<64x64xf16>, <64x64xf16, smem> -> <64x64xf32>
// BWD-NEXT: warpspec.release %[[S_RING]]
// BWD-NEXT: warpspec.store %[[DQT]] to %[[DQ]][{{.*}}] rows(%[[CROWS]]) via(%[[STAGE]]) bulk : <64x64xf32>, memref<?x8x64xf16>, !warpspec.buffer<64x64xf16, smem>
// BWD-NEXT: }

// BWD-OSMEM-LABEL: func.func @backward_f16_d64
// BWD-OSMEM: warpspec.channel "qkvdo" depth(4) :
// BWD-OREGS-LABEL: func.func @backward_f16_d64
// BWD-OREGS: warpspec.channel "qkvdo" depth(6) :
// BWD-ONEWG-LABEL: func.func @backward_f16_d64
// BWD-ONEWG: warpspec.channel "qkvdo" depth(6) :
// BWD-ONEWG: warpspec.partition "compute" role(compute) warps(4) regs(256) {

// The default launch: chunked, two CTAs per SM of 128 registers a thread at
// launch, one consumer of 216 after setmaxnreg; a ring of one 64 KiB slot
// and three tiles a CTA at head_dim 128, two 32 KiB slots and six tiles at
// head_dim 64 (about 192 KiB of loads a CTA).
// BWD-DEFAULT-LABEL: func.func @backward_seed_d128
// BWD-DEFAULT: warpspec.kernel chip(sm_90a) attributes {ctas_per_sm = 2 : i64, {{.*}}, tiles_per_cta = 3 : i64} {
// BWD-DEFAULT: warpspec.channel "qkvdo" depth(1) :
// BWD-DEFAULT: warpspec.tile_loop {{.*}} block_size(64) contiguous {
// BWD-DEFAULT-NEXT: warpspec.acquire %{{[0-9a-z_]+}} : <
// BWD-DEFAULT: warpspec.partition "compute" role(compute) warps(4) regs(216) {
// BWD-DEFAULT-LABEL: func.func @backward_f16_d64
// BWD-DEFAULT: warpspec.kernel chip(sm_90a) attributes {ctas_per_sm = 2 : i64, {{.*}}, tiles_per_cta = 6 : i64} {
// BWD-DEFAULT: warpspec.channel "qkvdo" depth(2) :
// BWD-DEFAULT: warpspec.tile_loop {{.*}} block_size(64) contiguous {
// BWD-DEFAULT-NEXT: warpspec.acquire %{{.*}} {l2_prefetch} : <
// BWD-DEFAULT: warpspec.partition "compute" role(compute) warps(4) regs(216) {
// BWD-DEFAULT-NOPF-LABEL: func.func @backward_f16_d64
// BWD-DEFAULT-NOPF: warpspec.kernel chip(sm_90a) attributes {ctas_per_sm = 2 : i64, {{.*}}, tiles_per_cta = 6 : i64} {
// FWD-PF-LABEL: func.func @forward_seed_d128
// FWD-PF: warpspec.acquire %{{.*}} {l2_prefetch} : <
// FWD-PF-LABEL: func.func @forward_f16_d64
// FWD-PF: warpspec.acquire %{{.*}} {l2_prefetch} : <
// FWD-NOPF-LABEL: func.func @forward_seed_d128

// BWD-PERSISTENT-LABEL: func.func @backward_seed_d128
// BWD-PERSISTENT: warpspec.partition "compute" role(compute) warps(4) regs(232) replicas(2) {
// BWD-PERSISTENT-LABEL: func.func @backward_f16_d64
// BWD-PERSISTENT: warpspec.channel "qkvdo" depth(6) :
// BWD-PERSISTENT: warpspec.partition "compute" role(compute) warps(4) regs(256) {

// Three consumers fit at head_dim 64: 152 registers each, 3 slots.
// BWD64-THREEWG-LABEL: func.func @backward_f16_d64
// BWD64-THREEWG: warpspec.channel "qkvdo" depth(3) :
// BWD64-THREEWG: warpspec.partition "compute" role(compute) warps(4) regs(152) replicas(3) {
// BWD64-THREEWG-COUNT-3: warpspec.scratch : <64x64xf16, smem>
// BWD64-THREEWG-NEXT: warpspec.consume
!act64 = memref<?x8x64xf16>
func.func @backward_f16_d64(%q: !act64, %k: !act64, %v: !act64, %do: !act64,
                            %dq: !act64, %dk: !act64, %dv: !act64,
                            %cu: memref<?xi32>, %scale: f32) {
  blockattn.backward q(%q : !act64) k(%k : !act64) v(%v : !act64)
      do(%do : !act64) dq(%dq : !act64) dk(%dk : !act64) dv(%dv : !act64)
      cu_seqlens(%cu : memref<?xi32>) scale(%scale : f32)
      {head_dim = 64 : i64, element_type = f16}
  return
}
