// RUN: split-file %s %t
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_100a" | FileCheck %s --implicit-check-not=blockattn.forward
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_100a o-store=smem schedule=contiguous" | FileCheck %s --check-prefix=OSMEM --implicit-check-not=bulk
// The MMA warp is the Q/K/V ring's only consumer: any depth, odd ones
// included, is taken as given.
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_100a num-stages=3" | FileCheck %s --check-prefix=STAGES3
// The launch on sm_100a: chunked on request (one CTA per SM at a time, about
// 192 KiB of loads a CTA: 4 tiles at head dim 128, 8 at 64), and the L2
// prefetch on request; neither by default.
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_100a schedule=chunked l2-prefetch=on" | FileCheck %s --check-prefix=CHUNKED --implicit-check-not=ctas_per_sm
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_100a" | FileCheck %s --check-prefix=PERSISTENT --implicit-check-not=tiles_per_cta --implicit-check-not=l2_prefetch --implicit-check-not=contiguous
// CHUNKED: warpspec.kernel chip(sm_100a) attributes {{{.*}}head_dim = 128 : i64{{.*}}tiles_per_cta = 4 : i64} {
// CHUNKED: warpspec.tile_loop {{.*}} block_size(64) contiguous {
// CHUNKED-NEXT: warpspec.acquire %{{.*}} {l2_prefetch}
// CHUNKED: warpspec.kernel chip(sm_100a) attributes {{{.*}}head_dim = 64 : i64{{.*}}tiles_per_cta = 8 : i64} {
// CHUNKED: warpspec.tile_loop {{.*}} block_size(64) contiguous {
// CHUNKED-NEXT: warpspec.acquire %{{.*}} {l2_prefetch}
// PERSISTENT-COUNT-2: warpspec.kernel chip(sm_100a)
// RUN: block-attn-opt %t/backward.mlir -blockattn-warp-specialize="chip=sm_100a" | FileCheck %s --check-prefix=BWD --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %t/backward.mlir -blockattn-warp-specialize="chip=sm_100a o-store=smem" | FileCheck %s --check-prefix=BWD-OSMEM --implicit-check-not=bulk

// blockattn-warp-specialize{chip=sm_100a}: the Blackwell recipes
// (docs/blackwell.md). Four warpgroups, 512 threads: a TMA load warpgroup and
// an MMA warpgroup (one thread of each works; 40 registers) and two softmax
// replicas that take the tiles round-robin, with
// (65536 / 128 - 80) / 2 = 216 registers each. Accumulators live in
// tensor-memory rings two slots deep (s, p, o; backward s, dp, dv, dk, dq),
// produced by the MMA warp (mma_async, commit) and read by the softmax
// warpgroups (tmem_load); the forward's P goes back through tensor memory
// (tmem_store, the A operand of O = P V), the backward's P and dS through
// shared memory (the "pds" ring, written by the softmax replicas, read by
// the MMA warp as transposed A operands). Outputs leave through a staging
// buffer per replica, with bulk stores of full tiles by default
// (o-store=tma) or without (o-store=smem).
//
// Ring depth: as many Q/K/V(/dO) slots as fit in 227 KiB less 2 KiB and the
// scratch (two staging buffers of 64 x head_dim, and in the backward the
// two P/dS slots, 16 KiB each), at most 8: forward 4 (head_dim 128, 48 KiB
// slots) or 8 (head_dim 64); backward 2 (128, 64 KiB slots) or 5 (64).

//--- forward.mlir

!act = memref<?x4x128xbf16>
!act64 = memref<?x?x64xf16>
!cu = memref<?xi32>

