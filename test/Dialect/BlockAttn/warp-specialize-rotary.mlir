// RUN: block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a rotary-warpgroup=off" | FileCheck %s --check-prefix=HOPPER --implicit-check-not=blockattn.forward --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a rotary-warpgroup=on rotary-warpgroups=1" | FileCheck %s --check-prefix=RWG --implicit-check-not=blockattn.forward --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a" | FileCheck %s --check-prefix=RWG2 --implicit-check-not=blockattn.forward --implicit-check-not=blockattn.backward
// RUN: block-attn-opt %s -blockattn-warp-specialize="chip=sm_100a" | FileCheck %s --check-prefix=BLACKWELL --implicit-check-not=blockattn.forward --implicit-check-not=blockattn.backward

// blockattn-warp-specialize with fused rotary embeddings (bf16, head_dim
// 128 unless a case says otherwise), on both targets.
//
// sm_90a, rotary-warpgroup=off (HOPPER; what `auto` picks for now): each
// consumer warpgroup owns its slot, so it rotates q and k (and v with
// rotate_v) in place right after taking the slot, before any product reads
// them. Without explicit positions the load partition's tile loop
// takes the position of the tile's first row (fourth argument) and commits
// it with the slot; the consumer reads it back with warpspec.tile_position.
// With explicit positions nothing travels: the position operand is a
// placeholder 0 and the rotation reads positions[row + r]. The backward's
// products give gradients with respect to the rotated tensors: dk and dq
// (and dv with rotate_v) are turned back with rotate_tile {inverse} right
// before their store.
//
// sm_90a, rotary-warpgroup=on (RWG): a fourth warpgroup, "rotary"
// (104 registers), which consumes the load ring beside the consumers,
// rotates each slot in place as soon as its TMA lands and commits a slot of
// "rotated", a ring without buffers as deep as the load ring; each consumer
// (184 registers) gets that signal, gives its slot back at once and goes
// straight to its products. The load ring's slot is released by both. In
// the backward the consumers still turn the gradients back.
//
// sm_100a: the tensor cores read their operands straight from shared
// memory, so a "rotary" warpgroup (56 registers) consumes the load ring and
// rotates q and k (and v) out of place into a ring "rotated"; the MMA warp
// (56 registers instead of 40) gets the rotated tiles next to its load slot
// and releases both once its MMAs complete. In the backward the position
// travels on with S to the softmax warpgroups, which un-rotate dk and dq
// (and dv) read from tensor memory. Five warpgroups (640 threads) launch
// with 96 registers a thread, which setmaxnreg moves between them: the load
// warpgroup keeps 48 (at 40 ptxas spills the shared memory base every
// warpgroup uses), the two softmax warpgroups get (5 x 96 - 48 - 56 - 56) / 2
// = 160, the whole pool.

!act = memref<?x4x128xbf16>
!cu = memref<?xi32>
!tab = memref<?x64xf32>
!act64 = memref<?x4x64xbf16>
!tab32 = memref<?x32xf32>

//===----------------------------------------------------------------------===//
// Forward
//===----------------------------------------------------------------------===//

// Half-split, cos/sin tables, positions from the tile loop.
// HOPPER-LABEL: func.func @forward_tables
// HOPPER-SAME: %[[COS:[a-z0-9_]+]]: memref<?x64xf32> {blockattn.name = "cos"}, %[[SIN:[a-z0-9_]+]]: memref<?x64xf32> {blockattn.name = "sin"}, %{{[a-z0-9_]+}}: memref<2xi32> {blockattn.name = "schedule"})
// HOPPER: warpspec.kernel chip(sm_90a) attributes {info = {block_size = 64 : i64, element_type = bf16, head_dim = 128 : i64, kind = "forward", rotary = "half_split", softmax_scale = 0.0883883461 : f32}} {
// HOPPER: %[[QKV:.*]] = warpspec.channel "qkv" depth(4) : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
// HOPPER: warpspec.partition "load" role(load) warps(4) regs(40) {
// HOPPER-NEXT: warpspec.tile_loop (%[[ROW:[a-z0-9_]+]], %[[ROWS:[a-z0-9_]+]], %[[HEAD:[a-z0-9_]+]], %[[POS:[a-z0-9_]+]]) in
// HOPPER: warpspec.commit %{{[a-z0-9_]+}} tile(%[[ROW]], %[[ROWS]], %[[HEAD]]) position(%[[POS]])
// HOPPER: warpspec.partition "compute" role(compute) warps(4) regs(232) replicas(2) {
// HOPPER: warpspec.consume %[[QKV]] (%[[S_QKV:[^,]*]], %[[CROW:[a-z0-9_]+]], %[[CROWS:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %[[QT:[a-z0-9_]+]], %[[KT:[a-z0-9_]+]], %[[VT:[a-z0-9_]+]]) :
// HOPPER-NEXT: %[[CPOS:.*]] = warpspec.tile_position %[[S_QKV]]
// HOPPER-NEXT: warpspec.rotate(%[[QT]], %[[KT]]) into(%[[QT]], %[[KT]]) rows(%[[CROWS]]) row(%[[CROW]]) position(%[[CPOS]]) cos(%[[COS]], %[[SIN]] : memref<?x64xf32>, memref<?x64xf32>) {interleaved = false} :
// HOPPER-NEXT: warpspec.mma %[[QT]], %[[KT]] {transpose_b}
// HOPPER-NOT: warpspec.rotate
// HOPPER: warpspec.mma %{{.*}}, %[[VT]] :
// HOPPER-NOT: warpspec.rotate
// HOPPER: return

