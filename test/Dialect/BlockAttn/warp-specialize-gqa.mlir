// RUN: split-file %s %t
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_90a" | FileCheck %s --check-prefixes=CHECK,SM90 --implicit-check-not=blockattn.forward
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_100a" | FileCheck %s --check-prefixes=CHECK,SM100 --implicit-check-not=blockattn.forward
// RUN: block-attn-opt %t/backward.mlir -blockattn-warp-specialize="chip=sm_100a" | FileCheck %s --check-prefix=BW100 --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %t/backward.mlir -blockattn-warp-specialize="chip=sm_90a" | FileCheck %s --check-prefix=BW90 --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %t/parts.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a num-consumers=2"
// RUN: block-attn-opt %t/parts3.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a num-consumers=3"
// RUN: block-attn-opt %t/passes-consumers.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a num-consumers=2"
// RUN: block-attn-opt %t/backward.mlir -blockattn-warp-specialize="chip=sm_90a group-roles=pipelined" | FileCheck %s --check-prefix=PIPE90 --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %t/roles-d32.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a group-roles=pipelined"
// RUN: block-attn-opt %t/roles-parts.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a group-roles=pipelined num-consumers=2"
// RUN: block-attn-opt %t/roles-parts.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a group-roles=pipelined ctas-per-sm=3"
// RUN: not block-attn-opt %t/backward.mlir -blockattn-warp-specialize="chip=sm_90a group-roles=overlapped" 2>&1 | FileCheck %s --check-prefix=ROLES-VALUE
// RUN: block-attn-opt %t/rotary.mlir -blockattn-warp-specialize="chip=sm_90a" | FileCheck %s --check-prefix=ROT90 --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %t/rotary.mlir -blockattn-warp-specialize="chip=sm_100a" | FileCheck %s --check-prefix=ROT100 --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %t/rotary-d128.mlir -blockattn-warp-specialize="chip=sm_90a" | FileCheck %s --check-prefix=ROTPIPE90 --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %t/rotary-parts.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a num-consumers=2"
// RUN: block-attn-opt %t/b128-roles.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a group-roles=pipelined"
// RUN: block-attn-opt %t/b128-consumers.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a num-consumers=2"
// RUN: block-attn-opt %t/b128-ctas.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a ctas-per-sm=2"
// RUN: block-attn-opt %t/b128-large-block.mlir -verify-diagnostics -blockattn-warp-specialize="chip=sm_90a large-block-consumers=1"
// RUN: block-attn-opt %t/b128-rotary.mlir -blockattn-warp-specialize="chip=sm_90a" | FileCheck %s --check-prefix=B128ROT90 --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %t/b128-rotary.mlir -blockattn-warp-specialize="chip=sm_100a" | FileCheck %s --check-prefix=B128ROT100 --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %t/b128-pair.mlir -blockattn-warp-specialize="chip=sm_100a" | FileCheck %s --check-prefix=PAIR100 --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %t/b128-pair.mlir -blockattn-warp-specialize="chip=sm_90a" | FileCheck %s --check-prefix=PAIR90 --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %t/b128-rotary-wide.mlir -blockattn-warp-specialize="chip=sm_90a" | FileCheck %t/b128-rotary-wide.mlir --check-prefixes=HS96,HS9690 --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %t/b128-rotary-wide.mlir -blockattn-warp-specialize="chip=sm_100a" | FileCheck %t/b128-rotary-wide.mlir --check-prefixes=HS96,HS96100 --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %t/b128-rotary-wide-half-split.mlir -blockattn-warp-specialize="chip=sm_90a" | FileCheck %s --check-prefixes=HSWIDE,HSWIDE90 --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %t/b128-rotary-wide-half-split.mlir -blockattn-warp-specialize="chip=sm_100a" | FileCheck %s --check-prefixes=HSWIDE,HSWIDE100 --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %t/b128-rotary-wide-interleaved.mlir -blockattn-warp-specialize="chip=sm_90a" | FileCheck %s --check-prefix=ROTWIDE90 --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %t/b128-rotary-wide-sm100a.mlir -blockattn-warp-specialize="chip=sm_100a" | FileCheck %s --check-prefix=ROTWIDE100G2 --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %t/b128-rotary-wide-interleaved-sm100a.mlir -blockattn-warp-specialize="chip=sm_100a" | FileCheck %s --check-prefix=ROTWIDE100 --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %t/theta-wide.mlir -blockattn-warp-specialize="chip=sm_90a" | FileCheck %s --check-prefix=THETA90 --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %t/theta-wide.mlir -blockattn-warp-specialize="chip=sm_100a" | FileCheck %s --check-prefix=THETA100 --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %t/b128-wide.mlir -blockattn-warp-specialize="chip=sm_90a" | FileCheck %s --check-prefix=WIDE90 --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %t/b128-wide.mlir -blockattn-warp-specialize="chip=sm_100a" | FileCheck %s --check-prefix=WIDE100 --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %t/b128-wide-rotary.mlir -blockattn-warp-specialize="chip=sm_90a" | FileCheck %s --check-prefix=WIDEROT90 --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %t/b128-wide-rotary.mlir -blockattn-warp-specialize="chip=sm_100a" | FileCheck %s --check-prefix=WIDEROT100 --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %t/b128-wide-rotary-rv.mlir -blockattn-warp-specialize="chip=sm_90a" | FileCheck %s --check-prefix=WIDEROTRV90 --implicit-check-not=blockattn.backward --implicit-check-not=split_items
// RUN: block-attn-opt %t/b128-wide-half-split-rv.mlir -blockattn-warp-specialize="chip=sm_90a" | FileCheck %s --check-prefix=WIDEHSRV90 --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %t/b128-wide-rotary-sm100a.mlir -blockattn-warp-specialize="chip=sm_100a" | FileCheck %s --check-prefix=WIDEROTHS100 --implicit-check-not=blockattn.backward

// Grouped-query attention's forward (group 4: q and o with 8 heads, k and v
// with 2): the tile loop walks q's heads and the producer reads k and v at
// head / 4, q at the head itself; the consumers store o at the head. The
// kernel's info (and so its manifest) carries the group. Everything else is
// the plain forward's.
//
// The grouped backward (group 2) sums dk and dv over the group inside one
// CTA: the tile loop walks k's heads; the producer loads K, V once into "kv"
// and Q, dO of each query head (2 kvHead + i, an scf.for) into "qdo". On
// sm_100a the MMA warpgroup's first head writes dV and dK, the loop over the
// others accumulates into the same tensor-memory slots, which are published
// once, to the k/v head; one softmax warpgroup takes whole items ("items").
// On sm_90a the consumer's dV and dK are wgmma accumulators the next heads
// add to ("plus"), carried through the loop as its iter_args.
//
// The grouped backward with rotary embeddings (rotary.mlir, rotary-d128.mlir)
// rotates K (and V with rotate_v) in place once an item, at the position the
// producer commits with the "kv" slot, and each query head's Q in place in
// its "qdo" slot; dQ is turned back (rotate_tile inverse) per query head,
// the group's dV and dK once, after the group. Blocks of 128 tokens
// (b128-rotary.mlir) rotate K (128 rows) once an item and each head's Q in
// its two 64-row halves, the second at row and position + 64; the rows and
// position are pinned in the loop over the heads (warpspec.pin of an i32).
// sm_90a: the scores warpgroup rotates and turns dQ back per half, each
// accumulate warpgroup turns its key half's dK back after the group (at
// + 64 for key half 1). sm_100a: the softmax warpgroup takes the items from
// "kv", rotates and signals the MMA warp through "rotated" (no "items").

// B128ROT90: warpspec.partition "scores"
// B128ROT90: %[[POS:.*]] = warpspec.tile_position
// B128ROT90-NEXT: warpspec.rotate(%[[K:.*]]) into(%[[K]]) rows({{.*}}) row(%[[ROW:[^)]*]]) position(%[[POS]])
// B128ROT90-SAME: 128x64xbf16
// B128ROT90: scf.for
// B128ROT90: %[[R0:.*]] = warpspec.pin %[[ROW]] : i32
// B128ROT90-NEXT: %[[P0:.*]] = warpspec.pin %[[POS]] : i32
// B128ROT90-NEXT: warpspec.rotate(%[[Q0:.*]]) into(%[[Q0]]) rows({{.*}}) row(%[[R0]]) position(%[[P0]])
// B128ROT90-NEXT: %[[C64:.*]] = arith.constant 64 : i32
// B128ROT90-NEXT: %[[R1:.*]] = arith.addi %[[R0]], %[[C64]]
// B128ROT90-NEXT: %[[P1:.*]] = arith.addi %[[P0]], %[[C64]]
// B128ROT90-NEXT: warpspec.rotate(%[[Q1:.*]]) into(%[[Q1]]) rows({{.*}}) row(%[[R1]]) position(%[[P1]])
// B128ROT90: warpspec.rotate_tile {{.*}} {interleaved = false, inverse
// B128ROT90: warpspec.rotate_tile {{.*}} {interleaved = false, inverse
// B128ROT90: warpspec.partition "accumulate"
// B128ROT90: warpspec.tile_position
// B128ROT90: scf.for
// B128ROT90: warpspec.rotate_tile {{.*}} {interleaved = false, inverse
// B128ROT90: warpspec.partition "accumulate1"
// B128ROT90: warpspec.rotate_tile {{.*}} {interleaved = false, inverse

// B128ROT100-NOT: "items"
// B128ROT100: warpspec.channel "rotated" depth(4) : <[], smem>
// B128ROT100: warpspec.partition "mma"
// B128ROT100: warpspec.get %{{.*}} : <[], smem>
// B128ROT100: warpspec.get %{{.*}} : <[64x64xbf16, 64x64xbf16, 64x64xbf16, 64x64xbf16], smem>
// B128ROT100-NEXT: warpspec.get %{{.*}} : <[], smem>
// B128ROT100: warpspec.partition "softmax"
// B128ROT100: warpspec.consume %{{.*}} : !warpspec.channel<[128x64xbf16, 128x64xbf16], smem>
// B128ROT100: warpspec.rotate({{.*}} : !warpspec.buffer<128x64xbf16, smem>
// B128ROT100: warpspec.get %{{.*}} : <[64x64xbf16, 64x64xbf16, 64x64xbf16, 64x64xbf16], smem>
// B128ROT100: warpspec.rotate({{.*}} : !warpspec.buffer<64x64xbf16, smem>
// B128ROT100: warpspec.rotate({{.*}} : !warpspec.buffer<64x64xbf16, smem>
// B128ROT100: scf.for
// B128ROT100: warpspec.rotate_tile {{.*}} inverse

// An unknown group-roles value is refused when the options are parsed.
// ROLES-VALUE: overlapped

//--- forward.mlir
func.func @gqa_forward(%q: memref<?x8x128xbf16>, %k: memref<?x2x128xbf16>,
                       %v: memref<?x2x128xbf16>, %o: memref<?x8x128xbf16>,
                       %cu: memref<?xi32>) {
  blockattn.forward q(%q : memref<?x8x128xbf16>) k(%k : memref<?x2x128xbf16>)
      v(%v : memref<?x2x128xbf16>) o(%o : memref<?x8x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {block_size = 64 : i64, element_type = bf16, head_dim = 128 : i64, group = 4 : i64}
  return
}

// CHECK-LABEL: func.func @gqa_forward
// CHECK-SAME: %[[Q:[a-z0-9_]+]]: memref<?x8x128xbf16> {blockattn.name = "q"}
// CHECK-SAME: %[[K:[a-z0-9_]+]]: memref<?x2x128xbf16> {blockattn.name = "k"}
// CHECK-SAME: %[[V:[a-z0-9_]+]]: memref<?x2x128xbf16> {blockattn.name = "v"}
// CHECK-SAME: %[[O:[a-z0-9_]+]]: memref<?x8x128xbf16> {blockattn.name = "o"}
// SM90: warpspec.kernel chip(sm_90a) attributes {{{.*}}info = {block_size = 64 : i64, element_type = bf16, group = 4 : i64, head_dim = 128 : i64, kind = "forward"
// SM100: warpspec.kernel chip(sm_100a) attributes {{{.*}}info = {block_size = 64 : i64, element_type = bf16, group = 4 : i64, head_dim = 128 : i64, kind = "forward"
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[H:.*]] = memref.dim %[[Q]], %[[ONE]]
// CHECK: warpspec.partition "load" role(load)
// CHECK-NEXT: warpspec.tile_loop (%[[ROW:.*]], %[[ROWS:.*]], %[[HEAD:.*]]) in %{{.*}} : memref<?xi32> heads(%[[H]])
// CHECK-NEXT: %[[G:.*]] = arith.constant 4 : i32
// CHECK-NEXT: %[[KVHEAD:.*]] = arith.divui %[[HEAD]], %[[G]] : i32
// CHECK-NEXT: %[[SLOT:.*]], %[[BUF:.*]]:3 = warpspec.acquire
// CHECK-NEXT: warpspec.tma_load %[[Q]][%[[ROW]], %[[HEAD]]] into %[[BUF]]#0
// CHECK-NEXT: warpspec.tma_load %[[K]][%[[ROW]], %[[KVHEAD]]] into %[[BUF]]#1
// CHECK-NEXT: warpspec.tma_load %[[V]][%[[ROW]], %[[KVHEAD]]] into %[[BUF]]#2
// CHECK-NEXT: warpspec.commit %[[SLOT]] tile(%[[ROW]], %[[ROWS]], %[[HEAD]])
// CHECK: warpspec.store %{{.*}} to %[[O]][%{{.*}}, %{{.*}}]