// The seed forward (bf16, head_dim 128, constant scale): the whole kernel.
// CHECK-LABEL: func.func @forward_bf16_d128
// CHECK-SAME: %[[Q:[a-z0-9]+]]: memref<?x4x128xbf16> {blockattn.name = "q"}
// CHECK-SAME: %[[K:[a-z0-9]+]]: memref<?x4x128xbf16> {blockattn.name = "k"}
// CHECK-SAME: %[[V:[a-z0-9]+]]: memref<?x4x128xbf16> {blockattn.name = "v"}
// CHECK-SAME: %[[O:[a-z0-9]+]]: memref<?x4x128xbf16> {blockattn.name = "o"}
// CHECK-SAME: %[[CU:[a-z0-9]+]]: memref<?xi32> {blockattn.name = "cu_seqlens"}
// CHECK-NEXT: warpspec.kernel chip(sm_100a) attributes {info = {block_size = 64 : i64, element_type = bf16, head_dim = 128 : i64, kind = "forward", rotary = "none", softmax_scale = 0.0883883461 : f32}} {
// CHECK: %[[T:.*]] = memref.dim %[[Q]], %{{.*}} : memref<?x4x128xbf16>
// CHECK-NEXT: %[[H:.*]] = memref.dim %[[Q]], %{{.*}} : memref<?x4x128xbf16>
// CHECK-NEXT: %[[SCALE:.*]] = arith.constant 0.0883883461 : f32
// The rings, unplaced (warpspec-allocate-tmem and -smem place them).
// CHECK-NEXT: %[[QKV:.*]] = warpspec.channel "qkv" depth(4) : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
// CHECK-NEXT: %[[S:.*]] = warpspec.channel "s" depth(2) : <[64x64xf32], tmem>
// CHECK-NEXT: %[[P:.*]] = warpspec.channel "p" depth(2) : <[64x64xbf16], tmem>
// CHECK-NEXT: %[[OR:.*]] = warpspec.channel "o" depth(2) : <[64x128xf32], tmem>
// Load: Q, K and V of every tile into the ring, which it closes at the end.
// CHECK-NEXT: warpspec.partition "load" role(load) warps(4) regs(40) {
// CHECK-NEXT: warpspec.tile_loop (%[[ROW:.*]], %[[ROWS:.*]], %[[HEAD:.*]]) in %[[CU]] : memref<?xi32> heads(%[[H]]) tokens(%[[T]]) block_size(64) {
// CHECK-NEXT: %[[S_QKV:.*]], %[[B:.*]]:3 = warpspec.acquire %[[QKV]]
// CHECK-NEXT: warpspec.tma_load %[[Q]][%[[ROW]], %[[HEAD]]] into %[[B]]#0 : memref<?x4x128xbf16>, <64x128xbf16, smem>
// CHECK-NEXT: warpspec.tma_load %[[K]][%[[ROW]], %[[HEAD]]] into %[[B]]#1
// CHECK-NEXT: warpspec.tma_load %[[V]][%[[ROW]], %[[HEAD]]] into %[[B]]#2
// CHECK-NEXT: warpspec.commit %[[S_QKV]] tile(%[[ROW]], %[[ROWS]], %[[HEAD]])
// CHECK-NEXT: }
// CHECK-NEXT: warpspec.close %[[QKV]]
// CHECK-NEXT: }
// MMA: per tile, S = Q K^T into an s slot (committed: the commit tracks the
// MMAs), then the P the softmax wrote (get), O = P V into an o slot, and
// P and Q/K/V given back once those MMAs complete. It closes s (the
// softmax loop's ring); p and o are read with get and never closed.
// CHECK-NEXT: warpspec.partition "mma" role(mma) warps(4) regs(40) {
// CHECK-NEXT: warpspec.consume %[[QKV]] (%[[S_QKV:[^,]*]], %[[MR:.*]], %[[MRS:.*]], %[[MH:.*]], %[[MQ:.*]], %[[MK:.*]], %[[MV:.*]]) : !warpspec.channel<[64x128xbf16, 64x128xbf16, 64x128xbf16], smem> {
// CHECK-NEXT: %[[S_S:.*]], %[[SB:.*]] = warpspec.acquire %[[S]] : <[64x64xf32], tmem>
// CHECK-NEXT: warpspec.mma_async %[[MQ]], %[[MK]] into %[[SB]] {transpose_b} : <64x128xbf16, smem>, <64x128xbf16, smem>, <64x64xf32, tmem>
// CHECK-NEXT: warpspec.commit %[[S_S]] tile(%[[MR]], %[[MRS]], %[[MH]])
// CHECK-NEXT: %[[S_P:.*]], %[[PB:.*]] = warpspec.get %[[P]] : <[64x64xbf16], tmem>
// CHECK-NEXT: %[[S_OR:.*]], %[[OB:.*]] = warpspec.acquire %[[OR]] : <[64x128xf32], tmem>
// CHECK-NEXT: warpspec.mma_async %[[PB]], %[[MV]] into %[[OB]] : <64x64xbf16, tmem>, <64x128xbf16, smem>, <64x128xf32, tmem>
// CHECK-NEXT: warpspec.commit %[[S_OR]] tile(%[[MR]], %[[MRS]], %[[MH]])
// CHECK-NEXT: warpspec.release %[[S_P]] after_mma
// CHECK-NEXT: warpspec.release %[[S_QKV]] after_mma
// CHECK-NEXT: }
// CHECK-NEXT: warpspec.close %[[S]] : <[64x64xf32], tmem>
// CHECK-NEXT: }
// Softmax x2: S out of tensor memory (the slot is free again at once), the
// exact softmax, P (bf16, unnormalized) into a p slot, then O out of its
// slot, divided by the row sums, staged and stored.
// CHECK-NEXT: warpspec.partition "softmax" role(softmax) warps(4) regs(216) replicas(2) {
// CHECK-NEXT: %[[STAGE:.*]] = warpspec.scratch : <64x128xbf16, smem>
// CHECK-NEXT: warpspec.consume %[[S]] (%[[S_S:[^,]*]], %[[SR:.*]], %[[SRS:.*]], %[[SH:.*]], %[[SSLOT:.*]]) : !warpspec.channel<[64x64xf32], tmem> {
// CHECK-NEXT: %[[SV:.*]] = warpspec.tmem_load %[[SSLOT]] : <64x64xf32, tmem> -> <64x64xf32>
// CHECK-NEXT: warpspec.release %[[S_S]]
// CHECK-NEXT: %[[PR:.*]], %[[L:.*]] = warpspec.softmax %[[SV]] valid_cols(%[[SRS]]) scale(%[[SCALE]]) : <64x64xf32> -> <64x64xbf16>, <64xf32>
// CHECK-NEXT: %[[S_P:.*]], %[[PSLOT:.*]] = warpspec.acquire %[[P]] : <[64x64xbf16], tmem>
// CHECK-NEXT: warpspec.tmem_store %[[PR]], %[[PSLOT]] : <64x64xbf16>, <64x64xbf16, tmem>
// CHECK-NEXT: warpspec.commit %[[S_P]] tile(%[[SR]], %[[SRS]], %[[SH]])
// CHECK-NEXT: %[[S_OR:.*]], %[[OSLOT:.*]] = warpspec.get %[[OR]] : <[64x128xf32], tmem>
// CHECK-NEXT: %[[OV:.*]] = warpspec.tmem_load %[[OSLOT]] : <64x128xf32, tmem> -> <64x128xf32>
// CHECK-NEXT: warpspec.release %[[S_OR]]
// CHECK-NEXT: warpspec.store %[[OV]] to %[[O]][%[[SR]], %[[SH]]] rows(%[[SRS]]) divide_by(%[[L]]) via(%[[STAGE]]) bulk : <64x128xf32>, memref<?x4x128xbf16>, !warpspec.rows<64xf32>, !warpspec.buffer<64x128xbf16, smem>
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @forward_bf16_d128(%q: !act, %k: !act, %v: !act, %o: !act,
                             %cu: !cu) {
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : !cu) {head_dim = 128 : i64, element_type = bf16}
  return
}

