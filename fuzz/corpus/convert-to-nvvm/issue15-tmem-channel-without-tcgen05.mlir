
// A tensor-memory channel that no tcgen05 op touches: the prologue
// allocates tensor memory for the partitions that issue tcgen05 ops, so the
// slots had a null base address (bindSlotBuffers).
!s = !warpspec.channel<[64x64xf32], tmem>
func.func @negative_tmem_channel_without_tcgen05() {
  warpspec.kernel chip("sm_100a") {
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