//--- backward.mlir
func.func @gqa_backward(%q: memref<?x?x64xbf16>, %k: memref<?x?x64xbf16>,
                        %v: memref<?x?x64xbf16>, %do: memref<?x?x64xbf16>,
                        %dq: memref<?x?x64xbf16>, %dk: memref<?x?x64xbf16>,
                        %dv: memref<?x?x64xbf16>, %cu: memref<?xi32>) {
  blockattn.backward q(%q : memref<?x?x64xbf16>) k(%k : memref<?x?x64xbf16>)
      v(%v : memref<?x?x64xbf16>) do(%do : memref<?x?x64xbf16>)
      dq(%dq : memref<?x?x64xbf16>) dk(%dk : memref<?x?x64xbf16>)
      dv(%dv : memref<?x?x64xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 64 : i64, group = 2 : i64}
  return
}

// BW100-LABEL: func.func @gqa_backward
// BW100-SAME: %[[Q:[a-z0-9_]+]]: memref<?x?x64xbf16> {blockattn.name = "q"}
// BW100-SAME: %[[K:[a-z0-9_]+]]: memref<?x?x64xbf16> {blockattn.name = "k"}
// BW100-SAME: %[[V:[a-z0-9_]+]]: memref<?x?x64xbf16> {blockattn.name = "v"}
// BW100-SAME: %[[DO:[a-z0-9_]+]]: memref<?x?x64xbf16> {blockattn.name = "do"}
// BW100-SAME: %[[DQ:[a-z0-9_]+]]: memref<?x?x64xbf16> {blockattn.name = "dq"}
// BW100-SAME: %[[DK:[a-z0-9_]+]]: memref<?x?x64xbf16> {blockattn.name = "dk"}
// BW100-SAME: %[[DV:[a-z0-9_]+]]: memref<?x?x64xbf16> {blockattn.name = "dv"}
// BW100: info = {block_size = 64 : i64, element_type = bf16, group = 2 : i64, head_dim = 64 : i64, kind = "backward"
// BW100: %[[HKV:.*]] = memref.dim %[[K]], %{{.*}} : memref<?x?x64xbf16>
// BW100: %[[KV:.*]] = warpspec.channel "kv" depth(2)
// BW100: %[[QDO:.*]] = warpspec.channel "qdo"
// BW100: %[[ITEMS:.*]] = warpspec.channel "items" depth(2) : <[], smem>
// BW100: warpspec.partition "load" role(load)
// BW100-NEXT: warpspec.tile_loop (%[[ROW:.*]], %[[ROWS:.*]], %[[KVH:.*]]) in %{{.*}} heads(%[[HKV]])
// BW100-NEXT: %{{.*}}, %[[KVBUF:.*]]:2 = warpspec.acquire %[[KV]]
// BW100-NEXT: warpspec.tma_load %[[K]][%[[ROW]], %[[KVH]]] into %[[KVBUF]]#0
// BW100-NEXT: warpspec.tma_load %[[V]][%[[ROW]], %[[KVH]]] into %[[KVBUF]]#1
// BW100: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// BW100: %[[H:.*]] = arith.addi %{{.*}}, %[[I]] : i32
// BW100-NEXT: %{{.*}}, %[[QBUF:.*]]:2 = warpspec.acquire %[[QDO]]
// BW100-NEXT: warpspec.tma_load %[[Q]][%[[ROW]], %[[H]]] into %[[QBUF]]#0
// BW100-NEXT: warpspec.tma_load %[[DO]][%[[ROW]], %[[H]]] into %[[QBUF]]#1
// BW100: warpspec.close %[[KV]]
// BW100: warpspec.partition "mma" role(mma)
// BW100: warpspec.consume %[[KV]]
// BW100: %[[DVSLOT:.*]], %[[DVACC:.*]] = warpspec.acquire %{{.*}} : <[64x64xf32], tmem>
// BW100-NEXT: %[[DKSLOT:.*]], %[[DKACC:.*]] = warpspec.acquire %{{.*}} : <[64x64xf32], tmem>
// BW100: warpspec.mma_async %{{.*}}, %{{.*}} into %[[DVACC]] {transpose_a}
// BW100-NEXT: warpspec.mma_async %{{.*}}, %{{.*}} into %[[DKACC]] {transpose_a}
// BW100: scf.for
// BW100: warpspec.mma_async %{{.*}}, %{{.*}} into %[[DVACC]] {accumulate, transpose_a}
// BW100-NEXT: warpspec.mma_async %{{.*}}, %{{.*}} into %[[DKACC]] {accumulate, transpose_a}
// BW100: }
// BW100-NEXT: warpspec.commit %[[DVSLOT]]
// BW100-NEXT: warpspec.commit %[[DKSLOT]]
// BW100: warpspec.close %[[ITEMS]]
// BW100: warpspec.partition "softmax" role(softmax) warps(4) regs(256) {
// BW100: warpspec.consume %[[ITEMS]] (%{{.*}}, %[[SROW:.*]], %[[SROWS:.*]], %[[SKVH:.*]])
// BW100: scf.for
// BW100: warpspec.store %{{.*}} to %[[DQ]][%[[SROW]], %{{.*}}]
// BW100: }
// BW100: warpspec.store %{{.*}} to %[[DV]][%[[SROW]], %[[SKVH]]]
// BW100: warpspec.store %{{.*}} to %[[DK]][%[[SROW]], %[[SKVH]]]

// BW90-LABEL: func.func @gqa_backward
// BW90: warpspec.channel "kv"
// BW90: warpspec.channel "qdo"
// BW90: warpspec.partition "compute" role(compute) warps(4) regs({{[0-9]+}}) {
// BW90: %[[DV0:.*]] = warpspec.mma %{{.*}}, %{{.*}} {transpose_a}
// BW90: %[[DK0:.*]] = warpspec.mma %{{.*}}, %{{.*}} {transpose_a}
// BW90: %[[LOOP:.*]]:2 = scf.for %{{.*}} iter_args(%[[DVI:.*]] = %[[DV0]], %[[DKI:.*]] = %[[DK0]]) -> (!warpspec.acc<64x64xf32>, !warpspec.acc<64x64xf32>)
// BW90: %[[DV1:.*]] = warpspec.mma %{{.*}}, %{{.*}} plus %[[DVI]] : !warpspec.acc<64x64xf32> {transpose_a}
// BW90-NEXT: %[[DK1:.*]] = warpspec.mma %{{.*}}, %{{.*}} plus %[[DKI]] : !warpspec.acc<64x64xf32> {transpose_a}
// BW90: scf.yield %[[DV1]], %[[DK1]]
// BW90: warpspec.store %[[LOOP]]#0 to
// BW90: warpspec.store %[[LOOP]]#1 to

// group-roles=pipelined: the producer as above; the scores warpgroup takes
// each head's "qdo" slot, writes P and dS into a slot of "pds" and commits
// it, gives "qdo" back after dP and makes dQ from dS's registers; the
// accumulate warpgroup gives "kv" back at once and per head reads "qdo" and
// "pds", dV and dK carried through the group's loop.
// PIPE90-LABEL: func.func @gqa_backward
// PIPE90: %[[KV:.*]] = warpspec.channel "kv" depth(2)
// PIPE90: %[[QDO:.*]] = warpspec.channel "qdo" depth(8)
// PIPE90: %[[PDS:.*]] = warpspec.channel "pds" depth(2) : <[64x64xbf16, 64x64xbf16], smem>
// PIPE90: warpspec.partition "load" role(load) warps(4) regs(48)
// PIPE90: warpspec.partition "scores" role(compute) warps(4) regs(224)
// PIPE90: warpspec.consume %[[KV]]
// PIPE90: scf.for
// PIPE90: %[[QSLOT:.*]], %[[QBUF:.*]]:2 = warpspec.get %[[QDO]]
// PIPE90: %[[P:.*]], %{{.*}} = warpspec.softmax
// PIPE90: %[[OUT:.*]], %[[OBUF:.*]]:2 = warpspec.acquire %[[PDS]]
// PIPE90-NEXT: warpspec.write %[[P]], %[[OBUF]]#0
// PIPE90: %[[DS:.*]] = warpspec.softmax_grad
// PIPE90-NEXT: warpspec.release %[[QSLOT]]
// PIPE90-NEXT: warpspec.write %[[DS]], %[[OBUF]]#1
// PIPE90-NEXT: warpspec.commit %[[OUT]]
// PIPE90-NEXT: %[[DQ:.*]] = warpspec.mma %[[DS]], %{{.*}} : !warpspec.acc<64x64xbf16>
// PIPE90-NEXT: warpspec.store %[[DQ]] to
// PIPE90: warpspec.partition "accumulate" role(compute) warps(4) regs(224)
// PIPE90-NEXT: warpspec.consume %[[KV]] (%[[KVSLOT:[a-z0-9]+]],
// PIPE90-NEXT: warpspec.release %[[KVSLOT]]
// PIPE90: scf.for {{.*}} iter_args(%[[DVI:.*]] = %{{.*}}, %[[DKI:.*]] = %{{.*}}) ->
// PIPE90: %[[S1:.*]], %[[B1:.*]]:2 = warpspec.get %[[QDO]]
// PIPE90-NEXT: %[[S2:.*]], %[[B2:.*]]:2 = warpspec.get %[[PDS]]
// PIPE90-NEXT: warpspec.mma %[[B2]]#0, %[[B1]]#1 plus %[[DVI]] : !warpspec.acc<64x64xf32> {transpose_a}
// PIPE90-NEXT: warpspec.mma %[[B2]]#1, %[[B1]]#0 plus %[[DKI]] : !warpspec.acc<64x64xf32> {transpose_a}
// PIPE90-NEXT: warpspec.release %[[S1]]
// PIPE90-NEXT: warpspec.release %[[S2]]
// PIPE90: warpspec.store %{{.*}}#0 to %{{.*}} rows(%{{.*}}) : <64x64xf32>, memref<?x?x64xbf16>
// PIPE90-NEXT: warpspec.store %{{.*}}#1 to

//--- parts.mlir
// The sm_90a grouped backward's column parts (num-consumers=2) are whole
// 64-column chunks of the head dim: none at 64.
func.func @gqa_backward_parts(%q: memref<?x?x64xbf16>, %k: memref<?x?x64xbf16>,
                              %v: memref<?x?x64xbf16>, %do: memref<?x?x64xbf16>,
                              %dq: memref<?x?x64xbf16>, %dk: memref<?x?x64xbf16>,
                              %dv: memref<?x?x64xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op num-consumers 2 splits the grouped-query backward's head dim 64 into column parts of whole 64-column chunks, which it does not have}}
  blockattn.backward q(%q : memref<?x?x64xbf16>) k(%k : memref<?x?x64xbf16>)
      v(%v : memref<?x?x64xbf16>) do(%do : memref<?x?x64xbf16>)
      dq(%dq : memref<?x?x64xbf16>) dk(%dk : memref<?x?x64xbf16>)
      dv(%dv : memref<?x?x64xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 64 : i64, group = 2 : i64}
  return
}

//--- parts3.mlir
func.func @gqa_backward_parts(%q: memref<?x?x64xbf16>, %k: memref<?x?x64xbf16>,
                              %v: memref<?x?x64xbf16>, %do: memref<?x?x64xbf16>,
                              %dq: memref<?x?x64xbf16>, %dk: memref<?x?x64xbf16>,
                              %dv: memref<?x?x64xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op num-consumers must be 0 (the recipe picks), 1 or 2 for the grouped-query backward (group 2): each consumer computes its column part of dV, dK and dQ, got 3}}
  blockattn.backward q(%q : memref<?x?x64xbf16>) k(%k : memref<?x?x64xbf16>)
      v(%v : memref<?x?x64xbf16>) do(%do : memref<?x?x64xbf16>)
      dq(%dq : memref<?x?x64xbf16>) dk(%dk : memref<?x?x64xbf16>)
      dv(%dv : memref<?x?x64xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 64 : i64, group = 2 : i64}
  return
}

//--- roles-d32.mlir
// group-roles=pipelined is built at head dims 64 and 128 only.
func.func @gqa_backward_roles_d32(%q: memref<?x?x32xbf16>, %k: memref<?x?x32xbf16>,
                                  %v: memref<?x?x32xbf16>, %do: memref<?x?x32xbf16>,
                                  %dq: memref<?x?x32xbf16>, %dk: memref<?x?x32xbf16>,
                                  %dv: memref<?x?x32xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op group-roles=pipelined is implemented at head dims 64 and 128 (the grouped-query backward of group 2), got head dim 32}}
  blockattn.backward q(%q : memref<?x?x32xbf16>) k(%k : memref<?x?x32xbf16>)
      v(%v : memref<?x?x32xbf16>) do(%do : memref<?x?x32xbf16>)
      dq(%dq : memref<?x?x32xbf16>) dk(%dk : memref<?x?x32xbf16>)
      dv(%dv : memref<?x?x32xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 32 : i64, group = 2 : i64}
  return
}