// f16, head_dim 64, a dynamic head count and a run-time scale (a kernel
// parameter: no softmax_scale in the info): eight 24 KiB slots, 64-column
// tiles everywhere, P in f16.
// CHECK-LABEL: func.func @forward_f16_d64
// CHECK-SAME: %[[SCALE:[a-z0-9]+]]: f32 {blockattn.name = "softmax_scale"}
// CHECK-NEXT: warpspec.kernel chip(sm_100a) attributes {info = {block_size = 64 : i64, element_type = f16, head_dim = 64 : i64, kind = "forward", rotary = "none"}} {
// CHECK: warpspec.channel "qkv" depth(8) : <[64x64xf16, 64x64xf16, 64x64xf16], smem>
// CHECK-NEXT: warpspec.channel "s" depth(2) : <[64x64xf32], tmem>
// CHECK-NEXT: warpspec.channel "p" depth(2) : <[64x64xf16], tmem>
// CHECK-NEXT: warpspec.channel "o" depth(2) : <[64x64xf32], tmem>
// CHECK: warpspec.mma_async %{{.*}}, %{{.*}} into %{{.*}} {transpose_b} : <64x64xf16, smem>, <64x64xf16, smem>, <64x64xf32, tmem>
// CHECK: warpspec.mma_async %{{.*}}, %{{.*}} into %{{.*}} : <64x64xf16, tmem>, <64x64xf16, smem>, <64x64xf32, tmem>
// CHECK: warpspec.partition "softmax" role(softmax) warps(4) regs(216) replicas(2) {
// CHECK-NEXT: warpspec.scratch : <64x64xf16, smem>
// CHECK: warpspec.softmax %{{.*}} valid_cols(%{{.*}}) scale(%[[SCALE]]) : <64x64xf32> -> <64x64xf16>, <64xf32>
// CHECK: warpspec.store {{.*}} bulk : <64x64xf32>, memref<?x?x64xf16>, !warpspec.rows<64xf32>, !warpspec.buffer<64x64xf16, smem>
func.func @forward_f16_d64(%q: !act64, %k: !act64, %v: !act64, %o: !act64,
                           %cu: !cu, %scale: f32) {
  blockattn.forward q(%q : !act64) k(%k : !act64) v(%v : !act64) o(%o : !act64)
      cu_seqlens(%cu : !cu) scale(%scale : f32)
      {head_dim = 64 : i64, element_type = f16}
  return
}

