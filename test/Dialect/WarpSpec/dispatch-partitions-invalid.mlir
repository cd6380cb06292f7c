// RUN: block-attn-opt %s -split-input-file -verify-diagnostics --warpspec-dispatch-partitions

// The diagnostics of warpspec-dispatch-partitions. A kernel whose partitions
// are partly placed (by hand) is rejected: the pass places all of a kernel's
// partitions, from warp 0 and barrier 1, or none.
//
// Not covered: "needs N named barriers (one per partition replica)": 15
// replicas of at least 4 warps would need more than the 32 warps a verified
// kernel can have.

func.func @partly_placed() {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.partition' op is placed on warps, but other partitions of its kernel are not; warpspec-dispatch-partitions places all of a kernel's partitions at once}}
    warpspec.partition "a" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      %r, %t = warpspec.partition_index
    }
    warpspec.partition "b" role(compute) warps(4) regs(128) {
    }
  }
  return
}
