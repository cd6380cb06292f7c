// RUN: block-attn-opt %s | block-attn-opt | FileCheck %s
// RUN: block-attn-opt %s --mlir-print-op-generic | block-attn-opt | FileCheck %s

// Round trip of the rotary operations of the warpspec dialect, in the custom
// and the generic syntax, inside kernels shaped like those
// blockattn-warp-specialize builds: the persistent loop's fourth argument
// (the position of the tile's first row), warpspec.commit with position(...),
// warpspec.tile_position on a shared-memory and a tensor-memory channel,
// warpspec.rotate in place (Hopper) and out of place into a ring of rotated
// tiles (Blackwell's rotary partition), with cos/sin tables, with theta, with
// explicit positions; warpspec.rotate_tile with and without inverse, with
// tables and with theta and positions.

!act = memref<?x4x128xbf16>
!cu = memref<?xi32>
!tab = memref<?x64xf32>
!tile = !warpspec.buffer<64x128xbf16, smem>
!qkv = !warpspec.channel<[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
!qkvdo = !warpspec.channel<[64x128xbf16, 64x128xbf16, 64x128xbf16, 64x128xbf16], smem>

//===----------------------------------------------------------------------===//
// Hopper forward: tables, half-split, position from the tile loop
//===----------------------------------------------------------------------===//

// The load partition's loop takes the fourth argument and commits it with
// the tile; each compute replica reads it back (tile_position) and rotates
// q and k in place in its slot.
// CHECK-LABEL: func.func @hopper_forward_tables
// CHECK-SAME: %[[COS:[a-z0-9_]+]]: memref<?x64xf32> {blockattn.name = "cos"}, %[[SIN:[a-z0-9_]+]]: memref<?x64xf32> {blockattn.name = "sin"})
// CHECK: warpspec.kernel chip(sm_90a) attributes {info = {{{.*}}rotary = "half_split"{{.*}}}} {
// CHECK: %[[QKV:.*]] = warpspec.channel "qkv" depth(4) : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
// CHECK: warpspec.partition "load" role(load) warps(4) regs(40) {
// CHECK-NEXT: warpspec.tile_loop (%[[ROW:.*]], %[[ROWS:.*]], %[[HEAD:.*]], %[[POS:.*]]) in %{{.*}} : memref<?xi32> heads(%{{.*}}) tokens(%{{.*}}) block_size(64) {
// CHECK: warpspec.commit %{{[a-z0-9_]+}} tile(%[[ROW]], %[[ROWS]], %[[HEAD]]) position(%[[POS]])
// CHECK: warpspec.partition "compute" role(compute) warps(4) regs(232) replicas(2) {
// CHECK: warpspec.consume %[[QKV]] (%[[S_QKV:[^,]*]], %[[CROW:.*]], %[[CROWS:.*]], %{{.*}}, %[[QT:.*]], %[[KT:.*]], %{{.*}}) : !warpspec.channel<[64x128xbf16, 64x128xbf16, 64x128xbf16], smem> {
// CHECK-NEXT: %[[CPOS:.*]] = warpspec.tile_position %[[S_QKV]]
// CHECK-NEXT: warpspec.rotate(%[[QT]], %[[KT]]) into(%[[QT]], %[[KT]]) rows(%[[CROWS]]) row(%[[CROW]]) position(%[[CPOS]]) cos(%[[COS]], %[[SIN]] : memref<?x64xf32>, memref<?x64xf32>) {interleaved = false} : !warpspec.buffer<64x128xbf16, smem>, !warpspec.buffer<64x128xbf16, smem> into !warpspec.buffer<64x128xbf16, smem>, !warpspec.buffer<64x128xbf16, smem>
// CHECK-NEXT: warpspec.mma %[[QT]], %[[KT]] {transpose_b}
func.func @hopper_forward_tables(%q: !act {blockattn.name = "q"},
                                 %k: !act {blockattn.name = "k"},
                                 %v: !act {blockattn.name = "v"},
                                 %o: !act {blockattn.name = "o"},
                                 %cu: !cu {blockattn.name = "cu_seqlens"},
                                 %cos: !tab {blockattn.name = "cos"},
                                 %sin: !tab {blockattn.name = "sin"}) {
  warpspec.kernel chip(sm_90a) attributes {
      info = {block_size = 64 : i64, element_type = bf16, head_dim = 128 : i64,
              kind = "forward", rotary = "half_split",
              softmax_scale = 0.0883883461 : f32}} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tokens = memref.dim %q, %c0 : !act
    %heads = memref.dim %q, %c1 : !act
    %scale = arith.constant 0.0883883461 : f32
    %qkv = warpspec.channel "qkv" depth(4) : !qkv
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head, %pos) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64) {
        %qkv_slot, %qb, %kb, %vb = warpspec.acquire %qkv : !qkv
        warpspec.tma_load %q[%row, %head] into %qb : !act, !tile
        warpspec.tma_load %k[%row, %head] into %kb : !act, !tile
        warpspec.tma_load %v[%row, %head] into %vb : !act, !tile
        warpspec.commit %qkv_slot tile(%row, %rows, %head) position(%pos)
      }
      warpspec.close %qkv : !qkv
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) replicas(2) {
      %obuf = warpspec.scratch : !tile
      warpspec.consume %qkv (%qkv_slot1, %row, %rows, %head, %qt, %kt, %vt) : !qkv {
        %pos = warpspec.tile_position %qkv_slot1
        warpspec.rotate(%qt, %kt) into(%qt, %kt) rows(%rows) row(%row)
            position(%pos) cos(%cos, %sin : !tab, !tab) {interleaved = false}
            : !tile, !tile into !tile, !tile
        %s = warpspec.mma %qt, %kt {transpose_b}
            : !tile, !tile -> !warpspec.acc<64x64xf32>
        %p, %l = warpspec.softmax %s valid_cols(%rows) scale(%scale)
            : !warpspec.acc<64x64xf32>
            -> !warpspec.acc<64x64xbf16>, !warpspec.rows<64xf32>
        %out = warpspec.mma %p, %vt
            : !warpspec.acc<64x64xbf16>, !tile -> !warpspec.acc<64x128xf32>
        warpspec.release %qkv_slot1
        warpspec.store %out to %o[%row, %head] rows(%rows) divide_by(%l)
            via(%obuf) bulk
            : !warpspec.acc<64x128xf32>, !act, !warpspec.rows<64xf32>, !tile
      }
    }
  }
  return
}