// RWG-LABEL: func.func @forward_tables
// RWG: %[[QKV:.*]] = warpspec.channel "qkv" depth(4) : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
// RWG-NEXT: %[[SIG:.*]] = warpspec.channel "rotated" depth(4) : <[], smem>
// RWG: warpspec.partition "load" role(load) warps(4) regs(40) {
// RWG: warpspec.commit %{{[a-z0-9_]+}} tile(%{{.*}}) position(%{{.*}})
// RWG: warpspec.partition "rotary" role(rotary) warps(4) regs(104) {
// RWG-NEXT: warpspec.consume %[[QKV]] (%[[S_QKV:[^,]*]], %[[RROW:[a-z0-9_]+]], %[[RROWS:[a-z0-9_]+]], %[[RHEAD:[a-z0-9_]+]], %[[RQ:[a-z0-9_]+]], %[[RK:[a-z0-9_]+]], %{{[a-z0-9_]+}}) :
// RWG-NEXT: %[[RPOS:.*]] = warpspec.tile_position %[[S_QKV]]
// RWG-NEXT: %[[S_SIG:.*]] = warpspec.acquire %[[SIG]] : <[], smem>
// RWG-NEXT: warpspec.rotate(%[[RQ]], %[[RK]]) into(%[[RQ]], %[[RK]]) rows(%[[RROWS]]) row(%[[RROW]]) position(%[[RPOS]]) cos(%{{.*}}, %{{.*}} : memref<?x64xf32>, memref<?x64xf32>) {interleaved = false} :
// RWG-NEXT: warpspec.commit %[[S_SIG]] tile(%[[RROW]], %[[RROWS]], %[[RHEAD]])
// RWG-NEXT: warpspec.release %[[S_QKV]]
// RWG-NEXT: }
// RWG-NEXT: }
// RWG-NEXT: warpspec.partition "compute" role(compute) warps(4) regs(184) replicas(2) {
// RWG-NEXT: warpspec.scratch
// RWG-NEXT: warpspec.consume %[[QKV]] (%[[C_QKV:[^,]*]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %[[QT:[a-z0-9_]+]], %[[KT:[a-z0-9_]+]], %{{[a-z0-9_]+}}) :
// RWG-NEXT: %[[C_SIG:.*]] = warpspec.get %[[SIG]] : <[], smem>
// RWG-NEXT: warpspec.release %[[C_SIG]]
// RWG-NEXT: warpspec.mma %[[QT]], %[[KT]] {transpose_b}
// RWG-NOT: warpspec.rotate
// RWG: warpspec.release %[[C_QKV]]
// RWG-NOT: warpspec.rotate
// RWG: return

// The default at head dim 128: two rotary replicas of 104 registers, each
// taking every second slot of both rings, and one consumer of 256.
// RWG2-LABEL: func.func @forward_tables
// RWG2: %[[QKV:.*]] = warpspec.channel "qkv" depth(4) : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
// RWG2-NEXT: %[[SIG:.*]] = warpspec.channel "rotated" depth(4) : <[], smem>
// RWG2: warpspec.partition "rotary" role(rotary) warps(4) regs(104) replicas(2) {
// RWG2-NEXT: warpspec.consume %[[QKV]]
// RWG2: warpspec.acquire %[[SIG]] : <[], smem>
// RWG2-NEXT: warpspec.rotate
// RWG2: warpspec.partition "compute" role(compute) warps(4) regs(256) {
// RWG2-NEXT: warpspec.scratch
// RWG2-NEXT: warpspec.consume %[[QKV]]
// RWG2-NEXT: %[[C_SIG:.*]] = warpspec.get %[[SIG]] : <[], smem>
// RWG2-NOT: warpspec.rotate
// RWG2: return