//--- roles-parts.mlir
// group-roles=pipelined has one scores and one accumulate warpgroup (no column parts) and
// launches one or two CTAs an SM (split-file runs it with num-consumers=2, then ctas-per-sm=3).
func.func @gqa_backward_roles_parts(%q: memref<?x?x128xbf16>, %k: memref<?x?x128xbf16>,
                                    %v: memref<?x?x128xbf16>, %do: memref<?x?x128xbf16>,
                                    %dq: memref<?x?x128xbf16>, %dk: memref<?x?x128xbf16>,
                                    %dv: memref<?x?x128xbf16>, %cu: memref<?xi32>) {
  // expected-error-re @below {{'blockattn.backward' op group-roles=pipelined {{(has one scores and one accumulate warpgroup; num-consumers must be 0 or 1, got 2|takes one or two CTAs per SM \(three warpgroups each\), got ctas-per-sm 3)}}}}
  blockattn.backward q(%q : memref<?x?x128xbf16>) k(%k : memref<?x?x128xbf16>)
      v(%v : memref<?x?x128xbf16>) do(%do : memref<?x?x128xbf16>)
      dq(%dq : memref<?x?x128xbf16>) dk(%dk : memref<?x?x128xbf16>)
      dv(%dv : memref<?x?x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 128 : i64, group = 4 : i64}
  return
}

//--- rotary.mlir
// Head dim 64, half-split tables, rotate_v, positions from the sequence.
// sm_90a (one consumer, serial roles): the producer commits the item's
// position with K and V; the consumer rotates K and V in place once, then
// per query head Q (in its "qdo" slot) before S, and turns dQ back before
// its store; dV and dK are turned back once, after the group.
// ROT90: warpspec.partition "load"
// ROT90: warpspec.tile_loop (%[[ROW:[a-z0-9]+]], %[[ROWS:[a-z0-9]+]], %[[KVH:[a-z0-9]+]], %[[POS:[a-z0-9]+]]) in
// ROT90: warpspec.commit %{{.*}} tile(%[[ROW]], %[[ROWS]], %[[KVH]]) position(%[[POS]])
// ROT90: scf.for
// ROT90: warpspec.commit %{{.*}} tile(%[[ROW]], %[[ROWS]], %{{[0-9]+}}){{$}}
// ROT90: warpspec.partition "compute"
// ROT90: warpspec.consume %{{.*}} (%[[SLOT:[a-z0-9]+]], %[[R:[a-z0-9]+]], %[[N:[a-z0-9]+]], %{{[a-z0-9]+}}, %[[K:[a-z0-9]+]], %[[V:[a-z0-9]+]])
// ROT90-NEXT: %[[P:[0-9]+]] = warpspec.tile_position %[[SLOT]]
// ROT90-NEXT: warpspec.rotate(%[[K]], %[[V]]) into(%[[K]], %[[V]]) rows(%[[N]]) row(%[[R]]) position(%[[P]]) cos(
// ROT90: %{{.*}}, %[[QDO:.*]]:2 = warpspec.get
// ROT90-NEXT: warpspec.rotate(%[[QDO]]#0) into(%[[QDO]]#0) rows(%[[N]]) row(%[[R]]) position(%[[P]])
// ROT90: %[[DQ:[0-9]+]] = warpspec.rotate_tile %{{.*}} rows(%[[N]]) row(%[[R]]) position(%[[P]]) {{.*}}inverse
// ROT90-NEXT: warpspec.store %[[DQ]] to %arg4
// ROT90: scf.for {{.*}} iter_args(
// ROT90: %{{.*}}, %[[QDO1:.*]]:2 = warpspec.get
// ROT90-NEXT: warpspec.rotate(%[[QDO1]]#0) into(%[[QDO1]]#0)
// ROT90: warpspec.rotate_tile {{.*}}inverse
// ROT90: scf.yield
// ROT90: %[[DV:[0-9]+]] = warpspec.rotate_tile %{{[0-9]+}}#0 {{.*}}inverse
// ROT90-NEXT: warpspec.store %[[DV]] to %arg6
// ROT90-NEXT: %[[DK:[0-9]+]] = warpspec.rotate_tile %{{[0-9]+}}#1 {{.*}}inverse
// ROT90-NEXT: warpspec.store %[[DK]] to %arg5
//
// sm_100a: no "items" ring; the softmax warpgroup takes the items from "kv",
// rotates K and V, then each Q, signalling each rotation through "rotated",
// which the MMA warp waits on before it reads them.
// ROT100: %[[ROTATED:.*]] = warpspec.channel "rotated" depth({{[0-9]+}}) : <[], smem>
// ROT100-NOT: "items"
// ROT100: warpspec.partition "mma"
// ROT100: warpspec.consume
// ROT100-NEXT: %[[SIG:.*]] = warpspec.get %[[ROTATED]]
// ROT100-NEXT: warpspec.release %[[SIG]]
// ROT100: warpspec.get %{{[0-9]+}} : <[64x64xbf16, 64x64xbf16], smem>
// ROT100-NEXT: %[[SIG1:.*]] = warpspec.get %[[ROTATED]]
// ROT100-NEXT: warpspec.release %[[SIG1]]
// ROT100-NEXT: warpspec.acquire
// ROT100-NEXT: warpspec.mma_async
// ROT100: warpspec.partition "softmax" role(softmax) warps(4) regs(256)
// ROT100: warpspec.consume %{{.*}} (%[[SLOT:[a-z0-9]+]], %[[R:[a-z0-9]+]], %[[N:[a-z0-9]+]], %{{[a-z0-9]+}}, %[[K:[a-z0-9]+]], %[[V:[a-z0-9]+]])
// ROT100-NEXT: %[[P:[0-9]+]] = warpspec.tile_position %[[SLOT]]
// ROT100-NEXT: %[[OUT:.*]] = warpspec.acquire %[[ROTATED]]
// ROT100-NEXT: warpspec.rotate(%[[K]], %[[V]]) into(%[[K]], %[[V]]) rows(%[[N]]) row(%[[R]]) position(%[[P]])
// ROT100-NEXT: warpspec.commit %[[OUT]]
// ROT100-NEXT: warpspec.release %[[SLOT]]
// ROT100: %[[QSLOT:.*]], %[[QDO:.*]]:2 = warpspec.get
// ROT100-NEXT: %[[OUT1:.*]] = warpspec.acquire %[[ROTATED]]
// ROT100-NEXT: warpspec.rotate(%[[QDO]]#0) into(%[[QDO]]#0)
// ROT100-NEXT: warpspec.commit %[[OUT1]]
// ROT100-NEXT: warpspec.release %[[QSLOT]]
// The next head's Q is rotated once this head's P and dS are committed,
// before this head's dQ is drained and turned back (heads 0 .. G - 2 in the
// loop, the last after it).
// ROT100: scf.for
// ROT100: warpspec.softmax_grad
// ROT100: warpspec.commit
// ROT100: %[[NEXT:.*]] = arith.addi
// ROT100-NEXT: %[[QSLOT2:.*]], %[[QDO2:.*]]:2 = warpspec.get
// ROT100-NEXT: %[[OUT2:.*]] = warpspec.acquire %[[ROTATED]]
// ROT100-NEXT: warpspec.rotate(%[[QDO2]]#0) into(%[[QDO2]]#0)
// ROT100-NEXT: warpspec.commit %[[OUT2]] tile(%[[R]], %[[N]], %[[NEXT]])
// ROT100-NEXT: warpspec.release %[[QSLOT2]]
// ROT100: warpspec.rotate_tile {{.*}}inverse
// ROT100-NEXT: warpspec.store %{{.*}} to %arg4
// ROT100: warpspec.softmax_grad
// ROT100: warpspec.rotate_tile {{.*}}inverse
// ROT100-NEXT: warpspec.store %{{.*}} to %arg4
// ROT100: warpspec.rotate_tile {{.*}}inverse
// ROT100-NEXT: warpspec.store %{{.*}} to %arg6
// ROT100: warpspec.rotate_tile {{.*}}inverse
// ROT100-NEXT: warpspec.store %{{.*}} to %arg5
func.func @gqa_backward_rotary(%q: memref<?x4x64xbf16>, %k: memref<?x2x64xbf16>,
                               %v: memref<?x2x64xbf16>, %do: memref<?x4x64xbf16>,
                               %dq: memref<?x4x64xbf16>, %dk: memref<?x2x64xbf16>,
                               %dv: memref<?x2x64xbf16>, %cu: memref<?xi32>,
                               %cos: memref<?x32xf32>, %sin: memref<?x32xf32>) {
  blockattn.backward q(%q : memref<?x4x64xbf16>) k(%k : memref<?x2x64xbf16>)
      v(%v : memref<?x2x64xbf16>) do(%do : memref<?x4x64xbf16>)
      dq(%dq : memref<?x4x64xbf16>) dk(%dk : memref<?x2x64xbf16>)
      dv(%dv : memref<?x2x64xbf16>) cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<?x32xf32>, memref<?x32xf32>)
      {element_type = bf16, head_dim = 64 : i64, group = 2 : i64,
       rotary = #blockattn.rotary<half_split>, rotate_v}
  return
}

//--- rotary-d128.mlir
// Head dim 128, interleaved, a positions tensor: the pipelined roles (auto).
// The scores warpgroup rotates K (not V) and each Q and turns dQ back; the
// accumulate warpgroup turns the group's dK back (dV is not rotated).
// ROTPIPE90: warpspec.partition "scores"
// ROTPIPE90: warpspec.rotate(%{{[a-z0-9]+}}) into
// ROTPIPE90-SAME: positions(
// ROTPIPE90-SAME: interleaved = true
// ROTPIPE90: scf.for
// ROTPIPE90: warpspec.rotate(%{{.*}}#0) into(%{{.*}}#0)
// ROTPIPE90: warpspec.rotate_tile {{.*}}inverse
// ROTPIPE90-NEXT: warpspec.store %{{.*}} to %arg4
// ROTPIPE90: warpspec.partition "accumulate"
// ROTPIPE90-NOT: warpspec.rotate(
// ROTPIPE90: warpspec.store %{{[0-9]+}}#0 to %arg6
// ROTPIPE90-NEXT: %[[DK:[0-9]+]] = warpspec.rotate_tile %{{[0-9]+}}#1 {{.*}}inverse
// ROTPIPE90-NEXT: warpspec.store %[[DK]] to %arg5
func.func @gqa_backward_rotary_d128(%q: memref<?x4x128xbf16>, %k: memref<?x2x128xbf16>,
                                    %v: memref<?x2x128xbf16>, %do: memref<?x4x128xbf16>,
                                    %dq: memref<?x4x128xbf16>, %dk: memref<?x2x128xbf16>,
                                    %dv: memref<?x2x128xbf16>, %cu: memref<?xi32>,
                                    %cos: memref<?x64xf32>, %sin: memref<?x64xf32>,
                                    %pos: memref<?xi32>) {
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x2x128xbf16>)
      v(%v : memref<?x2x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x2x128xbf16>)
      dv(%dv : memref<?x2x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<?x64xf32>, memref<?x64xf32>)
      positions(%pos : memref<?xi32>)
      {element_type = bf16, head_dim = 128 : i64, group = 2 : i64,
       rotary = #blockattn.rotary<interleaved>}
  return
}

//--- rotary-parts.mlir
// Two column parts would both rotate the shared K and Q tiles in place.
func.func @gqa_backward_rotary_parts(%q: memref<?x4x128xbf16>, %k: memref<?x2x128xbf16>,
                                     %v: memref<?x2x128xbf16>, %do: memref<?x4x128xbf16>,
                                     %dq: memref<?x4x128xbf16>, %dk: memref<?x2x128xbf16>,
                                     %dv: memref<?x2x128xbf16>, %cu: memref<?xi32>,
                                     %cos: memref<?x64xf32>, %sin: memref<?x64xf32>) {
  // expected-error @below {{'blockattn.backward' op num-consumers 2 splits the grouped-query backward into column parts, which it does not do with rotary embeddings (each part would rotate the shared K and Q tiles in place); num-consumers must be 0 or 1}}
  blockattn.backward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x2x128xbf16>)
      v(%v : memref<?x2x128xbf16>) do(%do : memref<?x4x128xbf16>)
      dq(%dq : memref<?x4x128xbf16>) dk(%dk : memref<?x2x128xbf16>)
      dv(%dv : memref<?x2x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<?x64xf32>, memref<?x64xf32>)
      {element_type = bf16, head_dim = 128 : i64, group = 2 : i64,
       rotary = #blockattn.rotary<half_split>}
  return
}

//--- passes-consumers.mlir
// Above head dim 128 the sm_90a grouped backward has one consumer, which
// makes the gradients in passes over 64-column chunks: no column parts.
func.func @gqa_backward_passes(%q: memref<?x?x192xbf16>, %k: memref<?x?x192xbf16>,
                               %v: memref<?x?x192xbf16>, %do: memref<?x?x192xbf16>,
                               %dq: memref<?x?x192xbf16>, %dk: memref<?x?x192xbf16>,
                               %dv: memref<?x?x192xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op the grouped-query backward (group 4) above head dim 128 has one consumer warpgroup, which makes dV, dK and dQ in passes over 64-column chunks of the head dim; num-consumers must be 0 or 1, got 2}}
  blockattn.backward q(%q : memref<?x?x192xbf16>) k(%k : memref<?x?x192xbf16>)
      v(%v : memref<?x?x192xbf16>) do(%do : memref<?x?x192xbf16>)
      dq(%dq : memref<?x?x192xbf16>) dk(%dk : memref<?x?x192xbf16>)
      dv(%dv : memref<?x?x192xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 192 : i64, group = 4 : i64}
  return
}