// o-store=smem: the same staging, no bulk store; schedule=contiguous: each
// CTA takes one range of tiles.
// OSMEM-LABEL: func.func @forward_bf16_d128
// OSMEM: warpspec.channel "qkv" depth(4)
// OSMEM: warpspec.tile_loop ({{.*}}) in %{{.*}} : memref<?xi32> heads(%{{.*}}) tokens(%{{.*}}) block_size(64) contiguous {
// OSMEM: warpspec.partition "softmax" role(softmax) warps(4) regs(216) replicas(2) {
// OSMEM-NEXT: %[[STAGE:.*]] = warpspec.scratch : <64x128xbf16, smem>
// OSMEM: warpspec.store %{{.*}} divide_by(%{{.*}}) via(%[[STAGE]]) : <64x128xf32>
// OSMEM-LABEL: func.func @forward_f16_d64
// OSMEM: warpspec.channel "qkv" depth(8)
// OSMEM: contiguous {

// STAGES3-LABEL: func.func @forward_bf16_d128
// STAGES3: warpspec.channel "qkv" depth(3) : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
// STAGES3-LABEL: func.func @forward_f16_d64
// STAGES3: warpspec.channel "qkv" depth(3) : <[64x64xf16, 64x64xf16, 64x64xf16], smem>

//--- backward.mlir

!act = memref<?x4x128xbf16>
!act64 = memref<?x8x64xf16>
!cu = memref<?xi32>