// BLACKWELL-LABEL: func.func @forward_tables
// BLACKWELL: warpspec.kernel chip(sm_100a) attributes {info = {{{.*}}rotary = "half_split"{{.*}}}} {
// BLACKWELL: %[[QKV:.*]] = warpspec.channel "qkv" depth(2) : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
// BLACKWELL: %[[ROT:.*]] = warpspec.channel "rotated" depth(2) : <[64x128xbf16, 64x128xbf16], smem>
// BLACKWELL: warpspec.partition "load" role(load) warps(4) regs(48) {
// BLACKWELL-NEXT: warpspec.tile_loop (%[[ROW:[a-z0-9_]+]], %[[ROWS:[a-z0-9_]+]], %[[HEAD:[a-z0-9_]+]], %[[POS:[a-z0-9_]+]]) in
// BLACKWELL: warpspec.commit %{{[a-z0-9_]+}} tile(%[[ROW]], %[[ROWS]], %[[HEAD]]) position(%[[POS]])
// BLACKWELL: warpspec.partition "rotary" role(rotary) warps(4) regs(56) {
// BLACKWELL-NEXT: warpspec.consume %[[QKV]] (%[[S_QKV:[^,]*]], %[[RROW:[a-z0-9_]+]], %[[RROWS:[a-z0-9_]+]], %[[RHEAD:[a-z0-9_]+]], %[[RQ:[a-z0-9_]+]], %[[RK:[a-z0-9_]+]], %{{[a-z0-9_]+}}) :
// BLACKWELL-NEXT: %[[RPOS:.*]] = warpspec.tile_position %[[S_QKV]]
// BLACKWELL-NEXT: %[[S_ROT:.*]], %[[DST:.*]]:2 = warpspec.acquire %[[ROT]] :
// BLACKWELL-NEXT: warpspec.rotate(%[[RQ]], %[[RK]]) into(%[[DST]]#0, %[[DST]]#1) rows(%[[RROWS]]) row(%[[RROW]]) position(%[[RPOS]]) cos(%{{.*}}, %{{.*}} : memref<?x64xf32>, memref<?x64xf32>) {interleaved = false} :
// BLACKWELL-NEXT: warpspec.commit %[[S_ROT]] tile(%[[RROW]], %[[RROWS]], %[[RHEAD]])
// BLACKWELL-NEXT: warpspec.release %[[S_QKV]]
// BLACKWELL-NEXT: }
// BLACKWELL-NEXT: }
// BLACKWELL-NEXT: warpspec.partition "mma" role(mma) warps(4) regs(56) {
// BLACKWELL-NEXT: warpspec.consume %[[QKV]] (%[[S_QKV:[^,]*]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %[[MV:[a-z0-9_]+]]) :
// BLACKWELL-NEXT: %[[S_ROT:.*]], %[[GOT:.*]]:2 = warpspec.get %[[ROT]] : <[64x128xbf16, 64x128xbf16], smem>
// BLACKWELL-NEXT: %{{[a-z0-9_]+}}, %[[SB:[a-z0-9_]+]] = warpspec.acquire
// BLACKWELL-NEXT: warpspec.mma_async %[[GOT]]#0, %[[GOT]]#1 into %[[SB]] {transpose_b}
// BLACKWELL: warpspec.mma_async %{{.*}}, %[[MV]] into
// BLACKWELL: warpspec.release %[[S_ROT]] after_mma
// BLACKWELL-NEXT: warpspec.release %[[S_QKV]] after_mma
// BLACKWELL: warpspec.partition "softmax" role(softmax) warps(4) regs(160) replicas(2) {
// BLACKWELL-NOT: warpspec.rotate
// BLACKWELL: return
func.func @forward_tables(%q: !act, %k: !act, %v: !act, %o: !act, %cu: !cu,
                          %cos: !tab, %sin: !tab) {
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : !cu) rotary(%cos, %sin : !tab, !tab)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}

// Interleaved, tables, explicit positions, v rotated too.
// HOPPER-LABEL: func.func @forward_positions_rotate_v
// HOPPER-SAME: %[[POSITIONS:[a-z0-9_]+]]: memref<?xi32> {blockattn.name = "positions"}, %{{[a-z0-9_]+}}: memref<2xi32> {blockattn.name = "schedule"})
// HOPPER: warpspec.partition "load"
// HOPPER-NEXT: warpspec.tile_loop (%[[ROW:[a-z0-9_]+]], %[[ROWS:[a-z0-9_]+]], %[[HEAD:[a-z0-9_]+]]) in
// HOPPER: warpspec.commit %{{.*}} tile(%[[ROW]], %[[ROWS]], %[[HEAD]])
// HOPPER: warpspec.consume %{{.*}} (%{{.*}}, %[[CROW:[a-z0-9_]+]], %[[CROWS:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %[[QT:[a-z0-9_]+]], %[[KT:[a-z0-9_]+]], %[[VT:[a-z0-9_]+]]) :
// HOPPER-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// HOPPER-NEXT: warpspec.rotate(%[[QT]], %[[KT]], %[[VT]]) into(%[[QT]], %[[KT]], %[[VT]]) rows(%[[CROWS]]) row(%[[CROW]]) position(%[[ZERO]]) cos(%{{.*}}, %{{.*}} : memref<?x64xf32>, memref<?x64xf32>) positions(%[[POSITIONS]] : memref<?xi32>) {interleaved = true} :
// HOPPER-NOT: warpspec.tile_position
// HOPPER: return