//--- b128-roles.mlir
// At block size 128 the grouped backward's roles are fixed (a scores warpgroup,
// an accumulate warpgroup per key half, one CTA per SM): options for other
// layouts are refused.
func.func @gqa_backward_b128_roles(%q: memref<?x?x64xbf16>, %k: memref<?x?x64xbf16>,
        %v: memref<?x?x64xbf16>, %do: memref<?x?x64xbf16>,
        %dq: memref<?x?x64xbf16>, %dk: memref<?x?x64xbf16>,
        %dv: memref<?x?x64xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op group-roles=pipelined does not apply at block_size 128: the grouped-query backward there has a scores warpgroup and an accumulate warpgroup per key half (group-roles must be auto or query-halves)}}
  blockattn.backward q(%q : memref<?x?x64xbf16>) k(%k : memref<?x?x64xbf16>)
      v(%v : memref<?x?x64xbf16>) do(%do : memref<?x?x64xbf16>)
      dq(%dq : memref<?x?x64xbf16>) dk(%dk : memref<?x?x64xbf16>)
      dv(%dv : memref<?x?x64xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 64 : i64, group = 4 : i64, block_size = 128 : i64}
  return
}

//--- b128-consumers.mlir
// At block size 128 the grouped backward's roles are fixed (a scores warpgroup,
// an accumulate warpgroup per key half, one CTA per SM): options for other
// layouts are refused.
func.func @gqa_backward_b128_consumers(%q: memref<?x?x64xbf16>, %k: memref<?x?x64xbf16>,
        %v: memref<?x?x64xbf16>, %do: memref<?x?x64xbf16>,
        %dq: memref<?x?x64xbf16>, %dk: memref<?x?x64xbf16>,
        %dv: memref<?x?x64xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op the grouped-query backward at block_size 128 has a scores warpgroup and an accumulate warpgroup per key half, got num-consumers=2}}
  blockattn.backward q(%q : memref<?x?x64xbf16>) k(%k : memref<?x?x64xbf16>)
      v(%v : memref<?x?x64xbf16>) do(%do : memref<?x?x64xbf16>)
      dq(%dq : memref<?x?x64xbf16>) dk(%dk : memref<?x?x64xbf16>)
      dv(%dv : memref<?x?x64xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 64 : i64, group = 4 : i64, block_size = 128 : i64}
  return
}

//--- b128-ctas.mlir
// At block size 128 the grouped backward's roles are fixed (a scores warpgroup,
// an accumulate warpgroup per key half, one CTA per SM): options for other
// layouts are refused.
func.func @gqa_backward_b128_ctas(%q: memref<?x?x64xbf16>, %k: memref<?x?x64xbf16>,
        %v: memref<?x?x64xbf16>, %do: memref<?x?x64xbf16>,
        %dq: memref<?x?x64xbf16>, %dk: memref<?x?x64xbf16>,
        %dv: memref<?x?x64xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op the grouped-query backward at block_size 128 has one CTA per SM, got ctas-per-sm=2}}
  blockattn.backward q(%q : memref<?x?x64xbf16>) k(%k : memref<?x?x64xbf16>)
      v(%v : memref<?x?x64xbf16>) do(%do : memref<?x?x64xbf16>)
      dq(%dq : memref<?x?x64xbf16>) dk(%dk : memref<?x?x64xbf16>)
      dv(%dv : memref<?x?x64xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 64 : i64, group = 4 : i64, block_size = 128 : i64}
  return
}

//--- b128-large-block.mlir
// At block size 128 the grouped backward's roles are fixed (a scores warpgroup,
// an accumulate warpgroup per key half, one CTA per SM): options for other
// layouts are refused.
func.func @gqa_backward_b128_large_block(%q: memref<?x?x64xbf16>, %k: memref<?x?x64xbf16>,
        %v: memref<?x?x64xbf16>, %do: memref<?x?x64xbf16>,
        %dq: memref<?x?x64xbf16>, %dk: memref<?x?x64xbf16>,
        %dv: memref<?x?x64xbf16>, %cu: memref<?xi32>) {
  // expected-error @below {{'blockattn.backward' op the grouped-query backward at block_size 128 has a scores warpgroup and an accumulate warpgroup per key half; large-block-consumers does not apply}}
  blockattn.backward q(%q : memref<?x?x64xbf16>) k(%k : memref<?x?x64xbf16>)
      v(%v : memref<?x?x64xbf16>) do(%do : memref<?x?x64xbf16>)
      dq(%dq : memref<?x?x64xbf16>) dk(%dk : memref<?x?x64xbf16>)
      dv(%dv : memref<?x?x64xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 64 : i64, group = 4 : i64, block_size = 128 : i64}
  return
}

//--- b128-rotary.mlir
func.func @gqa_backward_b128_rotary(%q: memref<?x?x64xbf16>, %k: memref<?x?x64xbf16>,
                                    %v: memref<?x?x64xbf16>, %do: memref<?x?x64xbf16>,
                                    %dq: memref<?x?x64xbf16>, %dk: memref<?x?x64xbf16>,
                                    %dv: memref<?x?x64xbf16>, %cu: memref<?xi32>) {
  blockattn.backward q(%q : memref<?x?x64xbf16>) k(%k : memref<?x?x64xbf16>)
      v(%v : memref<?x?x64xbf16>) do(%do : memref<?x?x64xbf16>)
      dq(%dq : memref<?x?x64xbf16>) dk(%dk : memref<?x?x64xbf16>)
      dv(%dv : memref<?x?x64xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 64 : i64, group = 4 : i64,
       block_size = 128 : i64, rotary = #blockattn.rotary<half_split>,
       rotary_theta = 10000.0 : f32}
  return
}
//--- b128-pair.mlir
// Block size 128, head dim 128, a group of 2: both chips build it in two
// passes over 64-column chunks.
func.func @gqa_backward_b128_pair(%q: memref<?x?x128xbf16>, %k: memref<?x?x128xbf16>,
                                  %v: memref<?x?x128xbf16>, %do: memref<?x?x128xbf16>,
                                  %dq: memref<?x?x128xbf16>, %dk: memref<?x?x128xbf16>,
                                  %dv: memref<?x?x128xbf16>, %cu: memref<?xi32>) {
  blockattn.backward q(%q : memref<?x?x128xbf16>) k(%k : memref<?x?x128xbf16>)
      v(%v : memref<?x?x128xbf16>) do(%do : memref<?x?x128xbf16>)
      dq(%dq : memref<?x?x128xbf16>) dk(%dk : memref<?x?x128xbf16>)
      dv(%dv : memref<?x?x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 128 : i64, group = 2 : i64,
       block_size = 128 : i64}
  return
}
// The scores warpgroup makes dQ in two 64-column chunks of K, stored at
// columns 0 and 64; each accumulate warpgroup sums a chunk of dV and dK per
// pass and stores it at the pass's columns.
// PAIR90: warpspec.partition "load" role(load) warps(4) regs(96)
// PAIR90: warpspec.partition "scores" role(compute) warps(4) regs(176)
// PAIR90: warpspec.subview %{{.*}}[0] : <128x128xbf16, smem> -> <128x64xbf16, smem>
// PAIR90: warpspec.store {{.*}} {col_offset = 0 : i64} : <64x64xf32>
// PAIR90: warpspec.subview %{{.*}}[64] : <128x128xbf16, smem> -> <128x64xbf16, smem>
// PAIR90: warpspec.store {{.*}} {col_offset = 64 : i64} : <64x64xf32>
// PAIR90: warpspec.partition "accumulate" role(compute) warps(4) regs(120)
// PAIR90: warpspec.subview %{{.*}}[0] : <64x128xbf16, smem> -> <64x64xbf16, smem>
// PAIR90: scf.for {{.*}} iter_args(
// PAIR90: warpspec.store {{.*}} {col_offset = 0 : i64} : <64x64xf32>
// PAIR90: warpspec.subview %{{.*}}[64] : <64x128xbf16, smem> -> <64x64xbf16, smem>
// PAIR90: scf.for {{.*}} iter_args(
// PAIR90: warpspec.store {{.*}} {col_offset = 64 : i64} : <64x64xf32>
// Without rotary embeddings no partition is `explicit` (explicit_regs).
// PAIR90: warpspec.partition "accumulate1" role(compute) warps(4) regs(120) {
// On sm_100a the groups of 3 and more's budgets (104 / 144 / 256); the MMA
// warp's loop over the other head runs, each pass, to G pinned after the
// k/v head (G + min(kvHead, 0)), a count ptxas cannot read: with a plain pin
// it read one trip, laid the heads out straight and spilled the MMA warp.
// PAIR100: warpspec.partition "load" role(load) warps(4) regs(104) {
// PAIR100: warpspec.partition "mma" role(mma) warps(4) regs(144) {
// PAIR100: %[[G0:.*]] = warpspec.pin %{{.*}} after(%[[KV:.*]]) : i32
// PAIR100-NEXT: arith.constant 1 : i32
// PAIR100-NEXT: %[[ONE:.*]] = arith.constant 1 : i32
// PAIR100-NEXT: scf.for %{{.*}} = %[[ONE]] to %[[G0]]
// PAIR100: %[[G1:.*]] = warpspec.pin %{{.*}} after(%[[KV]]) : i32
// PAIR100: scf.for %{{.*}} to %[[G1]]
// PAIR100: warpspec.partition "softmax" role(softmax) warps(4) regs(256) {
// PAIR100: warpspec.store {{.*}} {col_offset = 64 : i64} : <64x64xf32>

//--- b128-rotary-wide.mlir
// Block size 128 with half-split rotary embeddings at head dim 96 (both
// chips; refused until session 24): the item is made in passes over 32-column
// chunks of the head dim, so every tensor is loaded in pair-complete 32-column
// chunks (pair_halves: columns [16 j, 16 j + 16) and their partners 48 on),
// each two 16-column pieces under the 32-byte swizzle (chunk_cols = 16: a
// 16-column box is 32 bytes, the 32-byte swizzle's span), K and V and each Q
// half rotated chunk by chunk as half-split parts (pair_offset 16 j), each
// pass's gradient chunk turned back on its own and stored as two 16-column
// pieces (columns 16 j and 48 + 16 j) through a 16-column staging tile (its own
// layout: the 32-byte swizzle).
func.func @gqa_backward_b128_rotary_wide(%q: memref<?x?x96xbf16>, %k: memref<?x?x96xbf16>,
                                         %v: memref<?x?x96xbf16>, %do: memref<?x?x96xbf16>,
                                         %dq: memref<?x?x96xbf16>, %dk: memref<?x?x96xbf16>,
                                         %dv: memref<?x?x96xbf16>, %cu: memref<?xi32>) {
  blockattn.backward q(%q : memref<?x?x96xbf16>) k(%k : memref<?x?x96xbf16>)
      v(%v : memref<?x?x96xbf16>) do(%do : memref<?x?x96xbf16>)
      dq(%dq : memref<?x?x96xbf16>) dk(%dk : memref<?x?x96xbf16>)
      dv(%dv : memref<?x?x96xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 96 : i64, group = 2 : i64,
       block_size = 128 : i64, rotary = #blockattn.rotary<half_split>,
       rotary_theta = 10000.0 : f32}
  return
}
// HS96: warpspec.channel "kv" {{.*}}<[128x96xbf16 chunk_cols = 16, 128x96xbf16 chunk_cols = 16], smem>
// HS96: warpspec.channel "qdo" {{.*}}<[64x96xbf16 chunk_cols = 16, 64x96xbf16 chunk_cols = 16, 64x96xbf16 chunk_cols = 16, 64x96xbf16 chunk_cols = 16], smem>
// The producer's six boxes a tile take 120 registers (at the passes' 96 and
// 104 ptxas spilled it at G = 2): sm_90a 120 / 168 / 112 / 112, sm_100a 120 /
// 128 / 256.
// HS96: warpspec.partition "load" role(load) warps(4) regs(120) {
// HS96: warpspec.tma_load {{.*}} {pair_halves} : memref<?x?x96xbf16>, <128x96xbf16, smem, chunk_cols = 16>
// HS96: warpspec.tma_load {{.*}} {pair_halves} : memref<?x?x96xbf16>, <64x96xbf16, smem, chunk_cols = 16>
// HS96100: warpspec.partition "mma" role(mma) warps(4) regs(128) {
// HS9690: warpspec.partition "scores" role(compute) warps(4) regs(168) {
// HS96100: warpspec.partition "softmax" role(softmax) warps(4) regs(256) {
// HS96: warpspec.scratch : <64x16xbf16, smem>
// HS96: warpspec.rotate({{.*}} {head_dim = 96 : i64, interleaved = false, pair_offset = 0 : i64{{.*}}} : !warpspec.buffer<128x32xbf16, smem, chunk_cols = 16>
// HS96: warpspec.rotate({{.*}} {head_dim = 96 : i64, interleaved = false, pair_offset = 16 : i64{{.*}}} : !warpspec.buffer<128x32xbf16, smem, chunk_cols = 16>
// HS96: warpspec.rotate({{.*}} {head_dim = 96 : i64, interleaved = false, pair_offset = 32 : i64{{.*}}} : !warpspec.buffer<128x32xbf16, smem, chunk_cols = 16>
// HS96: warpspec.rotate({{.*}} {head_dim = 96 : i64, interleaved = false, pair_offset = 32 : i64{{.*}}} : !warpspec.buffer<64x32xbf16, smem, chunk_cols = 16>
// HS96: rotate_tile {{.*}} {head_dim = 96 : i64, interleaved = false, inverse, pair_offset = 0 : i64{{.*}}} : <64x32xf32> -> <64x32xf32>
// HS96: warpspec.extract_columns %{{.*}}[0] : <64x32xf32> -> <64x16xf32>
// HS96: warpspec.store {{.*}} bulk {col_offset = 0 : i64{{.*}}} : <64x16xf32>, memref<?x?x96xbf16>, !warpspec.buffer<64x16xbf16, smem>
// HS96: warpspec.extract_columns %{{.*}}[16] : <64x32xf32> -> <64x16xf32>
// HS96: warpspec.store {{.*}} bulk {col_offset = 48 : i64{{.*}}} : <64x16xf32>, memref<?x?x96xbf16>, !warpspec.buffer<64x16xbf16, smem>
// HS96: rotate_tile {{.*}} {head_dim = 96 : i64, interleaved = false, inverse, pair_offset = 16 : i64{{.*}}} : <64x32xf32> -> <64x32xf32>
// HS96: warpspec.store {{.*}} bulk {col_offset = 16 : i64{{.*}}} : <64x16xf32>, memref<?x?x96xbf16>, !warpspec.buffer<64x16xbf16, smem>
// HS96: warpspec.store {{.*}} bulk {col_offset = 64 : i64{{.*}}} : <64x16xf32>, memref<?x?x96xbf16>, !warpspec.buffer<64x16xbf16, smem>
// HS96: rotate_tile {{.*}} {head_dim = 96 : i64, interleaved = false, inverse, pair_offset = 32 : i64{{.*}}} : <64x32xf32> -> <64x32xf32>
// HS96: warpspec.store {{.*}} bulk {col_offset = 32 : i64{{.*}}} : <64x16xf32>, memref<?x?x96xbf16>, !warpspec.buffer<64x16xbf16, smem>
// HS96: warpspec.store {{.*}} bulk {col_offset = 80 : i64{{.*}}} : <64x16xf32>, memref<?x?x96xbf16>, !warpspec.buffer<64x16xbf16, smem>
// The sm_90a accumulate warpgroups store dV and dK from their registers.
// HS9690: warpspec.partition "accumulate" role(compute) warps(4) regs(112) {
// HS9690: rotate_tile {{.*}} {head_dim = 96 : i64, interleaved = false, inverse, pair_offset = 0 : i64{{.*}}} : <64x32xf32> -> <64x32xf32>
// HS9690: warpspec.store {{.*}} {col_offset = 0 : i64} : <64x16xf32>, memref<?x?x96xbf16>
// HS9690: warpspec.store {{.*}} {col_offset = 48 : i64} : <64x16xf32>, memref<?x?x96xbf16>

