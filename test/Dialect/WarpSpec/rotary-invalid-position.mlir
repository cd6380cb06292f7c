// RUN: block-attn-opt %s -verify-diagnostics

// warpspec.tile_position reads the position a producer committed with the
// tile; when no commit of the channel carries one, there is nothing to read
// (the record's field would be 0 for every tile), so the kernel verifier
// rejects it.

!act = memref<?x4x128xbf16>
!cu = memref<?xi32>
!tile = !warpspec.buffer<64x128xbf16, smem>
!qk = !warpspec.channel<[64x128xbf16, 64x128xbf16], smem>

func.func @tile_position_without_committed_position(
    %q: !act {blockattn.name = "q"}, %k: !act {blockattn.name = "k"},
    %o: !act {blockattn.name = "o"}, %cu: !cu {blockattn.name = "cu_seqlens"}) {
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
        warpspec.commit %qk_slot tile(%row, %rows, %head)
      }
      warpspec.close %qk : !qk
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %qk (%qk_slot1, %row, %rows, %head, %qt, %kt) : !qk {
        // expected-error @+1 {{'warpspec.tile_position' op reads a position that no warpspec.commit of the channel carries (commit ... position(%p))}}
        %pos = warpspec.tile_position %qk_slot1
        warpspec.rotate(%qt, %kt) into(%qt, %kt) rows(%rows) row(%row)
            position(%pos) {interleaved = false, theta = 10000.0 : f32}
            : !tile, !tile into !tile, !tile
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