// RWG-LABEL: func.func @forward_positions_rotate_v
// RWG: warpspec.channel "rotated" depth(4) : <[], smem>
// RWG: warpspec.partition "rotary" role(rotary) warps(4) regs(104) {
// RWG: %[[ZERO:.*]] = arith.constant 0 : i32
// RWG-NEXT: warpspec.acquire
// With rotate_v the positions are the tile's own, in its slot
// (positions-load=auto: the producer copies them there, session 29).
// RWG-NEXT: warpspec.rotate(%[[QT:[a-z0-9_]+]], %[[KT:[a-z0-9_]+]], %[[VT:[a-z0-9_]+]]) into(%[[QT]], %[[KT]], %[[VT]]) rows(%{{.*}}) row(%{{.*}}) position(%[[ZERO]]) cos(%{{.*}}, %{{.*}} : memref<?x64xf32>, memref<?x64xf32>) positions(%{{.*}} : !warpspec.buffer<64xi32, smem>) {interleaved = true} :
// RWG: warpspec.partition "compute" role(compute) warps(4) regs(184) replicas(2) {
// RWG-NOT: warpspec.tile_position
// RWG-NOT: warpspec.rotate
// RWG: return

// BLACKWELL-LABEL: func.func @forward_positions_rotate_v
// BLACKWELL: %[[ROT:.*]] = warpspec.channel "rotated" depth(2) : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
// BLACKWELL: warpspec.tile_loop (%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in
// BLACKWELL-NOT: warpspec.tile_position
// BLACKWELL: warpspec.partition "rotary" role(rotary) warps(4) regs(56) {
// BLACKWELL: %[[ZERO:.*]] = arith.constant 0 : i32
// BLACKWELL-NEXT: %[[S_ROT:.*]], %[[DST:.*]]:3 = warpspec.acquire %[[ROT]] :
// BLACKWELL-NEXT: warpspec.rotate(%{{.*}}, %{{.*}}, %{{.*}}) into(%[[DST]]#0, %[[DST]]#1, %[[DST]]#2) rows(%{{.*}}) row(%{{.*}}) position(%[[ZERO]]) cos({{.*}}) positions(%{{.*}} : memref<?xi32>) {interleaved = true} :
// The MMA warp takes v from the rotated ring as well.
// BLACKWELL: warpspec.partition "mma" role(mma) warps(4) regs(56) {
// BLACKWELL: %[[S_ROT:.*]], %[[GOT:.*]]:3 = warpspec.get %[[ROT]] :
// BLACKWELL: warpspec.mma_async %[[GOT]]#0, %[[GOT]]#1 into
// BLACKWELL: warpspec.mma_async %{{.*}}, %[[GOT]]#2 into
// BLACKWELL-NOT: warpspec.tile_position
// BLACKWELL: return
func.func @forward_positions_rotate_v(%q: !act, %k: !act, %v: !act, %o: !act,
                                      %cu: !cu, %cos: !tab, %sin: !tab,
                                      %pos: memref<?xi32>) {
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : !cu) rotary(%cos, %sin : !tab, !tab)
      positions(%pos : memref<?xi32>)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<interleaved>, rotate_v}
  return
}

// Angles from rotary_theta: no tables, theta on the rotation.
// HOPPER-LABEL: func.func @forward_theta
// HOPPER: warpspec.tile_loop (%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in
// HOPPER: %[[CPOS:.*]] = warpspec.tile_position
// HOPPER-NEXT: warpspec.rotate(%{{.*}}, %{{.*}}) into(%{{.*}}, %{{.*}}) rows(%{{.*}}) row(%{{.*}}) position(%[[CPOS]]) {interleaved = true, theta = 1.000000e+04 : f32} :
// BLACKWELL-LABEL: func.func @forward_theta
// BLACKWELL: warpspec.partition "rotary"
// BLACKWELL: warpspec.rotate(%{{.*}}, %{{.*}}) into(%{{.*}}#0, %{{.*}}#1) rows(%{{.*}}) row(%{{.*}}) position(%{{.*}}) {interleaved = true, theta = 1.000000e+04 : f32} :
func.func @forward_theta(%q: !act, %k: !act, %v: !act, %o: !act, %cu: !cu) {
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : !cu)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<interleaved>, rotary_theta = 10000.0 : f32}
  return
}