//===----------------------------------------------------------------------===//
// Hopper backward: theta, explicit positions, q, k and v rotated
//===----------------------------------------------------------------------===//

// With explicit positions the loop has three arguments, the commit no
// position, and the rotation a placeholder position(0) plus positions(...);
// theta replaces the tables. The gradients with respect to the rotated
// tensors are turned back with rotate_tile {inverse} before each store.
// CHECK-LABEL: func.func @hopper_backward_theta_positions
// CHECK-SAME: %[[POSITIONS:[a-z0-9_]+]]: memref<?xi32> {blockattn.name = "positions"})
// CHECK: %[[RING:.*]] = warpspec.channel "qkvdo" depth(2)
// CHECK: warpspec.tile_loop (%[[ROW:[a-z0-9_]+]], %[[ROWS:[a-z0-9_]+]], %[[HEAD:[a-z0-9_]+]]) in
// CHECK: warpspec.commit %{{[a-z0-9_]+}} tile(%[[ROW]], %[[ROWS]], %[[HEAD]])
// CHECK: warpspec.consume %[[RING]] (%[[S_RING:[^,]*]], %[[CROW:.*]], %[[CROWS:.*]], %{{.*}}, %[[QT:.*]], %[[KT:.*]], %[[VT:.*]], %{{.*}}) :
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT: warpspec.rotate(%[[QT]], %[[KT]], %[[VT]]) into(%[[QT]], %[[KT]], %[[VT]]) rows(%[[CROWS]]) row(%[[CROW]]) position(%[[ZERO]]) positions(%[[POSITIONS]] : memref<?xi32>) {interleaved = false, theta = 5.000000e+05 : f32} : !warpspec.buffer<64x128xbf16, smem>, !warpspec.buffer<64x128xbf16, smem>, !warpspec.buffer<64x128xbf16, smem> into !warpspec.buffer<64x128xbf16, smem>, !warpspec.buffer<64x128xbf16, smem>, !warpspec.buffer<64x128xbf16, smem>
// CHECK: %[[DV:.*]] = warpspec.mma %{{.*}}, %{{.*}} {transpose_a}
// CHECK-NEXT: %[[DVR:.*]] = warpspec.rotate_tile %[[DV]] rows(%[[CROWS]]) row(%[[CROW]]) position(%[[ZERO]]) positions(%[[POSITIONS]] : memref<?xi32>) {interleaved = false, inverse, theta = 5.000000e+05 : f32} : <64x128xf32> -> <64x128xf32>
// CHECK-NEXT: warpspec.store %[[DVR]] to
// CHECK: %[[DK:.*]] = warpspec.mma %{{.*}}, %[[QT]] {transpose_a}
// CHECK-NEXT: %[[DKR:.*]] = warpspec.rotate_tile %[[DK]] {{.*}} {interleaved = false, inverse, theta = 5.000000e+05 : f32}
// CHECK-NEXT: warpspec.store %[[DKR]] to
// CHECK: %[[DQ:.*]] = warpspec.mma %{{.*}}, %[[KT]] :
// CHECK-NEXT: warpspec.release %[[S_RING]]
// CHECK-NEXT: %[[DQR:.*]] = warpspec.rotate_tile %[[DQ]] {{.*}} {interleaved = false, inverse, theta = 5.000000e+05 : f32}
// CHECK-NEXT: warpspec.store %[[DQR]] to
func.func @hopper_backward_theta_positions(
    %q: !act {blockattn.name = "q"}, %k: !act {blockattn.name = "k"},
    %v: !act {blockattn.name = "v"}, %do: !act {blockattn.name = "do"},
    %dq: !act {blockattn.name = "dq"}, %dk: !act {blockattn.name = "dk"},
    %dv: !act {blockattn.name = "dv"},
    %cu: !cu {blockattn.name = "cu_seqlens"},
    %positions: memref<?xi32> {blockattn.name = "positions"}) {
  warpspec.kernel chip(sm_90a) attributes {
      info = {block_size = 64 : i64, element_type = bf16, head_dim = 128 : i64,
              kind = "backward", rotary = "half_split",
              softmax_scale = 0.0883883461 : f32}} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tokens = memref.dim %q, %c0 : !act
    %heads = memref.dim %q, %c1 : !act
    %scale = arith.constant 0.0883883461 : f32
    %ring = warpspec.channel "qkvdo" depth(2) : !qkvdo
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64) {
        %ring_slot, %qb, %kb, %vb, %dob = warpspec.acquire %ring : !qkvdo
        warpspec.tma_load %q[%row, %head] into %qb : !act, !tile
        warpspec.tma_load %k[%row, %head] into %kb : !act, !tile
        warpspec.tma_load %v[%row, %head] into %vb : !act, !tile
        warpspec.tma_load %do[%row, %head] into %dob : !act, !tile
        warpspec.commit %ring_slot tile(%row, %rows, %head)
      }
      warpspec.close %ring : !qkvdo
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) replicas(2) {
      %pbuf = warpspec.scratch : !warpspec.buffer<64x64xbf16, smem>
      %dsbuf = warpspec.scratch : !warpspec.buffer<64x64xbf16, smem>
      %stage = warpspec.scratch : !tile
      warpspec.consume %ring (%ring_slot1, %row, %rows, %head, %qt, %kt, %vt, %dot) : !qkvdo {
        %zero = arith.constant 0 : i32
        warpspec.rotate(%qt, %kt, %vt) into(%qt, %kt, %vt) rows(%rows)
            row(%row) position(%zero) positions(%positions : memref<?xi32>)
            {interleaved = false, theta = 500000.0 : f32}
            : !tile, !tile, !tile into !tile, !tile, !tile
        %s = warpspec.mma %qt, %kt {transpose_b}
            : !tile, !tile -> !warpspec.acc<64x64xf32>
        %p, %l = warpspec.softmax %s valid_cols(%rows) valid_rows(%rows)
            scale(%scale) normalize
            : !warpspec.acc<64x64xf32>
            -> !warpspec.acc<64x64xf32>, !warpspec.rows<64xf32>
        warpspec.write %p, %pbuf
            : !warpspec.acc<64x64xf32>, !warpspec.buffer<64x64xbf16, smem>
        %dp = warpspec.mma %dot, %vt {transpose_b}
            : !tile, !tile -> !warpspec.acc<64x64xf32>
        %ds = warpspec.softmax_grad %p, %dp scale(%scale)
            : !warpspec.acc<64x64xf32>, !warpspec.acc<64x64xf32>
            -> !warpspec.acc<64x64xbf16>
        warpspec.write %ds, %dsbuf
            : !warpspec.acc<64x64xbf16>, !warpspec.buffer<64x64xbf16, smem>
        %dvacc = warpspec.mma %pbuf, %dot {transpose_a}
            : !warpspec.buffer<64x64xbf16, smem>, !tile
            -> !warpspec.acc<64x128xf32>
        %dvr = warpspec.rotate_tile %dvacc rows(%rows) row(%row)
            position(%zero) positions(%positions : memref<?xi32>)
            {interleaved = false, inverse, theta = 500000.0 : f32}
            : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x128xf32>
        warpspec.store %dvr to %dv[%row, %head] rows(%rows) via(%stage) bulk
            : !warpspec.acc<64x128xf32>, !act, !tile
        %dkacc = warpspec.mma %dsbuf, %qt {transpose_a}
            : !warpspec.buffer<64x64xbf16, smem>, !tile
            -> !warpspec.acc<64x128xf32>
        %dkr = warpspec.rotate_tile %dkacc rows(%rows) row(%row)
            position(%zero) positions(%positions : memref<?xi32>)
            {interleaved = false, inverse, theta = 500000.0 : f32}
            : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x128xf32>
        warpspec.store %dkr to %dk[%row, %head] rows(%rows) via(%stage) bulk
            : !warpspec.acc<64x128xf32>, !act, !tile
        %dqacc = warpspec.mma %ds, %kt
            : !warpspec.acc<64x64xbf16>, !tile -> !warpspec.acc<64x128xf32>
        warpspec.release %ring_slot1
        %dqr = warpspec.rotate_tile %dqacc rows(%rows) row(%row)
            position(%zero) positions(%positions : memref<?xi32>)
            {interleaved = false, inverse, theta = 500000.0 : f32}
            : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x128xf32>
        warpspec.store %dqr to %dq[%row, %head] rows(%rows) via(%stage) bulk
            : !warpspec.acc<64x128xf32>, !act, !tile
      }
    }
  }
  return
}