//--- b128-rotary-wide-half-split.mlir
// Half-split at head dim 128 (both chips): every tensor is loaded in
// pair-complete 64-column chunks (pair_halves: columns [32 j, 32 j + 32) and
// their partners 64 on), each two 32-column pieces under the 64-byte swizzle
// (chunk_cols = 32, two boxes a chunk that fill their span; session 23:
// session 21's one box of two 64-byte pieces under the 128-byte swizzle missed
// the float64 reference on an H100), K and V and each Q half rotated chunk by
// chunk as half-split parts (pair_offset 32 j), each pass's gradient chunk
// turned back on its own and stored as two 32-column pieces (columns 32 j and
// 64 + 32 j).
func.func @gqa_backward_b128_rotary_wide_half_split(%q: memref<?x?x128xbf16>, %k: memref<?x?x128xbf16>,
                                                    %v: memref<?x?x128xbf16>, %do: memref<?x?x128xbf16>,
                                                    %dq: memref<?x?x128xbf16>, %dk: memref<?x?x128xbf16>,
                                                    %dv: memref<?x?x128xbf16>, %cu: memref<?xi32>,
                                                    %cos: memref<?x64xf32>, %sin: memref<?x64xf32>) {
  blockattn.backward q(%q : memref<?x?x128xbf16>) k(%k : memref<?x?x128xbf16>)
      v(%v : memref<?x?x128xbf16>) do(%do : memref<?x?x128xbf16>)
      dq(%dq : memref<?x?x128xbf16>) dk(%dk : memref<?x?x128xbf16>)
      dv(%dv : memref<?x?x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<?x64xf32>, memref<?x64xf32>)
      {element_type = bf16, head_dim = 128 : i64, group = 4 : i64,
       block_size = 128 : i64, rotary = #blockattn.rotary<half_split>}
  return
}
// The sm_90a budgets 72 / 176 / 128 / 136 (the interleaved kernel's 88 / 176 /
// 120 / 128 spilled both accumulate warpgroups with rotate_v), accumulate
// warpgroup 0 at the launch's 128 with its own setmaxnreg (`explicit`);
// sm_100a's the interleaved kernel's. On sm_90a every partition pins its
// shared-memory bases at each use and the scores warpgroup's dQ pieces their
// copy-out row steps (session 25: unpinned, ptxas spilled the producer at
// G = 4 and 8 and with a positions tensor, and the scores warpgroup with
// causal + dlse + rotate_v).
// HSWIDE90: warpspec.partition "load" role(load) warps(4) regs(72) pinned_bases {
// HSWIDE100: warpspec.partition "load" role(load) warps(4) regs(104) {
// HSWIDE: warpspec.tma_load {{.*}} {pair_halves} : memref<?x?x128xbf16>, <128x128xbf16, smem, chunk_cols = 32>
// HSWIDE: warpspec.tma_load {{.*}} {pair_halves} : memref<?x?x128xbf16>, <64x128xbf16, smem, chunk_cols = 32>
// HSWIDE90: warpspec.partition "scores" role(compute) warps(4) regs(176) pinned_bases {
// HSWIDE100: warpspec.partition "softmax" role(softmax) warps(4) regs(256) {
// HSWIDE: warpspec.rotate({{.*}} {head_dim = 128 : i64, interleaved = false, pair_offset = 0 : i64{{.*}}} : !warpspec.buffer<128x64xbf16, smem, chunk_cols = 32>
// HSWIDE: warpspec.rotate({{.*}} {head_dim = 128 : i64, interleaved = false, pair_offset = 32 : i64{{.*}}} : !warpspec.buffer<128x64xbf16, smem, chunk_cols = 32>
// HSWIDE: warpspec.rotate({{.*}} {head_dim = 128 : i64, interleaved = false, pair_offset = 0 : i64{{.*}}} : !warpspec.buffer<64x64xbf16, smem, chunk_cols = 32>
// HSWIDE: warpspec.rotate({{.*}} {head_dim = 128 : i64, interleaved = false, pair_offset = 32 : i64{{.*}}} : !warpspec.buffer<64x64xbf16, smem, chunk_cols = 32>
// HSWIDE: rotate_tile {{.*}} {head_dim = 128 : i64, interleaved = false, inverse, pair_offset = 0 : i64} : <64x64xf32> -> <64x64xf32>
// HSWIDE: warpspec.extract_columns %{{.*}}[0] : <64x64xf32> -> <64x32xf32>
// HSWIDE: warpspec.store {{.*}} {col_offset = 0 : i64, pinned_steps} : <64x32xf32>, memref<?x?x128xbf16>, !warpspec.buffer<64x32xbf16, smem>
// HSWIDE: warpspec.extract_columns %{{.*}}[32] : <64x64xf32> -> <64x32xf32>
// HSWIDE: warpspec.store {{.*}} {col_offset = 64 : i64{{.*}}} : <64x32xf32>, memref<?x?x128xbf16>, !warpspec.buffer<64x32xbf16, smem>
// HSWIDE: rotate_tile {{.*}} {head_dim = 128 : i64, interleaved = false, inverse, pair_offset = 32 : i64} : <64x64xf32> -> <64x64xf32>
// HSWIDE: warpspec.store {{.*}} {col_offset = 32 : i64{{.*}}} : <64x32xf32>, memref<?x?x128xbf16>, !warpspec.buffer<64x32xbf16, smem>
// HSWIDE: warpspec.store {{.*}} {col_offset = 96 : i64{{.*}}} : <64x32xf32>, memref<?x?x128xbf16>, !warpspec.buffer<64x32xbf16, smem>
// The sm_90a accumulate warpgroups store dV and dK from their registers.
// HSWIDE90: warpspec.partition "accumulate" role(compute) warps(4) regs(128) explicit pinned_bases {
// HSWIDE90: rotate_tile {{.*}} {head_dim = 128 : i64, interleaved = false, inverse, pair_offset = 0 : i64} : <64x64xf32> -> <64x64xf32>
// HSWIDE90: warpspec.store {{.*}} {col_offset = 0 : i64} : <64x32xf32>, memref<?x?x128xbf16>
// HSWIDE90: warpspec.store {{.*}} {col_offset = 64 : i64} : <64x32xf32>, memref<?x?x128xbf16>
// HSWIDE90: warpspec.partition "accumulate1" role(compute) warps(4) regs(136) pinned_bases {

//--- b128-rotary-wide-interleaved.mlir
// Interleaved at head dim 128 (sm_90a): the same two passes; accumulate
// warpgroup 1 (key half 1's turn-back) gets 128 registers, the launch's,
// with its own setmaxnreg (`explicit`: without it ptxas spilled it), the
// producer 88 and the scores warpgroup 176.
func.func @gqa_backward_b128_rotary_wide_interleaved(%q: memref<?x?x128xbf16>, %k: memref<?x?x128xbf16>,
                                                     %v: memref<?x?x128xbf16>, %do: memref<?x?x128xbf16>,
                                                     %dq: memref<?x?x128xbf16>, %dk: memref<?x?x128xbf16>,
                                                     %dv: memref<?x?x128xbf16>, %cu: memref<?xi32>) {
  blockattn.backward q(%q : memref<?x?x128xbf16>) k(%k : memref<?x?x128xbf16>)
      v(%v : memref<?x?x128xbf16>) do(%do : memref<?x?x128xbf16>)
      dq(%dq : memref<?x?x128xbf16>) dk(%dk : memref<?x?x128xbf16>)
      dv(%dv : memref<?x?x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 128 : i64, group = 2 : i64,
       block_size = 128 : i64, rotary = #blockattn.rotary<interleaved>,
       rotary_theta = 10000.0 : f32}
  return
}
// ROTWIDE90: warpspec.partition "load" role(load) warps(4) regs(88) {
// ROTWIDE90: warpspec.partition "scores" role(compute) warps(4) regs(176) {
// ROTWIDE90: warpspec.partition "accumulate" role(compute) warps(4) regs(120) {
// ROTWIDE90: rotate_tile {{.*}} {head_dim = 128 : i64, interleaved = true, inverse, pair_offset = 0 : i64, theta = 1.000000e+04 : f32} : <64x64xf32> -> <64x64xf32>
// ROTWIDE90: rotate_tile {{.*}} {head_dim = 128 : i64, interleaved = true, inverse, pair_offset = 32 : i64, theta = 1.000000e+04 : f32} : <64x64xf32> -> <64x64xf32>
// ROTWIDE90: warpspec.partition "accumulate1" role(compute) warps(4) regs(128) explicit {

//--- b128-rotary-wide-sm100a.mlir
// On sm_100a the grouped block-128 rotary backward at head dims 96 and 128 is
// built for every group (interleaved): a group of 2 too (session 20), its MMA
// warp's loop over the other head running to G pinned after the k/v head (a
// count ptxas cannot read), as without rotary embeddings; the softmax
// warpgroup rotates K and Q in loops of passes.
// ROTWIDE100G2: warpspec.partition "mma" role(mma) warps(4) regs(144)
// ROTWIDE100G2: warpspec.pin %{{.*}} after(%{{.*}}) : i32
// ROTWIDE100G2: warpspec.partition "softmax" role(softmax) warps(4) regs(256)
// ROTWIDE100G2: warpspec.rotate({{.*}}) {interleaved = true, pass_loop, theta = 1.000000e+04 : f32} : !warpspec.buffer<128x128xbf16, smem>
func.func @gqa_backward_b128_rotary_wide_sm100a(%q: memref<?x?x128xbf16>, %k: memref<?x?x128xbf16>,
                                                %v: memref<?x?x128xbf16>, %do: memref<?x?x128xbf16>,
                                                %dq: memref<?x?x128xbf16>, %dk: memref<?x?x128xbf16>,
                                                %dv: memref<?x?x128xbf16>, %cu: memref<?xi32>) {
  blockattn.backward q(%q : memref<?x?x128xbf16>) k(%k : memref<?x?x128xbf16>)
      v(%v : memref<?x?x128xbf16>) do(%do : memref<?x?x128xbf16>)
      dq(%dq : memref<?x?x128xbf16>) dk(%dk : memref<?x?x128xbf16>)
      dv(%dv : memref<?x?x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 128 : i64, group = 2 : i64,
       block_size = 128 : i64, rotary = #blockattn.rotary<interleaved>,
       rotary_theta = 10000.0 : f32}
  return
}

//--- b128-rotary-wide-interleaved-sm100a.mlir
// Interleaved at head dim 128 on sm_100a, a group of 4 (session 20): the
// plain kernel's two passes and budgets (104 / 144 / 256); the softmax
// warpgroup rotates K once an item and each head's Q halves every pass in a
// loop of passes that is not unrolled (pass_loop: unrolled, ptxas spilled it
// 8-24 bytes with causal + dlse), and turns each pass's 64-column chunk of
// dQ, dV, dK back on its own (pair_offset = 32 j).
func.func @gqa_backward_b128_rotary_wide_interleaved_sm100a(%q: memref<?x?x128xbf16>, %k: memref<?x?x128xbf16>,
                                                            %v: memref<?x?x128xbf16>, %do: memref<?x?x128xbf16>,
                                                            %dq: memref<?x?x128xbf16>, %dk: memref<?x?x128xbf16>,
                                                            %dv: memref<?x?x128xbf16>, %cu: memref<?xi32>) {
  blockattn.backward q(%q : memref<?x?x128xbf16>) k(%k : memref<?x?x128xbf16>)
      v(%v : memref<?x?x128xbf16>) do(%do : memref<?x?x128xbf16>)
      dq(%dq : memref<?x?x128xbf16>) dk(%dk : memref<?x?x128xbf16>)
      dv(%dv : memref<?x?x128xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 128 : i64, group = 4 : i64,
       block_size = 128 : i64, rotary = #blockattn.rotary<interleaved>,
       rotary_theta = 10000.0 : f32}
  return
}
// ROTWIDE100: warpspec.partition "load" role(load) warps(4) regs(104) {
// ROTWIDE100: warpspec.partition "mma" role(mma) warps(4) regs(144) {
// ROTWIDE100: warpspec.partition "softmax" role(softmax) warps(4) regs(256) {
// ROTWIDE100: warpspec.rotate({{.*}} {interleaved = true, pass_loop, theta = 1.000000e+04 : f32} : !warpspec.buffer<128x128xbf16, smem>
// ROTWIDE100: warpspec.rotate({{.*}} {interleaved = true, pass_loop, theta = 1.000000e+04 : f32} : !warpspec.buffer<64x128xbf16, smem>
// ROTWIDE100: rotate_tile {{.*}} {head_dim = 128 : i64, interleaved = true, inverse, pair_offset = 0 : i64, theta = 1.000000e+04 : f32} : <64x64xf32> -> <64x64xf32>
// ROTWIDE100-NEXT: warpspec.store {{.*}} {col_offset = 0 : i64, pinned_steps} : <64x64xf32>
// ROTWIDE100: warpspec.rotate({{.*}} {interleaved = true, pass_loop, theta = 1.000000e+04 : f32} : !warpspec.buffer<64x128xbf16, smem>
// ROTWIDE100: rotate_tile {{.*}} {head_dim = 128 : i64, interleaved = true, inverse, pair_offset = 32 : i64, theta = 1.000000e+04 : f32} : <64x64xf32> -> <64x64xf32>
// ROTWIDE100-NEXT: warpspec.store {{.*}} {col_offset = 64 : i64, pinned_steps} : <64x64xf32>

//--- theta-wide.mlir
// Interleaved at 192 with the angles computed from rotary_theta (session 19):
// K once an item and Q every pass are turned in a loop of passes that is not
// unrolled (pass_loop; unrolled, ptxas computed many passes' angles ahead of
// their turns and spilled 72-296 bytes), the gradient chunks as with tables.
func.func @gqa_rotary_theta_backward_head_dim_192(%q: memref<?x?x192xbf16>, %k: memref<?x?x192xbf16>,
                                                  %v: memref<?x?x192xbf16>, %do: memref<?x?x192xbf16>,
                                                  %dq: memref<?x?x192xbf16>, %dk: memref<?x?x192xbf16>,
                                                  %dv: memref<?x?x192xbf16>, %cu: memref<?xi32>) {
  blockattn.backward q(%q : memref<?x?x192xbf16>) k(%k : memref<?x?x192xbf16>)
      v(%v : memref<?x?x192xbf16>) do(%do : memref<?x?x192xbf16>)
      dq(%dq : memref<?x?x192xbf16>) dk(%dk : memref<?x?x192xbf16>)
      dv(%dv : memref<?x?x192xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 192 : i64, group = 4 : i64,
       rotary = #blockattn.rotary<interleaved>, rotary_theta = 10000.0 : f32}
  return
}

// THETA90: warpspec.partition "compute" role(compute) warps(4) regs(256)
// THETA90: warpspec.rotate(%[[K:[a-z0-9_]+]]) into(%[[K]]) {{.*}} {interleaved = true, pass_loop, theta = 1.000000e+04 : f32} : !warpspec.buffer<64x192xbf16, smem>
// THETA90: warpspec.rotate(%[[Q:[a-z0-9_#]+]]) into(%[[Q]]) {{.*}} {interleaved = true, pass_loop, theta = 1.000000e+04 : f32} : !warpspec.buffer<64x192xbf16, smem>
// THETA90: warpspec.rotate_tile {{.*}} {head_dim = 192 : i64, interleaved = true, inverse, pair_offset = 0 : i64, theta = 1.000000e+04 : f32}
// THETA90: scf.for {{.*}} iter_args(
// THETA90: warpspec.rotate({{.*}} pass_loop
// THETA90: warpspec.rotate_tile {{.*}} pair_offset = 64 : i64, theta = 1.000000e+04 : f32}
// THETA90-NEXT: warpspec.store

// THETA100: warpspec.partition "softmax" role(softmax) warps(4) regs(256)
// THETA100: warpspec.rotate({{.*}} {interleaved = true, pass_loop, theta = 1.000000e+04 : f32} : !warpspec.buffer<64x192xbf16, smem>
// THETA100: scf.for
// THETA100: warpspec.rotate({{.*}} {interleaved = true, pass_loop, theta = 1.000000e+04 : f32} : !warpspec.buffer<64x192xbf16, smem>
// THETA100: warpspec.rotate_tile {{.*}} {head_dim = 192 : i64, interleaved = true, inverse, pair_offset = 64 : i64, theta = 1.000000e+04 : f32}

//--- b128-wide.mlir
// Block size 128 above head dim 128 (sm_90a, no rotary embeddings): an item's
// K and V and a query head's Q and dO of the whole head dim do not fit shared
// memory next to P and dS, so "kv" carries the item's record alone, "chunks"
// the 64-column chunks of a query half and K (then dO's and V's) that S and
// dP are accumulated over, and "qdo" a pass's chunk of Q's and dO's halves and
// K. sm_100a the same rings (session 22), S and dP accumulated in tensor memory.
func.func @gqa_backward_b128_wide(%q: memref<?x?x192xbf16>, %k: memref<?x?x192xbf16>,
                                  %v: memref<?x?x192xbf16>, %do: memref<?x?x192xbf16>,
                                  %dq: memref<?x?x192xbf16>, %dk: memref<?x?x192xbf16>,
                                  %dv: memref<?x?x192xbf16>, %cu: memref<?xi32>) {
  blockattn.backward q(%q : memref<?x?x192xbf16>) k(%k : memref<?x?x192xbf16>)
      v(%v : memref<?x?x192xbf16>) do(%do : memref<?x?x192xbf16>)
      dq(%dq : memref<?x?x192xbf16>) dk(%dk : memref<?x?x192xbf16>)
      dv(%dv : memref<?x?x192xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {element_type = bf16, head_dim = 192 : i64, group = 4 : i64,
       block_size = 128 : i64}
  return
}
// WIDE90: %[[KV:.*]] = warpspec.channel "kv" depth(2) : <[], smem>
// WIDE90-NEXT: %[[CHUNKS:.*]] = warpspec.channel "chunks" depth(4) : <[64x64xbf16, 128x64xbf16], smem>
// WIDE90-NEXT: %[[QDO:.*]] = warpspec.channel "qdo" depth(1) : <[64x64xbf16, 64x64xbf16, 64x64xbf16, 64x64xbf16, 128x64xbf16], smem>
// WIDE90-NEXT: warpspec.channel "pds" depth(1) : <[64x128xbf16, 64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
// WIDE90: warpspec.partition "load" role(load) warps(4) regs(96)
// WIDE90: warpspec.acquire %[[KV]] : <[], smem>
// The first pass's first query head: q's half 0 and K chunk by chunk, then
// dO's and V's.
// WIDE90: warpspec.acquire %[[CHUNKS]]
// WIDE90-NEXT: warpspec.tma_load %arg0[%{{.*}}] into %{{.*}}#0 {col_offset = 0 : i64}
// WIDE90-NEXT: warpspec.tma_load %arg1[%{{.*}}] into %{{.*}}#1 {col_offset = 0 : i64}
// WIDE90: warpspec.tma_load %arg0[%{{.*}}] into %{{.*}}#0 {col_offset = 128 : i64}
// WIDE90: warpspec.tma_load %arg3[%{{.*}}] into %{{.*}}#0 {col_offset = 0 : i64}
// WIDE90-NEXT: warpspec.tma_load %arg2[%{{.*}}] into %{{.*}}#1 {col_offset = 0 : i64}
// WIDE90: warpspec.acquire %[[QDO]]
// WIDE90: warpspec.tma_load %arg1[%{{.*}}] into %{{.*}}#4 {col_offset = 0 : i64}
// The third pass's "qdo" slot: chunk 2.
// WIDE90: warpspec.acquire %[[QDO]]
// WIDE90: warpspec.acquire %[[QDO]]
// WIDE90: warpspec.tma_load %arg1[%{{.*}}] into %{{.*}}#4 {col_offset = 128 : i64}
// WIDE90: warpspec.close %[[KV]]
// S and dP accumulated over the chunks (an scf.for after the first), dQ's
// chunk of each pass stored at its column.
// WIDE90: warpspec.partition "scores" role(compute) warps(4) regs(176)
// WIDE90: scf.for {{.*}} iter_args({{.*}}) -> (!warpspec.acc<64x128xf32>)
// WIDE90: warpspec.store {{.*}} {col_offset = 0 : i64} : <64x64xf32>
// WIDE90: warpspec.store {{.*}} {col_offset = 128 : i64} : <64x64xf32>
// WIDE90: warpspec.partition "accumulate" role(compute) warps(4) regs(120)
// WIDE90: warpspec.store {{.*}} {col_offset = 128 : i64} : <64x64xf32>
// WIDE90: warpspec.partition "accumulate1" role(compute) warps(4) regs(120)

// sm_100a: the same producer; the MMA warp accumulates each half's S (then
// dP) over the chunks in tensor memory (the first chunk overwrites, an scf.for
// the others, operands pinned after the head), then takes the pass's "qdo"
// slot and the halves' P and dS for dQ (dS K's chunk) and the key halves' dV
// and dK chunks; tensor memory S 128 + dP 128 + dQ, dV, dK 64 each.
// WIDE100: %[[KV:.*]] = warpspec.channel "kv" depth(2) : <[], smem>
// WIDE100-NEXT: %[[CHUNKS:.*]] = warpspec.channel "chunks" depth(4) : <[64x64xbf16, 128x64xbf16], smem>
// WIDE100-NEXT: %[[QDO:.*]] = warpspec.channel "qdo" depth(1) : <[64x64xbf16, 64x64xbf16, 64x64xbf16, 64x64xbf16, 128x64xbf16], smem>
// WIDE100-NEXT: warpspec.channel "items" depth(2) : <[], smem>
// WIDE100-NEXT: %[[S:.*]] = warpspec.channel "s" depth(2) : <[64x128xf32], tmem>
// WIDE100-NEXT: %[[DP:.*]] = warpspec.channel "dp" depth(2) : <[64x128xf32], tmem>
// WIDE100-NEXT: %[[DQ:.*]] = warpspec.channel "dq" depth(2) : <[64x64xf32], tmem>
// WIDE100-NEXT: warpspec.channel "dv" depth(2) : <[64x64xf32], tmem>
// WIDE100-NEXT: warpspec.channel "dk" depth(2) : <[64x64xf32], tmem>
// WIDE100-NEXT: %[[PDS:.*]] = warpspec.channel "pds" depth(2) : <[64x128xbf16, 64x128xbf16], smem>
// WIDE100: warpspec.partition "load" role(load) warps(4) regs(112)
// WIDE100: warpspec.acquire %[[KV]] : <[], smem>
// WIDE100: warpspec.acquire %[[CHUNKS]]
// WIDE100: warpspec.acquire %[[QDO]]
// WIDE100: warpspec.close %[[KV]]
// WIDE100: warpspec.partition "mma" role(mma) warps(4) regs(136)
// WIDE100-NEXT: warpspec.consume %[[KV]]
// WIDE100: warpspec.acquire %[[S]]
// WIDE100-NEXT: warpspec.get %[[CHUNKS]]
// WIDE100: warpspec.mma_async {{.*}} {transpose_b} : <64x64xbf16, smem>, <128x64xbf16, smem>, <64x128xf32, tmem>
// WIDE100: scf.for
// WIDE100: warpspec.get %[[CHUNKS]]
// WIDE100: warpspec.mma_async {{.*}} {accumulate, transpose_b} : <64x64xbf16, smem>, <128x64xbf16, smem>, <64x128xf32, tmem>
// WIDE100: warpspec.release %{{.*}} after_mma
// WIDE100: warpspec.acquire %[[DP]]
// WIDE100: warpspec.acquire %[[S]]
// WIDE100: warpspec.acquire %[[DP]]
// WIDE100: %{{.*}}, %[[QB:.*]]:5 = warpspec.get %[[QDO]]
// WIDE100-NEXT: %{{.*}}, %[[PB:.*]]:2 = warpspec.get %[[PDS]]
// WIDE100-NEXT: warpspec.acquire %[[DQ]]
// WIDE100-NEXT: %[[K:.*]] = warpspec.pin %[[QB]]#4 after
// WIDE100-NEXT: %[[DS:.*]] = warpspec.pin %[[PB]]#1 after
// WIDE100-NEXT: warpspec.mma_async %[[DS]], %[[K]] into {{.*}} : <64x128xbf16, smem>, <128x64xbf16, smem>, <64x64xf32, tmem>
// The softmax warpgroup's loop over the heads before the last runs to G - 1
// pinned after the k/v head (with the constant, ptxas spilled it at G = 3).
// WIDE100: warpspec.partition "softmax" role(softmax) warps(4) regs(256)
// WIDE100: %[[HEADS:.*]] = warpspec.pin %c3_i32 after(%{{.*}}) : i32
// WIDE100: scf.for %{{.*}} = %{{.*}} to %[[HEADS]] step
// WIDE100: warpspec.store {{.*}} {col_offset = 0 : i64} : <64x64xf32>
// WIDE100: warpspec.store {{.*}} {col_offset = 128 : i64} : <64x64xf32>

//--- b128-wide-rotary.mlir
// Above head dim 128 with rotary embeddings (sm_90a, session 22): the record
// carries the item's position; the scores warpgroup rotates every streamed
// chunk in place as it lands, chunk j a part of the rows at pair_offset 32 j
// (the first before the chunk loop, the others in one scf.if a chunk index
// inside it), the pass's chunks of Q's halves and K in "qdo" before the
// head's "pds" commit, and turns each dQ chunk back on its own; the
// accumulate warpgroups turn each dK chunk back after the group.
func.func @gqa_backward_b128_wide_rotary(%q: memref<?x?x256xbf16>, %k: memref<?x?x256xbf16>,
                                         %v: memref<?x?x256xbf16>, %do: memref<?x?x256xbf16>,
                                         %dq: memref<?x?x256xbf16>, %dk: memref<?x?x256xbf16>,
                                         %dv: memref<?x?x256xbf16>, %cu: memref<?xi32>,
                                         %cos: memref<?x128xf32>, %sin: memref<?x128xf32>) {
  blockattn.backward q(%q : memref<?x?x256xbf16>) k(%k : memref<?x?x256xbf16>)
      v(%v : memref<?x?x256xbf16>) do(%do : memref<?x?x256xbf16>)
      dq(%dq : memref<?x?x256xbf16>) dk(%dk : memref<?x?x256xbf16>)
      dv(%dv : memref<?x?x256xbf16>) cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<?x128xf32>, memref<?x128xf32>)
      {element_type = bf16, head_dim = 256 : i64, group = 2 : i64,
       block_size = 128 : i64, rotary = #blockattn.rotary<interleaved>}
  return
}
// WIDEROT90: %[[CHUNKS:.*]] = warpspec.channel "chunks" depth(4)
// WIDEROT90-NEXT: %[[QDO:.*]] = warpspec.channel "qdo" depth(1)
// WIDEROT90: warpspec.partition "load" role(load) warps(4) regs(96)
// WIDEROT90: warpspec.commit %{{.*}} tile(%{{.*}}, %{{.*}}, %{{.*}}) position(%{{.*}})
// WIDEROT90: warpspec.partition "scores" role(compute) warps(4) regs(176)
// WIDEROT90: warpspec.tile_position
// WIDEROT90: warpspec.get %[[CHUNKS]]
// WIDEROT90: warpspec.rotate({{.*}}) {head_dim = 256 : i64, interleaved = true, pair_offset = 0 : i64, pass_loop} : !warpspec.buffer<64x64xbf16, smem>
// WIDEROT90: warpspec.rotate({{.*}}) {head_dim = 256 : i64, interleaved = true, pair_offset = 0 : i64, pass_loop} : !warpspec.buffer<128x64xbf16, smem>
// WIDEROT90: scf.for {{.*}} iter_args({{.*}}) -> (!warpspec.acc<64x128xf32>)
// WIDEROT90-NEXT: warpspec.get %[[CHUNKS]]
// WIDEROT90: scf.if
// WIDEROT90: warpspec.rotate({{.*}}) {head_dim = 256 : i64, interleaved = true, pair_offset = 32 : i64, pass_loop} : !warpspec.buffer<64x64xbf16, smem>
// WIDEROT90: scf.if
// WIDEROT90: pair_offset = 64 : i64
// WIDEROT90: scf.if
// WIDEROT90: pair_offset = 96 : i64
// WIDEROT90: warpspec.mma
// The pass's "qdo" slot: Q's halves and K rotated, then the "pds" commit.
// WIDEROT90: warpspec.get %[[QDO]]
// WIDEROT90: warpspec.rotate({{.*}}) {head_dim = 256 : i64, interleaved = true, pair_offset = 0 : i64, pass_loop} : !warpspec.buffer<64x64xbf16, smem>
// WIDEROT90: warpspec.rotate({{.*}}) {head_dim = 256 : i64, interleaved = true, pair_offset = 0 : i64, pass_loop} : !warpspec.buffer<64x64xbf16, smem>
// WIDEROT90: warpspec.rotate({{.*}}) {head_dim = 256 : i64, interleaved = true, pair_offset = 0 : i64, pass_loop} : !warpspec.buffer<128x64xbf16, smem>
// WIDEROT90-NEXT: warpspec.commit
// WIDEROT90: warpspec.rotate_tile {{.*}} {head_dim = 256 : i64, interleaved = true, inverse, pair_offset = 0 : i64} : <64x64xf32> -> <64x64xf32>
// WIDEROT90: warpspec.store {{.*}} {col_offset = 0 : i64} : <64x64xf32>
// The last pass: pairs 96 on.
// WIDEROT90: warpspec.rotate_tile {{.*}} {head_dim = 256 : i64, interleaved = true, inverse, pair_offset = 96 : i64} : <64x64xf32> -> <64x64xf32>
// WIDEROT90: warpspec.store {{.*}} {col_offset = 192 : i64} : <64x64xf32>
// WIDEROT90: warpspec.partition "accumulate" role(compute) warps(4) regs(120)
// WIDEROT90: warpspec.rotate_tile {{.*}} {head_dim = 256 : i64, interleaved = true, inverse, pair_offset = 0 : i64}
// WIDEROT90: warpspec.rotate_tile {{.*}} {head_dim = 256 : i64, interleaved = true, inverse, pair_offset = 96 : i64}
// WIDEROT90: warpspec.partition "accumulate1" role(compute) warps(4) regs(120)
// Without rotate_v (no KernelPlan::pinnedAddresses) the accumulate
// warpgroups' stores hold their rows' addresses as LLVM places them.
// WIDEROT90: warpspec.store {{.*}} {col_offset = 0 : i64} : <64x64xf32>

// The same with rotate_v and dlse (session 25): with the plan's pinned
// addresses the scores warpgroup reads dlse at rows derived where it reads
// (pinned_rows), and the accumulate warpgroups store dV and dK from their
// registers at rows derived where they store (pinned_steps): held from
// the partition's entry, those addresses were what ptxas spilled (4-24
// bytes at head dims 192 and 256). Since session 28 they turn dV and dK
// back with the tables indexed in 32 bits and their row count computed at
// the use (narrow_index, pinned_table_rows), as the half-split ones: in 64
// bits ptxas spilled the tables' parameters at G = 2 (36 bytes).
//--- b128-wide-rotary-rv.mlir
func.func @grouped_b128_wide_rotary_rv(%q: memref<?x?x256xbf16>, %k: memref<?x?x256xbf16>,
                                       %v: memref<?x?x256xbf16>, %do: memref<?x?x256xbf16>,
                                       %dq: memref<?x?x256xbf16>, %dk: memref<?x?x256xbf16>,
                                       %dv: memref<?x?x256xbf16>, %cu: memref<?xi32>,
                                       %cos: memref<?x128xf32>, %sin: memref<?x128xf32>,
                                       %dlse: memref<?x?xf32, strided<[?, 1]>>) {
  blockattn.backward q(%q : memref<?x?x256xbf16>) k(%k : memref<?x?x256xbf16>)
      v(%v : memref<?x?x256xbf16>) do(%do : memref<?x?x256xbf16>)
      dq(%dq : memref<?x?x256xbf16>) dk(%dk : memref<?x?x256xbf16>)
      dv(%dv : memref<?x?x256xbf16>) cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<?x128xf32>, memref<?x128xf32>)
      dlse(%dlse : memref<?x?xf32, strided<[?, 1]>>)
      {element_type = bf16, head_dim = 256 : i64, group = 2 : i64,
       block_size = 128 : i64, rotary = #blockattn.rotary<interleaved>, rotate_v}
  return
}
// WIDEROTRV90: warpspec.partition "scores" role(compute) warps(4) regs(176)
// WIDEROTRV90: warpspec.load_rows {{.*}} {pinned_rows}
// WIDEROTRV90: warpspec.store {{.*}} {col_offset = 0 : i64, pinned_steps} : <64x64xf32>
// WIDEROTRV90: warpspec.partition "accumulate" role(compute) warps(4) regs(120)
// WIDEROTRV90: warpspec.rotate_tile {{.*}} {head_dim = 256 : i64, interleaved = true, inverse, narrow_index, pair_offset = 0 : i64, pinned_table_rows}
// WIDEROTRV90-NEXT: warpspec.store {{.*}} {col_offset = 0 : i64, pinned_steps, wide_offsets} : <64x64xf32>, memref<?x?x256xbf16>{{$}}
// WIDEROTRV90: warpspec.store {{.*}} {col_offset = 0 : i64, pinned_steps, wide_offsets} : <64x64xf32>, memref<?x?x256xbf16>{{$}}
// WIDEROTRV90: warpspec.partition "accumulate1" role(compute) warps(4) regs(120)
// WIDEROTRV90: warpspec.store {{.*}} {col_offset = 0 : i64, pinned_steps, wide_offsets} : <64x64xf32>, memref<?x?x256xbf16>{{$}}

// Half-split with rotate_v (session 26): the scores warpgroup turns every
// chunk's items in two runs of 4 pairs (split_items: V's chunk is turned
// next to P and dP, where whole items of 8 pairs spilled it 4-44 bytes);
// at head dim 256 the accumulate warpgroups index the tables in 32 bits
// (narrow_index: in 64 bits ptxas held and spilled each table's base plus
// the thread's column, 24 bytes each), at 192 not (16 bytes with it).
//--- b128-wide-half-split-rv.mlir
func.func @grouped_b128_d256_half_split_rv(%q: memref<?x?x256xbf16>, %k: memref<?x?x256xbf16>,
                                           %v: memref<?x?x256xbf16>, %do: memref<?x?x256xbf16>,
                                           %dq: memref<?x?x256xbf16>, %dk: memref<?x?x256xbf16>,
                                           %dv: memref<?x?x256xbf16>, %cu: memref<?xi32>,
                                           %cos: memref<?x128xf32>, %sin: memref<?x128xf32>) {
  blockattn.backward q(%q : memref<?x?x256xbf16>) k(%k : memref<?x?x256xbf16>)
      v(%v : memref<?x?x256xbf16>) do(%do : memref<?x?x256xbf16>)
      dq(%dq : memref<?x?x256xbf16>) dk(%dk : memref<?x?x256xbf16>)
      dv(%dv : memref<?x?x256xbf16>) cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<?x128xf32>, memref<?x128xf32>)
      {element_type = bf16, head_dim = 256 : i64, group = 2 : i64,
       block_size = 128 : i64, rotary = #blockattn.rotary<half_split>, rotate_v}
  return
}
func.func @grouped_b128_d192_half_split_rv(%q: memref<?x?x192xbf16>, %k: memref<?x?x192xbf16>,
                                           %v: memref<?x?x192xbf16>, %do: memref<?x?x192xbf16>,
                                           %dq: memref<?x?x192xbf16>, %dk: memref<?x?x192xbf16>,
                                           %dv: memref<?x?x192xbf16>, %cu: memref<?xi32>,
                                           %cos: memref<?x96xf32>, %sin: memref<?x96xf32>) {
  blockattn.backward q(%q : memref<?x?x192xbf16>) k(%k : memref<?x?x192xbf16>)
      v(%v : memref<?x?x192xbf16>) do(%do : memref<?x?x192xbf16>)
      dq(%dq : memref<?x?x192xbf16>) dk(%dk : memref<?x?x192xbf16>)
      dv(%dv : memref<?x?x192xbf16>) cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<?x96xf32>, memref<?x96xf32>)
      {element_type = bf16, head_dim = 192 : i64, group = 2 : i64,
       block_size = 128 : i64, rotary = #blockattn.rotary<half_split>, rotate_v}
  return
}
// WIDEHSRV90-LABEL: func.func @grouped_b128_d256_half_split_rv
// WIDEHSRV90: warpspec.partition "scores" role(compute) warps(4) regs(176)
// The first chunk of query half 0 and of K, then V's in the dP loop.
// WIDEHSRV90: warpspec.rotate({{.*}}) {head_dim = 256 : i64, interleaved = false, pair_offset = 0 : i64, pass_loop, split_items} : !warpspec.buffer<64x64xbf16, smem, chunk_cols = 32>
// WIDEHSRV90: warpspec.rotate({{.*}}) {head_dim = 256 : i64, interleaved = false, pair_offset = 0 : i64, pass_loop, split_items} : !warpspec.buffer<128x64xbf16, smem, chunk_cols = 32>
// WIDEHSRV90: warpspec.rotate({{.*}}) {head_dim = 256 : i64, interleaved = false, pair_offset = 96 : i64, pass_loop, split_items} : !warpspec.buffer<128x64xbf16, smem, chunk_cols = 32>
// dQ is turned back with 64-bit table indices.
// WIDEHSRV90: warpspec.rotate_tile {{.*}} {head_dim = 256 : i64, interleaved = false, inverse, pair_offset = 0 : i64} : <64x64xf32>
// WIDEHSRV90: warpspec.partition "accumulate" role(compute) warps(4) regs(120)
// WIDEHSRV90: warpspec.rotate_tile {{.*}} {head_dim = 256 : i64, interleaved = false, inverse, narrow_index, pair_offset = 0 : i64} : <64x64xf32>
// WIDEHSRV90: warpspec.rotate_tile {{.*}} {head_dim = 256 : i64, interleaved = false, inverse, narrow_index, pair_offset = 96 : i64} : <64x64xf32>
// WIDEHSRV90: warpspec.partition "accumulate1" role(compute) warps(4) regs(120)
// WIDEHSRV90: warpspec.rotate_tile {{.*}} {head_dim = 256 : i64, interleaved = false, inverse, narrow_index, pair_offset = 0 : i64} : <64x64xf32>
// WIDEHSRV90-LABEL: func.func @grouped_b128_d192_half_split_rv
// WIDEHSRV90: warpspec.rotate({{.*}}) {head_dim = 192 : i64, interleaved = false, pair_offset = 0 : i64, pass_loop, split_items}
// WIDEHSRV90: warpspec.partition "accumulate" role(compute) warps(4) regs(120)
// WIDEHSRV90: warpspec.rotate_tile {{.*}} {head_dim = 192 : i64, interleaved = false, inverse, pair_offset = 0 : i64} : <64x64xf32>
// WIDEHSRV90: warpspec.rotate_tile {{.*}} {head_dim = 192 : i64, interleaved = false, inverse, pair_offset = 64 : i64} : <64x64xf32>

// The sm_100a kernel (b128-wide-rotary.mlir above; session 24): a rotary
// warpgroup between the producer and the MMA warp takes every slot of
// "chunks" and "qdo" in the producer's order, rotates q's and K's chunks
// (V's with rotate_v) in place at pairs 32 j, the "qdo" slot's Q halves and
// K at the pass's pairs, and signals each rotated slot through "rotated"
// (five deep: the four "chunks" slots and the "qdo" slot); the MMA warp
// waits on a signal after each slot it gets that was rotated (S's chunks and
// "qdo", not dP's without rotate_v); the softmax warpgroup takes the items
// from "kv" (no "items" ring) and turns dQ's chunks and the group's dV's and
// dK's back.
// WIDEROT100: %[[KV:.*]] = warpspec.channel "kv" depth(2) : <[], smem>
// WIDEROT100-NEXT: %[[CHUNKS:.*]] = warpspec.channel "chunks" depth(4) : <[64x64xbf16, 128x64xbf16], smem>
// WIDEROT100-NEXT: %[[QDO:.*]] = warpspec.channel "qdo" depth(1)
// WIDEROT100-NEXT: %[[ROT:.*]] = warpspec.channel "rotated" depth(5) : <[], smem>
// WIDEROT100-NEXT: %[[S:.*]] = warpspec.channel "s" depth(2)
// WIDEROT100-NEXT: %[[DP:.*]] = warpspec.channel "dp" depth(2)
// WIDEROT100: warpspec.partition "load" role(load) warps(4) regs(96)
// WIDEROT100: warpspec.commit %{{.*}} tile(%{{.*}}, %{{.*}}, %{{.*}}) position(%{{.*}})
// WIDEROT100: warpspec.partition "rotary" role(rotary) warps(4) regs(64) {
// WIDEROT100-NEXT: warpspec.consume %[[KV]]
// WIDEROT100-NEXT: warpspec.tile_position
// S's first chunk at pair 0: q's half, then K's 128 rows, then the signal.
// WIDEROT100: warpspec.get %[[CHUNKS]]
// WIDEROT100: warpspec.rotate({{.*}}) {head_dim = 256 : i64, interleaved = true, pair_offset = 0 : i64, pass_loop} : !warpspec.buffer<64x64xbf16, smem>
// WIDEROT100: warpspec.rotate({{.*}}) {head_dim = 256 : i64, interleaved = true, pair_offset = 0 : i64, pass_loop} : !warpspec.buffer<128x64xbf16, smem>
// WIDEROT100-NEXT: warpspec.acquire %[[ROT]]
// The others in a loop, one scf.if a chunk index.
// WIDEROT100: scf.for
// WIDEROT100-NEXT: warpspec.get %[[CHUNKS]]
// WIDEROT100: scf.if
// WIDEROT100: pair_offset = 32 : i64
// WIDEROT100: scf.if
// WIDEROT100: pair_offset = 64 : i64
// WIDEROT100: scf.if
// WIDEROT100: pair_offset = 96 : i64
// WIDEROT100: warpspec.acquire %[[ROT]]
// dP's chunks (no rotate_v): taken and given back, no signal.
// WIDEROT100: %[[DPSLOT:.*]], %{{.*}} = warpspec.get %[[CHUNKS]]
// WIDEROT100-NEXT: warpspec.release %[[DPSLOT]]
// WIDEROT100: scf.for
// WIDEROT100-NEXT: %[[DPSLOT2:.*]], %{{.*}} = warpspec.get %[[CHUNKS]]
// WIDEROT100-NEXT: warpspec.release %[[DPSLOT2]]
// The pass's "qdo" slot: Q's halves and K at its pairs (pass 0: pair 0).
// WIDEROT100: warpspec.get %[[QDO]]
// WIDEROT100: warpspec.rotate({{.*}}) {head_dim = 256 : i64, interleaved = true, pair_offset = 0 : i64, pass_loop} : !warpspec.buffer<64x64xbf16, smem>
// WIDEROT100: warpspec.rotate({{.*}}) {head_dim = 256 : i64, interleaved = true, pair_offset = 0 : i64, pass_loop} : !warpspec.buffer<64x64xbf16, smem>
// WIDEROT100: warpspec.rotate({{.*}}) {head_dim = 256 : i64, interleaved = true, pair_offset = 0 : i64, pass_loop} : !warpspec.buffer<128x64xbf16, smem>
// WIDEROT100-NEXT: warpspec.acquire %[[ROT]]
// The last pass (each pass's loop over the heads takes one "qdo" slot a
// head): "qdo" at pairs 96 on.
// WIDEROT100: warpspec.get %[[QDO]]
// WIDEROT100: warpspec.get %[[QDO]]
// WIDEROT100: warpspec.get %[[QDO]]
// WIDEROT100: warpspec.rotate({{.*}}) {head_dim = 256 : i64, interleaved = true, pair_offset = 96 : i64, pass_loop} : !warpspec.buffer<64x64xbf16, smem>
// WIDEROT100: warpspec.rotate({{.*}}) {head_dim = 256 : i64, interleaved = true, pair_offset = 96 : i64, pass_loop} : !warpspec.buffer<128x64xbf16, smem>
// WIDEROT100-NEXT: warpspec.acquire %[[ROT]]
// The MMA warp at the launch's 128 registers with its own setmaxnreg.
// WIDEROT100: warpspec.partition "mma" role(mma) warps(4) regs(128) explicit {
// WIDEROT100-NEXT: warpspec.consume %[[KV]]
// WIDEROT100: warpspec.acquire %[[S]]
// WIDEROT100-NEXT: warpspec.get %[[CHUNKS]]
// WIDEROT100-NEXT: %[[SIG:.*]] = warpspec.get %[[ROT]]
// WIDEROT100-NEXT: warpspec.release %[[SIG]]
// WIDEROT100: scf.for
// WIDEROT100-NEXT: warpspec.get %[[CHUNKS]]
// WIDEROT100-NEXT: warpspec.get %[[ROT]]
// WIDEROT100: warpspec.acquire %[[DP]]
// WIDEROT100-NEXT: warpspec.get %[[CHUNKS]]
// WIDEROT100-NEXT: warpspec.pin
// WIDEROT100: warpspec.get %[[QDO]]
// WIDEROT100-NEXT: warpspec.get %[[ROT]]
// WIDEROT100: warpspec.partition "softmax" role(softmax) warps(4) regs(224) {
// WIDEROT100: warpspec.consume %[[KV]]
// WIDEROT100-NEXT: warpspec.tile_position
// WIDEROT100: warpspec.rotate_tile {{.*}} {head_dim = 256 : i64, interleaved = true, inverse, pair_offset = 0 : i64} : <64x64xf32> -> <64x64xf32>
// WIDEROT100-NEXT: warpspec.store {{.*}} {col_offset = 0 : i64, pinned_steps} : <64x64xf32>
// The last pass: pairs 96 on, column 192.
// WIDEROT100: warpspec.rotate_tile {{.*}} {head_dim = 256 : i64, interleaved = true, inverse, pair_offset = 96 : i64} : <64x64xf32> -> <64x64xf32>
// WIDEROT100-NEXT: warpspec.store {{.*}} {col_offset = 192 : i64, pinned_steps} : <64x64xf32>

//--- b128-wide-rotary-sm100a.mlir
// The sm_100a kernel with half-split pairs and rotate_v (session 24; refused
// until then): every streamed chunk loaded pair-complete as two 32-column
// pieces under the 64-byte swizzle (chunk_cols = 32), the rotary warpgroup
// rotating V's chunks too (the MMA warp waiting on their signals in the dP
// loop), each gradient chunk turned back and stored as two 32-column pieces
// (pairs 32 c on: columns 32 c and D / 2 + 32 c).
func.func @gqa_backward_b128_wide_rotary(%q: memref<?x?x256xbf16>, %k: memref<?x?x256xbf16>,
                                         %v: memref<?x?x256xbf16>, %do: memref<?x?x256xbf16>,
                                         %dq: memref<?x?x256xbf16>, %dk: memref<?x?x256xbf16>,
                                         %dv: memref<?x?x256xbf16>, %cu: memref<?xi32>,
                                         %cos: memref<?x128xf32>, %sin: memref<?x128xf32>) {
  blockattn.backward q(%q : memref<?x?x256xbf16>) k(%k : memref<?x?x256xbf16>)
      v(%v : memref<?x?x256xbf16>) do(%do : memref<?x?x256xbf16>)
      dq(%dq : memref<?x?x256xbf16>) dk(%dk : memref<?x?x256xbf16>)
      dv(%dv : memref<?x?x256xbf16>) cu_seqlens(%cu : memref<?xi32>)
      rotary(%cos, %sin : memref<?x128xf32>, memref<?x128xf32>)
      {element_type = bf16, head_dim = 256 : i64, group = 2 : i64,
       block_size = 128 : i64, rotary = #blockattn.rotary<half_split>, rotate_v}
  return
}
// WIDEROTHS100: %[[CHUNKS:.*]] = warpspec.channel "chunks" depth(4) : <[64x64xbf16 chunk_cols = 32, 128x64xbf16 chunk_cols = 32], smem>
// WIDEROTHS100-NEXT: %[[QDO:.*]] = warpspec.channel "qdo" depth(1)
// WIDEROTHS100-NEXT: %[[ROT:.*]] = warpspec.channel "rotated" depth(5) : <[], smem>
// WIDEROTHS100-NEXT: %[[S:.*]] = warpspec.channel "s" depth(2)
// WIDEROTHS100-NEXT: %[[DP:.*]] = warpspec.channel "dp" depth(2)
// WIDEROTHS100: warpspec.partition "load" role(load) warps(4) regs(96)
// WIDEROTHS100: warpspec.tma_load {{.*}} {col_offset = 0 : i64, pair_halves} : memref<?x?x256xbf16>, <64x64xbf16, smem, chunk_cols = 32>
// WIDEROTHS100: warpspec.partition "rotary" role(rotary) warps(4) regs(64) {
// WIDEROTHS100: warpspec.rotate({{.*}}) {head_dim = 256 : i64, interleaved = false, pair_offset = 0 : i64, pass_loop} : !warpspec.buffer<64x64xbf16, smem, chunk_cols = 32>
// WIDEROTHS100: warpspec.rotate({{.*}}) {head_dim = 256 : i64, interleaved = false, pair_offset = 0 : i64, pass_loop} : !warpspec.buffer<128x64xbf16, smem, chunk_cols = 32>
// WIDEROTHS100-NEXT: warpspec.acquire %[[ROT]]
// The loop over S's other chunks, then dP's first chunk: V's rotated
// (rotate_v; dO's not), then the signal.
// WIDEROTHS100: scf.for
// WIDEROTHS100: warpspec.acquire %[[ROT]]
// WIDEROTHS100: warpspec.get %[[CHUNKS]]
// WIDEROTHS100-NOT: !warpspec.buffer<64x64xbf16, smem, chunk_cols = 32> into
// WIDEROTHS100: warpspec.rotate({{.*}}) {head_dim = 256 : i64, interleaved = false, pair_offset = 0 : i64, pass_loop} : !warpspec.buffer<128x64xbf16, smem, chunk_cols = 32>
// WIDEROTHS100-NEXT: warpspec.acquire %[[ROT]]
// WIDEROTHS100: warpspec.partition "mma" role(mma) warps(4) regs(128) explicit {
// WIDEROTHS100: warpspec.acquire %[[DP]]
// WIDEROTHS100-NEXT: warpspec.get %[[CHUNKS]]
// WIDEROTHS100-NEXT: warpspec.get %[[ROT]]
// WIDEROTHS100: warpspec.partition "softmax" role(softmax) warps(4) regs(224) {
// WIDEROTHS100-NEXT: warpspec.scratch : <64x32xbf16, smem>
// WIDEROTHS100: warpspec.rotate_tile {{.*}} {head_dim = 256 : i64, interleaved = false, inverse, pair_offset = 0 : i64} : <64x64xf32> -> <64x64xf32>
// WIDEROTHS100: warpspec.store {{.*}} {col_offset = 0 : i64, pinned_steps} : <64x32xf32>
// WIDEROTHS100: warpspec.store {{.*}} {col_offset = 128 : i64, pinned_steps} : <64x32xf32>
// The last pass: pairs 96 on, columns 96 and 224.
// WIDEROTHS100: warpspec.rotate_tile {{.*}} {head_dim = 256 : i64, interleaved = false, inverse, pair_offset = 96 : i64} : <64x64xf32> -> <64x64xf32>
// WIDEROTHS100: warpspec.store {{.*}} {col_offset = 96 : i64, pinned_steps} : <64x32xf32>
// WIDEROTHS100: warpspec.store {{.*}} {col_offset = 224 : i64, pinned_steps} : <64x32xf32>