// Without rotary embeddings nothing of this: three loop arguments, no
// position, no rotation, no rotary partition, and the MMA warp keeps 40
// registers (the softmax warpgroups get 216).
// HOPPER-LABEL: func.func @forward_plain
// HOPPER: warpspec.tile_loop (%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in
// HOPPER-NOT: position
// HOPPER-NOT: warpspec.rotate
// HOPPER: return
// BLACKWELL-LABEL: func.func @forward_plain
// BLACKWELL-NOT: "rotated"
// BLACKWELL: warpspec.partition "load"
// BLACKWELL-NOT: warpspec.rotate
// BLACKWELL-NOT: role(rotary)
// BLACKWELL: warpspec.partition "mma" role(mma) warps(4) regs(40) {
// BLACKWELL: warpspec.partition "softmax" role(softmax) warps(4) regs(216) replicas(2) {
// BLACKWELL-NOT: warpspec.rotate
// BLACKWELL: return
func.func @forward_plain(%q: !act, %k: !act, %v: !act, %o: !act, %cu: !cu) {
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : !cu)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}

//===----------------------------------------------------------------------===//
// Backward
//===----------------------------------------------------------------------===//

// Half-split tables: q and k rotated in place; dv stored as computed, dk and
// dq turned back by the tile's position (dq after the slot's release). With
// rotary-warpgroup=off the consumers rotate their slots: a persistent launch
// with two consumers and a ring of two 64 KiB slots (by default a rotary
// warpgroup rotates, and the one consumer reads its angles once a tile:
// warp-specialize-rotary-angles.mlir).
// HOPPER-LABEL: func.func @backward_tables
// HOPPER-SAME: %[[DQ:[a-z0-9_]+]]: memref<?x4x128xbf16> {blockattn.name = "dq"}, %[[DK:[a-z0-9_]+]]: memref<?x4x128xbf16> {blockattn.name = "dk"}, %[[DV:[a-z0-9_]+]]: memref<?x4x128xbf16> {blockattn.name = "dv"}
// HOPPER-SAME: %[[COS:[a-z0-9_]+]]: memref<?x64xf32> {blockattn.name = "cos"}, %[[SIN:[a-z0-9_]+]]: memref<?x64xf32> {blockattn.name = "sin"}, %{{[a-z0-9_]+}}: memref<2xi32> {blockattn.name = "schedule"})
// HOPPER: warpspec.kernel chip(sm_90a) attributes {info = {{{.*}}kind = "backward", rotary = "half_split"{{.*}}}} {
// HOPPER: %[[RING:.*]] = warpspec.channel "qkvdo" depth(2)
// HOPPER: warpspec.tile_loop (%[[ROW:[a-z0-9_]+]], %[[ROWS:[a-z0-9_]+]], %[[HEAD:[a-z0-9_]+]], %[[POS:[a-z0-9_]+]]) in
// HOPPER: warpspec.commit %{{[a-z0-9_]+}} tile(%[[ROW]], %[[ROWS]], %[[HEAD]]) position(%[[POS]])
// HOPPER: warpspec.consume %[[RING]] (%[[S_RING:[^,]*]], %[[CROW:[a-z0-9_]+]], %[[CROWS:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %[[QT:[a-z0-9_]+]], %[[KT:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) :
// HOPPER-NEXT: %[[CPOS:.*]] = warpspec.tile_position %[[S_RING]]
// HOPPER-NEXT: warpspec.rotate(%[[QT]], %[[KT]]) into(%[[QT]], %[[KT]]) rows(%[[CROWS]]) row(%[[CROW]]) position(%[[CPOS]]) cos(%[[COS]], %[[SIN]] : memref<?x64xf32>, memref<?x64xf32>) {interleaved = false} :
// Each gradient's angles are read just before the product that makes it.
// HOPPER: %[[DVACC:.*]] = warpspec.mma %{{.*}}, %{{.*}} {transpose_a}
// HOPPER-NEXT: warpspec.store %[[DVACC]] to %[[DV]]
// HOPPER-NEXT: %[[KANG:.*]] = warpspec.rotary_angles rows(%[[CROWS]]) row(%[[CROW]]) position(%[[CPOS]]) cos(%[[COS]], %[[SIN]] : memref<?x64xf32>, memref<?x64xf32>) {interleaved = false} : <64x128xf32>
// HOPPER-NEXT: %[[DKACC:.*]] = warpspec.mma %{{.*}}, %[[QT]] {transpose_a}
// HOPPER-NEXT: %[[DKR:.*]] = warpspec.rotate_tile %[[DKACC]] rows(%[[CROWS]]) row(%[[CROW]]) position(%[[CPOS]]) angles(%[[KANG]] : !warpspec.acc<64x128xf32>) {interleaved = false, inverse} : <64x128xf32> -> <64x128xf32>
// HOPPER-NEXT: warpspec.store %[[DKR]] to %[[DK]]
// HOPPER-NEXT: %[[QANG:.*]] = warpspec.rotary_angles rows(%[[CROWS]]) row(%[[CROW]]) position(%[[CPOS]]) cos(%[[COS]], %[[SIN]] : memref<?x64xf32>, memref<?x64xf32>) {interleaved = false} : <64x128xf32>
// HOPPER-NEXT: %[[DQACC:.*]] = warpspec.mma %{{.*}}, %[[KT]] :
// HOPPER-NEXT: warpspec.release %[[S_RING]]
// HOPPER-NEXT: %[[DQR:.*]] = warpspec.rotate_tile %[[DQACC]] rows(%[[CROWS]]) row(%[[CROW]]) position(%[[CPOS]]) angles(%[[QANG]] : !warpspec.acc<64x128xf32>) {interleaved = false, inverse} : <64x128xf32> -> <64x128xf32>
// HOPPER-NEXT: warpspec.store %[[DQR]] to %[[DQ]]