//===----------------------------------------------------------------------===//
// Blackwell forward: a rotary partition and a ring of rotated tiles
//===----------------------------------------------------------------------===//

// The rotary warpgroup consumes the load ring and rotates q and k out of
// place into the "rotated" ring (interleaved, static-size tables); the MMA
// warp gets the rotated tiles, passes the position on with S (a
// tensor-memory channel), and releases both rings once its MMAs complete.
// The softmax replicas read the position of S back; the rotate_tile without
// inverse (the forward rotation of a register tile) is here for its syntax.
// CHECK-LABEL: func.func @blackwell_forward_rotary_partition
// CHECK-SAME: %[[COS:[a-z0-9_]+]]: memref<4096x64xf32> {blockattn.name = "cos"}, %[[SIN:[a-z0-9_]+]]: memref<4096x64xf32> {blockattn.name = "sin"})
// CHECK: warpspec.kernel chip(sm_100a)
// CHECK: %[[QKV:.*]] = warpspec.channel "qkv" depth(2) : <[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>
// CHECK: %[[S:.*]] = warpspec.channel "s" depth(2) : <[64x64xf32], tmem>
// CHECK: %[[ROT:.*]] = warpspec.channel "rotated" depth(2) : <[64x128xbf16, 64x128xbf16], smem>
// CHECK: warpspec.tile_loop (%[[ROW:.*]], %[[ROWS:.*]], %[[HEAD:.*]], %[[POS:.*]]) in
// CHECK: warpspec.commit %{{[a-z0-9_]+}} tile(%[[ROW]], %[[ROWS]], %[[HEAD]]) position(%[[POS]])
// CHECK: warpspec.partition "rotary" role(rotary) warps(4) regs(56) {
// CHECK-NEXT: warpspec.consume %[[QKV]] (%[[S_QKV:[^,]*]], %[[RROW:.*]], %[[RROWS:.*]], %[[RHEAD:.*]], %[[RQ:.*]], %[[RK:.*]], %{{.*}}) :
// CHECK-NEXT: %[[RPOS:.*]] = warpspec.tile_position %[[S_QKV]]
// CHECK-NEXT: %[[S_ROT:.*]], %[[DST:.*]]:2 = warpspec.acquire %[[ROT]] : <[64x128xbf16, 64x128xbf16], smem>
// CHECK-NEXT: warpspec.rotate(%[[RQ]], %[[RK]]) into(%[[DST]]#0, %[[DST]]#1) rows(%[[RROWS]]) row(%[[RROW]]) position(%[[RPOS]]) cos(%[[COS]], %[[SIN]] : memref<4096x64xf32>, memref<4096x64xf32>) {interleaved = true} : !warpspec.buffer<64x128xbf16, smem>, !warpspec.buffer<64x128xbf16, smem> into !warpspec.buffer<64x128xbf16, smem>, !warpspec.buffer<64x128xbf16, smem>
// CHECK-NEXT: warpspec.commit %[[S_ROT]] tile(%[[RROW]], %[[RROWS]], %[[RHEAD]])
// CHECK-NEXT: warpspec.release %[[S_QKV]]
// CHECK: warpspec.partition "mma" role(mma) warps(4) regs(56) {
// CHECK: %[[S_ROT:.*]], %[[GOT:.*]]:2 = warpspec.get %[[ROT]] : <[64x128xbf16, 64x128xbf16], smem>
// CHECK-NEXT: %[[MPOS:.*]] = warpspec.tile_position %{{[a-z0-9_]+}}
// CHECK: warpspec.mma_async %[[GOT]]#0, %[[GOT]]#1 into %{{.*}} {transpose_b}
// CHECK-NEXT: warpspec.commit %{{[a-z0-9_]+}} tile(%{{.*}}, %{{.*}}, %{{.*}}) position(%[[MPOS]])
// CHECK: warpspec.release %[[S_ROT]] after_mma
// CHECK-NEXT: warpspec.release %{{[a-z0-9_]+}} after_mma
// CHECK: warpspec.partition "softmax" role(softmax) warps(4) regs(160) replicas(2) {
// CHECK: %[[SPOS:.*]] = warpspec.tile_position %{{[a-z0-9_]+}}
// CHECK: %[[OT:.*]] = warpspec.tmem_load %{{.*}} : <64x128xf32, tmem> -> <64x128xf32>
// CHECK: %[[OR:.*]] = warpspec.rotate_tile %[[OT]] rows(%{{.*}}) row(%{{.*}}) position(%[[SPOS]]) cos(%[[COS]], %[[SIN]] : memref<4096x64xf32>, memref<4096x64xf32>) {interleaved = true} : <64x128xf32> -> <64x128xf32>
// CHECK-NEXT: warpspec.store %[[OR]] to
!tab4k = memref<4096x64xf32>
!rot = !warpspec.channel<[64x128xbf16, 64x128xbf16], smem>
func.func @blackwell_forward_rotary_partition(
    %q: !act {blockattn.name = "q"}, %k: !act {blockattn.name = "k"},
    %v: !act {blockattn.name = "v"}, %o: !act {blockattn.name = "o"},
    %cu: !cu {blockattn.name = "cu_seqlens"},
    %cos: !tab4k {blockattn.name = "cos"},
    %sin: !tab4k {blockattn.name = "sin"}) {
  warpspec.kernel chip(sm_100a) attributes {
      info = {block_size = 64 : i64, element_type = bf16, head_dim = 128 : i64,
              kind = "forward", rotary = "interleaved",
              softmax_scale = 0.0883883461 : f32}} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tokens = memref.dim %q, %c0 : !act
    %heads = memref.dim %q, %c1 : !act
    %scale = arith.constant 0.0883883461 : f32
    %qkv = warpspec.channel "qkv" depth(2) : !qkv
    %s = warpspec.channel "s" depth(2) : !warpspec.channel<[64x64xf32], tmem>
    %p = warpspec.channel "p" depth(2) : !warpspec.channel<[64x64xbf16], tmem>
    %oc = warpspec.channel "o" depth(2) : !warpspec.channel<[64x128xf32], tmem>
    %rot = warpspec.channel "rotated" depth(2) : !rot
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head, %pos) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64) {
        %qkv_slot, %qb, %kb, %vb = warpspec.acquire %qkv : !qkv
        warpspec.tma_load %q[%row, %head] into %qb : !act, !tile
        warpspec.tma_load %k[%row, %head] into %kb : !act, !tile
        warpspec.tma_load %v[%row, %head] into %vb : !act, !tile
        warpspec.commit %qkv_slot tile(%row, %rows, %head) position(%pos)
      }
      warpspec.close %qkv : !qkv
    }
    warpspec.partition "rotary" role(rotary) warps(4) regs(56) {
      warpspec.consume %qkv (%qkv_slot1, %row, %rows, %head, %qt, %kt, %vt) : !qkv {
        %pos = warpspec.tile_position %qkv_slot1
        %rot_slot, %qr, %kr = warpspec.acquire %rot : !rot
        warpspec.rotate(%qt, %kt) into(%qr, %kr) rows(%rows) row(%row)
            position(%pos) cos(%cos, %sin : !tab4k, !tab4k)
            {interleaved = true} : !tile, !tile into !tile, !tile
        warpspec.commit %rot_slot tile(%row, %rows, %head)
        warpspec.release %qkv_slot1
      }
    }
    warpspec.partition "mma" role(mma) warps(4) regs(56) {
      warpspec.consume %qkv (%qkv_slot2, %row, %rows, %head, %qt, %kt, %vt) : !qkv {
        %rot_slot1, %qr, %kr = warpspec.get %rot : !rot
        %pos = warpspec.tile_position %qkv_slot2
        %s_slot, %sb = warpspec.acquire %s : !warpspec.channel<[64x64xf32], tmem>
        warpspec.mma_async %qr, %kr into %sb {transpose_b}
            : !tile, !tile, !warpspec.buffer<64x64xf32, tmem>
        warpspec.commit %s_slot tile(%row, %rows, %head) position(%pos)
        %p_slot, %pb = warpspec.get %p : !warpspec.channel<[64x64xbf16], tmem>
        %oc_slot, %ob = warpspec.acquire %oc : !warpspec.channel<[64x128xf32], tmem>
        warpspec.mma_async %pb, %vt into %ob
            : !warpspec.buffer<64x64xbf16, tmem>, !tile,
              !warpspec.buffer<64x128xf32, tmem>
        warpspec.commit %oc_slot tile(%row, %rows, %head)
        warpspec.release %p_slot after_mma
        warpspec.release %rot_slot1 after_mma
        warpspec.release %qkv_slot2 after_mma
      }
      warpspec.close %s : !warpspec.channel<[64x64xf32], tmem>
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) replicas(2) {
      %obuf = warpspec.scratch : !tile
      warpspec.consume %s (%s_slot1, %row, %rows, %head, %sb)
          : !warpspec.channel<[64x64xf32], tmem> {
        %pos = warpspec.tile_position %s_slot1
        %st = warpspec.tmem_load %sb
            : !warpspec.buffer<64x64xf32, tmem> -> !warpspec.acc<64x64xf32>
        warpspec.release %s_slot1
        %pt, %l = warpspec.softmax %st valid_cols(%rows) scale(%scale)
            : !warpspec.acc<64x64xf32>
            -> !warpspec.acc<64x64xbf16>, !warpspec.rows<64xf32>
        %p_slot1, %pb = warpspec.acquire %p : !warpspec.channel<[64x64xbf16], tmem>
        warpspec.tmem_store %pt, %pb
            : !warpspec.acc<64x64xbf16>, !warpspec.buffer<64x64xbf16, tmem>
        warpspec.commit %p_slot1 tile(%row, %rows, %head)
        %oc_slot1, %ob = warpspec.get %oc : !warpspec.channel<[64x128xf32], tmem>
        %ot = warpspec.tmem_load %ob
            : !warpspec.buffer<64x128xf32, tmem> -> !warpspec.acc<64x128xf32>
        warpspec.release %oc_slot1
        %or = warpspec.rotate_tile %ot rows(%rows) row(%row) position(%pos)
            cos(%cos, %sin : !tab4k, !tab4k) {interleaved = true}
            : !warpspec.acc<64x128xf32> -> !warpspec.acc<64x128xf32>
        warpspec.store %or to %o[%row, %head] rows(%rows) divide_by(%l)
            via(%obuf) bulk
            : !warpspec.acc<64x128xf32>, !act, !warpspec.rows<64xf32>, !tile
      }
    }
  }
  return
}

