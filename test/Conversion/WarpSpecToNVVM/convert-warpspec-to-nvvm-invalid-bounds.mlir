// RUN: block-attn-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(warpspec-allocate-tmem,warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)'

// Issue 15: IR the verifier accepts but the lowering cannot address. Each
// case crashed convert-warpspec-to-nvvm before.

// A memref.dim of a memref that is not an argument of the kernel function
// (here a cast of one): buildKernelParams indexed the per-dimension table of
// a memref it had no entry for.
!act = memref<?x?x64xbf16>
func.func @negative_dim_of_cast(%q: !act, %cu: memref<?xi32>) {
  warpspec.kernel chip(sm_90a) {
    %c0 = arith.constant 0 : index
    %m = memref.cast %q : !act to memref<?x4x64xbf16>
    // expected-error @+1 {{'memref.dim' op inside a kernel must take the size of an argument of the kernel function}}
    %h = memref.dim %m, %c0 : memref<?x4x64xbf16>
    warpspec.partition "a" role(compute) warps(4) regs(64) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : memref<?xi32> heads(%h) tokens(%h) block_size(64) {
      }
    }
  }
  return
}

// -----

// A tensor-memory channel that no tcgen05 op touches: the prologue
// allocates tensor memory for the partitions that issue tcgen05 ops, so the
// slots had a null base address (bindSlotBuffers).
!s = !warpspec.channel<[64x64xf32], tmem>
func.func @negative_tmem_channel_without_tcgen05() {
  warpspec.kernel chip(sm_100a) {
    %i = arith.constant 0 : i32
    // expected-error @+1 {{'warpspec.channel' op channel "s" lives in tensor memory, but no partition accesses tensor memory (warpspec.mma_async, warpspec.tmem_load or warpspec.tmem_store), so none allocates it}}
    %s = warpspec.channel "s" depth(2) : !s
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      %s_slot, %a = warpspec.acquire %s : !s
      warpspec.commit %s_slot tile(%i, %i, %i)
      warpspec.close %s : !s
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(160) {
      warpspec.consume %s (%s_slot1, %row, %rows, %head, %b) : !s {
        warpspec.release %s_slot1
      }
    }
  }
  return
}