// BLACKWELL-LABEL: func.func @backward_tables
// BLACKWELL-SAME: %[[DQ:[a-z0-9_]+]]: memref<?x4x128xbf16> {blockattn.name = "dq"}, %[[DK:[a-z0-9_]+]]: memref<?x4x128xbf16> {blockattn.name = "dk"}, %[[DV:[a-z0-9_]+]]: memref<?x4x128xbf16> {blockattn.name = "dv"}
// BLACKWELL: %[[RING:.*]] = warpspec.channel "qkvdo" depth(2)
// BLACKWELL: %[[S:.*]] = warpspec.channel "s" depth(2) : <[64x64xf32], tmem>
// BLACKWELL: %[[ROT:.*]] = warpspec.channel "rotated" depth(1) : <[64x128xbf16, 64x128xbf16], smem>
// BLACKWELL: warpspec.commit %{{[a-z0-9_]+}} tile(%{{.*}}, %{{.*}}, %{{.*}}) position(%{{.*}})
// BLACKWELL: warpspec.partition "rotary" role(rotary) warps(4) regs(72) {
// BLACKWELL: warpspec.rotate(%{{.*}}, %{{.*}}) into(%{{.*}}#0, %{{.*}}#1) {{.*}} {interleaved = false} :
// BLACKWELL: warpspec.partition "mma" role(mma) warps(4) regs(96) {
// BLACKWELL: %[[S_ROT:.*]], %[[GOT:.*]]:2 = warpspec.get %[[ROT]] :
// BLACKWELL-NEXT: %[[MPOS:.*]] = warpspec.tile_position %{{[a-z0-9_]+}}
// BLACKWELL: warpspec.mma_async %[[GOT]]#0, %[[GOT]]#1 into %{{.*}} {transpose_b}
// BLACKWELL-NEXT: warpspec.commit %{{[a-z0-9_]+}} tile(%{{.*}}, %{{.*}}, %{{.*}}) position(%[[MPOS]])
// dK = dS^T Q and dQ = dS K read the rotated q and k.
// BLACKWELL: warpspec.mma_async %{{.*}}#1, %[[GOT]]#0 into %{{.*}} {transpose_a}
// BLACKWELL: warpspec.mma_async %{{.*}}#1, %[[GOT]]#1 into
// BLACKWELL: warpspec.release %[[S_ROT]] after_mma
// BLACKWELL-NEXT: warpspec.release %{{[a-z0-9_]+}} after_mma
// BLACKWELL: warpspec.partition "softmax" role(softmax) warps(4) regs(256) {
// BLACKWELL: warpspec.consume %[[S]] (%[[S_S:[^,]*]], %[[CROW:[a-z0-9_]+]], %[[CROWS:[a-z0-9_]+]], %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) :
// BLACKWELL-NEXT: %[[CPOS:.*]] = warpspec.tile_position %[[S_S]]
// BLACKWELL: %[[DVT:.*]] = warpspec.tmem_load %{{.*}} : <64x128xf32, tmem> -> <64x128xf32>
// BLACKWELL-NEXT: warpspec.release
// BLACKWELL-NEXT: warpspec.store %[[DVT]] to %[[DV]]
// BLACKWELL: %[[DKT:.*]] = warpspec.tmem_load %{{.*}} : <64x128xf32, tmem> -> <64x128xf32>
// BLACKWELL-NEXT: warpspec.release
// BLACKWELL-NEXT: %[[DKR:.*]] = warpspec.rotate_tile %[[DKT]] rows(%[[CROWS]]) row(%[[CROW]]) position(%[[CPOS]]) cos({{.*}}) {interleaved = false, inverse} :
// BLACKWELL-NEXT: warpspec.store %[[DKR]] to %[[DK]]
// BLACKWELL: %[[DQT:.*]] = warpspec.tmem_load %{{.*}} : <64x128xf32, tmem> -> <64x128xf32>
// BLACKWELL-NEXT: warpspec.release
// BLACKWELL-NEXT: %[[DQR:.*]] = warpspec.rotate_tile %[[DQT]] rows(%[[CROWS]]) row(%[[CROW]]) position(%[[CPOS]]) cos({{.*}}) {interleaved = false, inverse} :
// BLACKWELL-NEXT: warpspec.store %[[DQR]] to %[[DQ]]
func.func @backward_tables(%q: !act, %k: !act, %v: !act, %do: !act,
                           %dq: !act, %dk: !act, %dv: !act, %cu: !cu,
                           %cos: !tab, %sin: !tab) {
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act) cu_seqlens(%cu : !cu)
      rotary(%cos, %sin : !tab, !tab)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}

