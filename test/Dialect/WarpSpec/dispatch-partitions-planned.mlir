// RUN: block-attn-opt %s --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_90a}),warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions)' | FileCheck %s --check-prefix=HOPPER
// RUN: block-attn-opt %s --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_100a}),warpspec-allocate-tmem,warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions)' | FileCheck %s --check-prefix=BLACKWELL

// The dispatch of the seed forward kernel's partitions, on both chips: the
// teardowns that only planned kernels have (bulk stores, tensor memory).

// sm_90a: the load partition gives registers back and issues from one
// thread; the compute warpgroup takes them, and, since it stores O with
// bulk tensor stores, its thread 0 waits for them at the end.
// HOPPER: warpspec.partition "load" role(load) warps(4) regs(40) first_warp(0) barrier_base(1) {
// HOPPER-NEXT: warpspec.set_max_registers decrease 40
// HOPPER-NEXT: %{{.*}}, %[[T0:.*]] = warpspec.partition_index
// HOPPER-NEXT: warpspec.single_thread %[[T0]] {
// HOPPER: warpspec.partition "compute" role(compute) warps(4) regs(216) first_warp(4) barrier_base(2) {
// HOPPER-NEXT: warpspec.set_max_registers increase 216
// HOPPER-NEXT: %{{.*}}, %[[T1:.*]] = warpspec.partition_index
// HOPPER-NOT: warpspec.single_thread
// HOPPER: warpspec.store {{.*}} bulk
// HOPPER: warpspec.single_thread %[[T1]] {
// HOPPER-NEXT: warpspec.wait_bulk_stores
// HOPPER-NEXT: }
// HOPPER-NEXT: }
// HOPPER-NOT: tmem_release

// sm_100a: the partition of warp 0 (load) frees the tensor memory once the
// MMA partition (one thread: no gathering) and both softmax replicas (every
// thread, gathered at the replica's barrier first) arrived.
// BLACKWELL: warpspec.partition "load" role(load) warps(4) regs(40) first_warp(0) barrier_base(1) {
// BLACKWELL: warpspec.tmem_release %{{.*}} dealloc
// BLACKWELL-NEXT: }
// BLACKWELL: warpspec.partition "mma" role(mma) warps(4) regs(40) first_warp(4) barrier_base(2) {
// BLACKWELL-NEXT: warpspec.set_max_registers decrease 40
// BLACKWELL-NEXT: %{{.*}}, %[[T:.*]] = warpspec.partition_index
// BLACKWELL-NEXT: warpspec.single_thread %[[T]] {
// BLACKWELL: warpspec.tmem_release %[[T]] arrive
// BLACKWELL-NEXT: }
// BLACKWELL: warpspec.partition "softmax" role(softmax) warps(4) regs(216) replicas(2) first_warp(8) barrier_base(3) {
// BLACKWELL: warpspec.wait_bulk_stores
// BLACKWELL: warpspec.tmem_release %{{.*}} arrive gather
// BLACKWELL-NEXT: }

!act = memref<?x4x128xbf16>
func.func @seed_forward(%q: !act, %k: !act, %v: !act, %o: !act,
                        %cu_seqlens: memref<?xi32>) {
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu_seqlens : memref<?xi32>)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}