// The seed backward (bf16, head_dim 128): the whole kernel.
// BWD-LABEL: func.func @backward_bf16_d128
// BWD-SAME: %[[Q:[a-z0-9]+]]: memref<?x4x128xbf16> {blockattn.name = "q"}
// BWD-SAME: %[[K:[a-z0-9]+]]: memref<?x4x128xbf16> {blockattn.name = "k"}
// BWD-SAME: %[[V:[a-z0-9]+]]: memref<?x4x128xbf16> {blockattn.name = "v"}
// BWD-SAME: %[[DO:[a-z0-9]+]]: memref<?x4x128xbf16> {blockattn.name = "do"}
// BWD-SAME: %[[DQ:[a-z0-9]+]]: memref<?x4x128xbf16> {blockattn.name = "dq"}
// BWD-SAME: %[[DK:[a-z0-9]+]]: memref<?x4x128xbf16> {blockattn.name = "dk"}
// BWD-SAME: %[[DV:[a-z0-9]+]]: memref<?x4x128xbf16> {blockattn.name = "dv"}
// BWD-SAME: %[[CU:[a-z0-9]+]]: memref<?xi32> {blockattn.name = "cu_seqlens"}
// BWD-NEXT: warpspec.kernel chip(sm_100a) attributes {info = {block_size = 64 : i64, element_type = bf16, head_dim = 128 : i64, kind = "backward", rotary = "none", softmax_scale = 0.0883883461 : f32}} {
// BWD: %[[SCALE:.*]] = arith.constant 0.0883883461 : f32
// BWD-NEXT: %[[RING:.*]] = warpspec.channel "qkvdo" depth(2) : <[64x128xbf16, 64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
// BWD-NEXT: %[[S:.*]] = warpspec.channel "s" depth(2) : <[64x64xf32], tmem>
// BWD-NEXT: %[[DP:.*]] = warpspec.channel "dp" depth(2) : <[64x64xf32], tmem>
// BWD-NEXT: %[[DVR:.*]] = warpspec.channel "dv" depth(2) : <[64x128xf32], tmem>
// BWD-NEXT: %[[DKR:.*]] = warpspec.channel "dk" depth(2) : <[64x128xf32], tmem>
// BWD-NEXT: %[[DQR:.*]] = warpspec.channel "dq" depth(2) : <[64x128xf32], tmem>
// BWD-NEXT: %[[PDS:.*]] = warpspec.channel "pds" depth(2) : <[64x64xbf16, 64x64xbf16], smem>
// Load: Q, K, V and dO.
// BWD-NEXT: warpspec.partition "load" role(load) warps(4) regs(40) {
// BWD-NEXT: warpspec.tile_loop (%[[ROW:.*]], %[[ROWS:.*]], %[[HEAD:.*]]) in %[[CU]]
// BWD-NEXT: %[[S_RING:.*]], %[[B:.*]]:4 = warpspec.acquire %[[RING]]
// BWD-NEXT: warpspec.tma_load %[[Q]][%[[ROW]], %[[HEAD]]] into %[[B]]#0
// BWD-NEXT: warpspec.tma_load %[[K]][%[[ROW]], %[[HEAD]]] into %[[B]]#1
// BWD-NEXT: warpspec.tma_load %[[V]][%[[ROW]], %[[HEAD]]] into %[[B]]#2
// BWD-NEXT: warpspec.tma_load %[[DO]][%[[ROW]], %[[HEAD]]] into %[[B]]#3
// BWD-NEXT: warpspec.commit %[[S_RING]] tile(%[[ROW]], %[[ROWS]], %[[HEAD]])
// BWD-NEXT: }
// BWD-NEXT: warpspec.close %[[RING]]
// BWD-NEXT: }
// MMA: S = Q K^T and dP = dO V^T (K-major), then, with the P and dS a
// compute replica staged: dV = P^T dO and dK = dS^T Q (A read transposed)
// and dQ = dS K, each into its own ring; P/dS and Q/K/V/dO are given back
// when the MMAs complete.
// BWD-NEXT: warpspec.partition "mma" role(mma) warps(4) regs(40) {
// BWD-NEXT: warpspec.consume %[[RING]] (%[[S_RING:[^,]*]], %[[MR:.*]], %[[MRS:.*]], %[[MH:.*]], %[[MQ:.*]], %[[MK:.*]], %[[MV:.*]], %[[MDO:.*]]) : !warpspec.channel<[64x128xbf16, 64x128xbf16, 64x128xbf16, 64x128xbf16], smem> {
// BWD-NEXT: %[[S_S:.*]], %[[SB:.*]] = warpspec.acquire %[[S]] : <[64x64xf32], tmem>
// BWD-NEXT: warpspec.mma_async %[[MQ]], %[[MK]] into %[[SB]] {transpose_b} : <64x128xbf16, smem>, <64x128xbf16, smem>, <64x64xf32, tmem>
// BWD-NEXT: warpspec.commit %[[S_S]] tile(%[[MR]], %[[MRS]], %[[MH]])
// BWD-NEXT: %[[S_DP:.*]], %[[DPB:.*]] = warpspec.acquire %[[DP]] : <[64x64xf32], tmem>
// BWD-NEXT: warpspec.mma_async %[[MDO]], %[[MV]] into %[[DPB]] {transpose_b} : <64x128xbf16, smem>, <64x128xbf16, smem>, <64x64xf32, tmem>
// BWD-NEXT: warpspec.commit %[[S_DP]] tile(%[[MR]], %[[MRS]], %[[MH]])
// BWD-NEXT: %[[S_PDS:.*]], %[[PD:.*]]:2 = warpspec.get %[[PDS]] : <[64x64xbf16, 64x64xbf16], smem>
// BWD-NEXT: %[[S_DVR:.*]], %[[DVB:.*]] = warpspec.acquire %[[DVR]] : <[64x128xf32], tmem>
// BWD-NEXT: warpspec.mma_async %[[PD]]#0, %[[MDO]] into %[[DVB]] {transpose_a} : <64x64xbf16, smem>, <64x128xbf16, smem>, <64x128xf32, tmem>
// BWD-NEXT: warpspec.commit %[[S_DVR]] tile(%[[MR]], %[[MRS]], %[[MH]])
// BWD-NEXT: %[[S_DKR:.*]], %[[DKB:.*]] = warpspec.acquire %[[DKR]] : <[64x128xf32], tmem>
// BWD-NEXT: warpspec.mma_async %[[PD]]#1, %[[MQ]] into %[[DKB]] {transpose_a} : <64x64xbf16, smem>, <64x128xbf16, smem>, <64x128xf32, tmem>
// BWD-NEXT: warpspec.commit %[[S_DKR]] tile(%[[MR]], %[[MRS]], %[[MH]])
// BWD-NEXT: %[[S_DQR:.*]], %[[DQB:.*]] = warpspec.acquire %[[DQR]] : <[64x128xf32], tmem>
// BWD-NEXT: warpspec.mma_async %[[PD]]#1, %[[MK]] into %[[DQB]] : <64x64xbf16, smem>, <64x128xbf16, smem>, <64x128xf32, tmem>
// BWD-NEXT: warpspec.commit %[[S_DQR]] tile(%[[MR]], %[[MRS]], %[[MH]])
// BWD-NEXT: warpspec.release %[[S_PDS]] after_mma
// BWD-NEXT: warpspec.release %[[S_RING]] after_mma
// BWD-NEXT: }
// BWD-NEXT: warpspec.close %[[S]]
// BWD-NEXT: }
// Compute x2: S and dP out of tensor memory; P normalized with the rows
// past the tile zeroed (f32), dS = scale P (dP - rowsum(P dP)) in bf16; P
// and dS into a pds slot; then dV, dK, dQ out of their rings, each staged
// and stored (the same staging buffer in turn).
// BWD-NEXT: warpspec.partition "softmax" role(softmax) warps(4) regs(216) replicas(2) {
// BWD-NEXT: %[[STAGE:.*]] = warpspec.scratch : <64x128xbf16, smem>
// BWD-NEXT: warpspec.consume %[[S]] (%[[S_S:[^,]*]], %[[CR:.*]], %[[CRS:.*]], %[[CH:.*]], %[[SSLOT:.*]]) : !warpspec.channel<[64x64xf32], tmem> {
// BWD-NEXT: %[[SV:.*]] = warpspec.tmem_load %[[SSLOT]] : <64x64xf32, tmem> -> <64x64xf32>
// BWD-NEXT: warpspec.release %[[S_S]]
// BWD-NEXT: %[[S_DP:.*]], %[[DPSLOT:.*]] = warpspec.get %[[DP]] : <[64x64xf32], tmem>
// BWD-NEXT: %[[DPV:.*]] = warpspec.tmem_load %[[DPSLOT]] : <64x64xf32, tmem> -> <64x64xf32>
// BWD-NEXT: warpspec.release %[[S_DP]]
// BWD-NEXT: %[[PV:.*]], %{{.*}} = warpspec.softmax %[[SV]] valid_cols(%[[CRS]]) valid_rows(%[[CRS]]) scale(%[[SCALE]]) normalize : <64x64xf32> -> <64x64xf32>, <64xf32>
// BWD-NEXT: %[[DSV:.*]] = warpspec.softmax_grad %[[PV]], %[[DPV]] scale(%[[SCALE]]) : <64x64xf32>, <64x64xf32> -> <64x64xbf16>
// BWD-NEXT: %[[S_PDS:.*]], %[[W:.*]]:2 = warpspec.acquire %[[PDS]]
// BWD-NEXT: warpspec.write %[[PV]], %[[W]]#0 : <64x64xf32>, <64x64xbf16, smem>
// BWD-NEXT: warpspec.write %[[DSV]], %[[W]]#1 : <64x64xbf16>, <64x64xbf16, smem>
// BWD-NEXT: warpspec.commit %[[S_PDS]] tile(%[[CR]], %[[CRS]], %[[CH]])
// BWD-NEXT: %[[S_DVR:.*]], %[[G1:.*]] = warpspec.get %[[DVR]]
// BWD-NEXT: %[[V1:.*]] = warpspec.tmem_load %[[G1]] : <64x128xf32, tmem> -> <64x128xf32>
// BWD-NEXT: warpspec.release %[[S_DVR]]
// BWD-NEXT: warpspec.store %[[V1]] to %[[DV]][%[[CR]], %[[CH]]] rows(%[[CRS]]) via(%[[STAGE]]) bulk : <64x128xf32>, memref<?x4x128xbf16>, !warpspec.buffer<64x128xbf16, smem>
// BWD-NEXT: %[[S_DKR:.*]], %[[G2:.*]] = warpspec.get %[[DKR]]
// BWD-NEXT: %[[V2:.*]] = warpspec.tmem_load %[[G2]]
// BWD-NEXT: warpspec.release %[[S_DKR]]
// BWD-NEXT: warpspec.store %[[V2]] to %[[DK]][%[[CR]], %[[CH]]] rows(%[[CRS]]) via(%[[STAGE]]) bulk
// BWD-NEXT: %[[S_DQR:.*]], %[[G3:.*]] = warpspec.get %[[DQR]]
// BWD-NEXT: %[[V3:.*]] = warpspec.tmem_load %[[G3]]
// BWD-NEXT: warpspec.release %[[S_DQR]]
// BWD-NEXT: warpspec.store %[[V3]] to %[[DQ]][%[[CR]], %[[CH]]] rows(%[[CRS]]) via(%[[STAGE]]) bulk
// BWD-NEXT: }
// BWD-NEXT: }
// BWD-NEXT: }
// BWD-NEXT: return
func.func @backward_bf16_d128(%q: !act, %k: !act, %v: !act, %do: !act,
                              %dq: !act, %dk: !act, %dv: !act, %cu: !cu) {
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act) cu_seqlens(%cu : !cu)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