// Theta, explicit positions, rotate_v: no position travels anywhere, q, k
// and v are rotated, and dv is turned back too.
// HOPPER-LABEL: func.func @backward_theta_positions_rotate_v
// HOPPER-SAME: %[[POSITIONS:[a-z0-9_]+]]: memref<?xi32> {blockattn.name = "positions"}, %{{[a-z0-9_]+}}: memref<2xi32> {blockattn.name = "schedule"})
// HOPPER-NOT: warpspec.tile_position
// HOPPER: warpspec.tile_loop (%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in
// HOPPER: warpspec.consume %{{.*}} (%{{.*}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %[[QT:[a-z0-9_]+]], %[[KT:[a-z0-9_]+]], %[[VT:[a-z0-9_]+]], %{{[a-z0-9_]+}}) :
// HOPPER-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// HOPPER-NEXT: warpspec.rotate(%[[QT]], %[[KT]], %[[VT]]) into(%[[QT]], %[[KT]], %[[VT]]) rows(%{{.*}}) row(%{{.*}}) position(%[[ZERO]]) positions(%[[POSITIONS]] : memref<?xi32>) {interleaved = false, theta = 5.000000e+05 : f32} :
// HOPPER: %[[VANG:.*]] = warpspec.rotary_angles rows(%{{.*}}) row(%{{.*}}) position(%[[ZERO]]) positions(%[[POSITIONS]] : memref<?xi32>) {interleaved = false, theta = 5.000000e+05 : f32} : <64x128xf32>
// HOPPER-NEXT: %[[DVACC:.*]] = warpspec.mma %{{.*}}, %{{.*}} {transpose_a}
// HOPPER-NEXT: %[[DVR:.*]] = warpspec.rotate_tile %[[DVACC]] rows(%{{.*}}) row(%{{.*}}) position(%[[ZERO]]) angles(%[[VANG]] : !warpspec.acc<64x128xf32>) {interleaved = false, inverse} :
// HOPPER-NEXT: warpspec.store %[[DVR]] to
// HOPPER-NEXT: %[[KANG:.*]] = warpspec.rotary_angles {{.*}} {interleaved = false, theta = 5.000000e+05 : f32} : <64x128xf32>
// HOPPER-NEXT: %[[DKACC:.*]] = warpspec.mma
// HOPPER-NEXT: %[[DKR:.*]] = warpspec.rotate_tile %[[DKACC]] {{.*}} angles(%[[KANG]] : !warpspec.acc<64x128xf32>) {interleaved = false, inverse} :
// HOPPER-NEXT: warpspec.store %[[DKR]] to
// HOPPER-NEXT: %[[QANG:.*]] = warpspec.rotary_angles {{.*}} {interleaved = false, theta = 5.000000e+05 : f32} : <64x128xf32>
// HOPPER-NEXT: %[[DQACC:.*]] = warpspec.mma
// HOPPER-NEXT: warpspec.release
// HOPPER-NEXT: %[[DQR:.*]] = warpspec.rotate_tile %[[DQACC]] {{.*}} angles(%[[QANG]] : !warpspec.acc<64x128xf32>) {interleaved = false, inverse} :
// HOPPER-NEXT: warpspec.store %[[DQR]] to
// HOPPER-NOT: warpspec.tile_position
// HOPPER: return

