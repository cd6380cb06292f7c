// RUN: not block-attn-opt %s -split-input-file --pass-pipeline='builtin.module(warpspec-allocate-tmem,warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' 2>&1 | FileCheck %s

// warpspec.rotate is a cooperative operation: every thread of the partition
// replica takes its share of the tile's 16-byte units, then all of them meet
// at the replica's named barrier (128 threads). In a role(load) or role(mma)
// partition only thread 0 runs the body, so the kernel verifier rejects it.

// CHECK-COUNT-2: error: 'warpspec.rotate' op needs every thread of its partition, but only one thread of the role({{load|mma}}) partition

!act = memref<?x4x128xbf16>
!cu = memref<?xi32>
!tile = !warpspec.buffer<64x128xbf16, smem>
!qk = !warpspec.channel<[64x128xbf16, 64x128xbf16], smem>

// Rotating in the load partition (which would also read the slot before its
// copies have landed).
func.func @rotate_in_load_partition(%q: !act {blockattn.name = "q"},
                                    %k: !act {blockattn.name = "k"},
                                    %o: !act {blockattn.name = "o"},
                                    %cu: !cu {blockattn.name = "cu_seqlens"}) {
  warpspec.kernel chip(sm_90a) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tokens = memref.dim %q, %c0 : !act
    %heads = memref.dim %q, %c1 : !act
    %scale = arith.constant 1.250000e-01 : f32
    %qk = warpspec.channel "qk" depth(2) : !qk
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head, %pos) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64) {
        %qk_slot, %qb, %kb = warpspec.acquire %qk : !qk
        warpspec.tma_load %q[%row, %head] into %qb : !act, !tile
        warpspec.tma_load %k[%row, %head] into %kb : !act, !tile
        warpspec.rotate(%qb, %kb) into(%qb, %kb) rows(%rows) row(%row)
            position(%pos) {interleaved = false, theta = 10000.0 : f32}
            : !tile, !tile into !tile, !tile
        warpspec.commit %qk_slot tile(%row, %rows, %head)
      }
      warpspec.close %qk : !qk
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %qk (%qk_slot1, %row, %rows, %head, %qt, %kt) : !qk {
        %s = warpspec.mma %qt, %kt {transpose_b}
            : !tile, !tile -> !warpspec.acc<64x64xf32>
        %p, %l = warpspec.softmax %s valid_cols(%rows) scale(%scale)
            : !warpspec.acc<64x64xf32>
            -> !warpspec.acc<64x64xbf16>, !warpspec.rows<64xf32>
        %out = warpspec.mma %p, %kt
            : !warpspec.acc<64x64xbf16>, !tile -> !warpspec.acc<64x128xf32>
        warpspec.release %qk_slot1
        warpspec.store %out to %o[%row, %head] rows(%rows) divide_by(%l)
            : !warpspec.acc<64x128xf32>, !act, !warpspec.rows<64xf32>
      }
    }
  }
  return
}

// -----

!act = memref<?x4x128xbf16>
!cu = memref<?xi32>
!tile = !warpspec.buffer<64x128xbf16, smem>
!qkv = !warpspec.channel<[64x128xbf16, 64x128xbf16, 64x128xbf16], smem>

// Rotating in the MMA partition of a Blackwell kernel, in the slot, right
// before the MMA reads it.
func.func @rotate_in_mma_partition(%q: !act {blockattn.name = "q"},
                                   %k: !act {blockattn.name = "k"},
                                   %v: !act {blockattn.name = "v"},
                                   %o: !act {blockattn.name = "o"},
                                   %cu: !cu {blockattn.name = "cu_seqlens"}) {
  warpspec.kernel chip(sm_100a) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tokens = memref.dim %q, %c0 : !act
    %heads = memref.dim %q, %c1 : !act
    %scale = arith.constant 1.250000e-01 : f32
    %qkv = warpspec.channel "qkv" depth(2) : !qkv
    %s = warpspec.channel "s" depth(2) : !warpspec.channel<[64x64xf32], tmem>
    %p = warpspec.channel "p" depth(2) : !warpspec.channel<[64x64xbf16], tmem>
    %oc = warpspec.channel "o" depth(2) : !warpspec.channel<[64x128xf32], tmem>
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
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      warpspec.consume %qkv (%qkv_slot1, %row, %rows, %head, %qt, %kt, %vt) : !qkv {
        %pos = warpspec.tile_position %qkv_slot1
        warpspec.rotate(%qt, %kt) into(%qt, %kt) rows(%rows) row(%row)
            position(%pos) {interleaved = false, theta = 10000.0 : f32}
            : !tile, !tile into !tile, !tile
        %s_slot, %sb = warpspec.acquire %s : !warpspec.channel<[64x64xf32], tmem>
        warpspec.mma_async %qt, %kt into %sb {transpose_b}
            : !tile, !tile, !warpspec.buffer<64x64xf32, tmem>
        warpspec.commit %s_slot tile(%row, %rows, %head)
        %p_slot, %pb = warpspec.get %p : !warpspec.channel<[64x64xbf16], tmem>
        %oc_slot, %ob = warpspec.acquire %oc : !warpspec.channel<[64x128xf32], tmem>
        warpspec.mma_async %pb, %vt into %ob
            : !warpspec.buffer<64x64xbf16, tmem>, !tile,
              !warpspec.buffer<64x128xf32, tmem>
        warpspec.commit %oc_slot tile(%row, %rows, %head)
        warpspec.release %p_slot after_mma
        warpspec.release %qkv_slot1 after_mma
      }
      warpspec.close %s : !warpspec.channel<[64x64xf32], tmem>
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(216) replicas(2) {
      %obuf = warpspec.scratch : !tile
      warpspec.consume %s (%s_slot1, %row, %rows, %head, %sb)
          : !warpspec.channel<[64x64xf32], tmem> {
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
        warpspec.store %ot to %o[%row, %head] rows(%rows) divide_by(%l)
            via(%obuf) bulk
            : !warpspec.acc<64x128xf32>, !act, !warpspec.rows<64xf32>, !tile
      }
    }
  }
  return
}