//===----------------------------------------------------------------------===//
// f16, head_dim 64
//===----------------------------------------------------------------------===//

// A rotation of f16 tiles of head_dim 64 (tables of 32 pairs), theta with
// tables absent; one source and one destination tile. The loop's fourth
// argument with the contiguous schedule.
// CHECK-LABEL: func.func @hopper_forward_f16_d64_theta
// CHECK: warpspec.tile_loop (%{{.*}}, %{{.*}}, %{{.*}}, %[[POS:.*]]) in %{{.*}} : memref<?xi32> heads(%{{.*}}) tokens(%{{.*}}) block_size(64) contiguous {
// CHECK: warpspec.commit %{{.*}} tile(%{{.*}}, %{{.*}}, %{{.*}}) position(%[[POS]])
// CHECK: warpspec.rotate(%[[QT:[a-z0-9_]+]]) into(%[[QT]]) rows(%{{.*}}) row(%{{.*}}) position(%{{.*}}) {interleaved = true, theta = 1.000000e+04 : f32} : !warpspec.buffer<64x64xf16, smem> into !warpspec.buffer<64x64xf16, smem>
!act64 = memref<?x2x64xf16>
!tile64 = !warpspec.buffer<64x64xf16, smem>
!qkv64 = !warpspec.channel<[64x64xf16, 64x64xf16, 64x64xf16], smem>
func.func @hopper_forward_f16_d64_theta(
    %q: !act64 {blockattn.name = "q"}, %k: !act64 {blockattn.name = "k"},
    %v: !act64 {blockattn.name = "v"}, %o: !act64 {blockattn.name = "o"},
    %cu: !cu {blockattn.name = "cu_seqlens"}) {
  warpspec.kernel chip(sm_90a) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tokens = memref.dim %q, %c0 : !act64
    %heads = memref.dim %q, %c1 : !act64
    %scale = arith.constant 1.250000e-01 : f32
    %qkv = warpspec.channel "qkv" depth(4) : !qkv64
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head, %pos) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64) contiguous {
        %qkv_slot, %qb, %kb, %vb = warpspec.acquire %qkv : !qkv64
        warpspec.tma_load %q[%row, %head] into %qb : !act64, !tile64
        warpspec.tma_load %k[%row, %head] into %kb : !act64, !tile64
        warpspec.tma_load %v[%row, %head] into %vb : !act64, !tile64
        warpspec.commit %qkv_slot tile(%row, %rows, %head) position(%pos)
      }
      warpspec.close %qkv : !qkv64
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) replicas(2) {
      warpspec.consume %qkv (%qkv_slot1, %row, %rows, %head, %qt, %kt, %vt) : !qkv64 {
        %pos = warpspec.tile_position %qkv_slot1
        warpspec.rotate(%qt) into(%qt) rows(%rows) row(%row) position(%pos)
            {interleaved = true, theta = 10000.0 : f32}
            : !tile64 into !tile64
        %s = warpspec.mma %qt, %kt {transpose_b}
            : !tile64, !tile64 -> !warpspec.acc<64x64xf32>
        %p, %l = warpspec.softmax %s valid_cols(%rows) scale(%scale)
            : !warpspec.acc<64x64xf32>
            -> !warpspec.acc<64x64xf16>, !warpspec.rows<64xf32>
        %out = warpspec.mma %p, %vt
            : !warpspec.acc<64x64xf16>, !tile64 -> !warpspec.acc<64x64xf32>
        warpspec.release %qkv_slot1
        warpspec.store %out to %o[%row, %head] rows(%rows) divide_by(%l)
            : !warpspec.acc<64x64xf32>, !act64, !warpspec.rows<64xf32>
      }
    }
  }
  return
}