// BLACKWELL-LABEL: func.func @backward_theta_positions_rotate_v
// BLACKWELL-NOT: warpspec.tile_position
// BLACKWELL: %[[S:.*]] = warpspec.channel "s" depth(2)
// BLACKWELL: %[[ROT:.*]] = warpspec.channel "rotated" depth(1) : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
// BLACKWELL: warpspec.partition "rotary" role(rotary) warps(4) regs(72) {
// BLACKWELL: warpspec.rotate(%{{.*}}, %{{.*}}, %{{.*}}) into(%{{.*}}#0, %{{.*}}#1, %{{.*}}#2) {{.*}} positions(%{{.*}} : memref<?xi32>) {interleaved = false, theta = 5.000000e+05 : f32} :
// BLACKWELL: warpspec.partition "mma" role(mma) warps(4) regs(96) {
// BLACKWELL: %[[S_ROT:.*]], %[[GOT:.*]]:3 = warpspec.get %[[ROT]] :
// S travels without a position; dP = dO V^T reads the rotated v.
// BLACKWELL: warpspec.commit %{{[a-z0-9_]+}} tile(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}})
// BLACKWELL: warpspec.mma_async %{{.*}}, %[[GOT]]#2 into %{{.*}} {transpose_b}
// BLACKWELL: warpspec.partition "softmax" role(softmax)
// BLACKWELL-COUNT-3: warpspec.rotate_tile %{{.*}} positions(%{{.*}} : memref<?xi32>) {interleaved = false, inverse, theta = 5.000000e+05 : f32} :
// BLACKWELL-NOT: warpspec.rotate_tile
// BLACKWELL-NOT: warpspec.tile_position
// BLACKWELL: return
func.func @backward_theta_positions_rotate_v(%q: !act, %k: !act, %v: !act,
                                             %do: !act, %dq: !act, %dk: !act,
                                             %dv: !act, %cu: !cu,
                                             %pos: memref<?xi32>) {
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act) cu_seqlens(%cu : !cu)
      positions(%pos : memref<?xi32>)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>, rotary_theta = 500000.0 : f32,
       rotate_v}
  return
}

// Interleaved tables: the backward is persistent. With rotary-warpgroup=off
// (HOPPER) two consumer replicas rotate their slots.
// HOPPER-LABEL: func.func @backward_interleaved
// HOPPER: warpspec.kernel chip(sm_90a) attributes {info = {{{.*}}kind = "backward", rotary = "interleaved"{{.*}}}} {
// HOPPER: warpspec.channel "qkvdo" depth(2)
// HOPPER: warpspec.tile_loop {{.*}} block_size(64) dynamic({{.*}}) {
// HOPPER: warpspec.partition "compute" role(compute) warps(4) regs(232) replicas(2) {
// With a rotary warpgroup (the default): the rotation moves out, the
// gradients' inverse rotations stay in the one consumer (256 registers),
// which reads its tile's angles once, before it waits for the rotation;
// the rotary warpgroup takes the rest of the three warpgroups' pool (208).
// RWG-LABEL: func.func @backward_interleaved
// RWG: warpspec.channel "rotated" depth(3) : <[], smem>
// RWG: warpspec.partition "rotary" role(rotary) warps(4) regs(208) {
// RWG: warpspec.rotate
// RWG: warpspec.partition "compute" role(compute) warps(4) regs(256) {
// RWG-NOT: warpspec.rotate(
// RWG: warpspec.rotary_angles
// RWG-NEXT: warpspec.get
// RWG-NOT: warpspec.rotary_angles
// RWG: warpspec.rotate_tile
// RWG: return
// BLACKWELL-LABEL: func.func @backward_interleaved
// BLACKWELL: warpspec.partition "rotary" role(rotary)
func.func @backward_interleaved(%q: !act, %k: !act, %v: !act, %do: !act,
                                %dq: !act, %dk: !act, %dv: !act, %cu: !cu,
                                %cos: !tab, %sin: !tab) {
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act) cu_seqlens(%cu : !cu)
      rotary(%cos, %sin : !tab, !tab)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<interleaved>}
  return
}

// Half-split tables at head dim 64: the backward stays persistent with two
// consumer replicas, which measured faster than the chunked launch at this
// head dim (H200, 2026-11-29: 1.96 against 2.06 ms on seed-d64), and claims
// its tiles since session 37 (performance-notes.md, run 34).
// HOPPER-LABEL: func.func @backward_tables_d64
// HOPPER: warpspec.kernel chip(sm_90a) attributes {info = {{{.*}}head_dim = 64 : i64, kind = "backward", rotary = "half_split"{{.*}}}} {
// HOPPER: warpspec.channel "qkvdo" depth(
// HOPPER: warpspec.tile_loop {{.*}} block_size(64) dynamic({{.*}}) {
// HOPPER: warpspec.partition "compute" role(compute) warps(4) regs({{[0-9]+}}) replicas(2) {
// BLACKWELL-LABEL: func.func @backward_tables_d64
// BLACKWELL: warpspec.partition "rotary" role(rotary)
func.func @backward_tables_d64(%q: !act64, %k: !act64, %v: !act64, %do: !act64,
                               %dq: !act64, %dk: !act64, %dv: !act64, %cu: !cu,
                               %cos: !tab32, %sin: !tab32) {
  blockattn.backward q(%q : !act64) k(%k : !act64) v(%v : !act64) do(%do : !act64)
      dq(%dq : !act64) dk(%dk : !act64) dv(%dv : !act64) cu_seqlens(%cu : !cu)
      rotary(%cos, %sin : !tab32, !tab32)
      {block_size = 64 : i64, head_dim = 64 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}