// f16, head_dim 64, run-time scale: five 32 KiB slots; 64-column
// gradients; dS in f16.
// BWD-LABEL: func.func @backward_f16_d64
// BWD-SAME: %[[SCALE:[a-z0-9]+]]: f32 {blockattn.name = "softmax_scale"}
// BWD-NEXT: warpspec.kernel chip(sm_100a) attributes {info = {block_size = 64 : i64, element_type = f16, head_dim = 64 : i64, kind = "backward", rotary = "none"}} {
// BWD: warpspec.channel "qkvdo" depth(5) : <[64x64xf16, 64x64xf16, 64x64xf16, 64x64xf16], smem>
// BWD-NEXT: warpspec.channel "s" depth(2) : <[64x64xf32], tmem>
// BWD-NEXT: warpspec.channel "dp" depth(2) : <[64x64xf32], tmem>
// BWD-NEXT: warpspec.channel "dv" depth(2) : <[64x64xf32], tmem>
// BWD-NEXT: warpspec.channel "dk" depth(2) : <[64x64xf32], tmem>
// BWD-NEXT: warpspec.channel "dq" depth(2) : <[64x64xf32], tmem>
// BWD-NEXT: warpspec.channel "pds" depth(2) : <[64x64xf16, 64x64xf16], smem>
// BWD: warpspec.mma_async %{{.*}}#0, %{{.*}} into %{{.*}} {transpose_a} : <64x64xf16, smem>, <64x64xf16, smem>, <64x64xf32, tmem>
// BWD: warpspec.softmax_grad %{{.*}}, %{{.*}} scale(%[[SCALE]]) : <64x64xf32>, <64x64xf32> -> <64x64xf16>
func.func @backward_f16_d64(%q: !act64, %k: !act64, %v: !act64, %do: !act64,
                            %dq: !act64, %dk: !act64, %dv: !act64, %cu: !cu,
                            %scale: f32) {
  blockattn.backward q(%q : !act64) k(%k : !act64) v(%v : !act64)
      do(%do : !act64) dq(%dq : !act64) dk(%dk : !act64) dv(%dv : !act64)
      cu_seqlens(%cu : !cu) scale(%scale : f32)
      {head_dim = 64 : i64, element_type = f16}
  return
}

// o-store=smem: staged, no bulk stores.
// BWD-OSMEM-LABEL: func.func @backward_bf16_d128
// BWD-OSMEM: warpspec.channel "qkvdo" depth(2)
// BWD-OSMEM-COUNT-3: warpspec.store %{{.*}} via(%{{.*}}) : <64x128xf32>, memref<?x4x128xbf16>, !warpspec.buffer<64x128xbf16, smem>{{$}}
// BWD-OSMEM-LABEL: func.func @backward_f16_d64
// BWD-OSMEM-COUNT-3: warpspec.store %{{.*}} via(%{{.*}}) : <64x64xf32>
