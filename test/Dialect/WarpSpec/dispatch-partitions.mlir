// RUN: block-attn-opt %s -split-input-file --warpspec-dispatch-partitions | FileCheck %s
// RUN: block-attn-opt %s -split-input-file --warpspec-dispatch-partitions | block-attn-opt -split-input-file | FileCheck %s
// RUN: block-attn-opt %s -split-input-file --warpspec-dispatch-partitions --warpspec-dispatch-partitions | FileCheck %s
// RUN: block-attn-opt %s -split-input-file --pass-pipeline='builtin.module(warpspec-allocate-smem,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --check-prefix=NVVM --implicit-check-not=warpspec.

// warpspec-dispatch-partitions on hand-written warpspec IR (the lowered
// protocol's form): every partition is placed on consecutive warps and
// named barriers, starts with its register rebalance and its indices, and
// the load partition's body runs on one thread. The output verifies, parses
// back, is left as it is by a second run and lowers to NVVM.

!tile = !warpspec.buffer<64x64xbf16, smem>
!one = !warpspec.channel<[64x64xbf16], smem>
!act = memref<?x4x64xbf16>
!cu = memref<?xi32>

// 16 warps (512 threads): the kernel is launched with 128 registers per
// thread. "load" (warps 0-3, barrier 1) gives registers back, the two
// replicas of "sink" (warps 4-11, barriers 2 and 3) take more, "idle" (warps
// 12-15, barrier 4) keeps the launch's.
// CHECK-LABEL: func.func @placed(
// CHECK: warpspec.partition "load" role(load) warps(4) regs(40) first_warp(0) barrier_base(1) {
// CHECK-NEXT: warpspec.set_max_registers decrease 40
// CHECK-NEXT: %[[R0:.*]], %[[T0:.*]] = warpspec.partition_index
// CHECK-NEXT: warpspec.single_thread %[[T0]] {
// CHECK-NEXT: arith.constant 0 : i32
// CHECK: warpspec.tile_loop
// CHECK: warpspec.publish_close
// CHECK: warpspec.publish_close
// CHECK-NEXT: }
// CHECK-NEXT: }
// The replica index replaces warpspec.replica_id: the consumer's ring
// position starts there. A compute partition's body runs on every thread.
// CHECK: warpspec.partition "sink" role(compute) warps(4) regs(168) replicas(2) first_warp(4) barrier_base(2) {
// CHECK-NEXT: warpspec.set_max_registers increase 168
// CHECK-NEXT: %[[R1:.*]], %[[T1:.*]] = warpspec.partition_index
// CHECK-NEXT: scf.while (%{{.*}} = %[[R1]])
// CHECK-NOT: warpspec.replica_id
// CHECK-NOT: warpspec.single_thread
// CHECK: warpspec.partition "idle" role(compute) warps(4) regs(128) first_warp(12) barrier_base(4) {
// CHECK-NEXT: %{{.*}}, %{{.*}} = warpspec.partition_index
// CHECK-NEXT: }

// The conversion dispatches on each partition's warp range (warp 4 <= w <
// 12 for "sink"); a replica is (w - 4) / 4 and its thread tid - (4 + 4 *
// replica) * 32; the load body is guarded by thread == 0.
// NVVM-LABEL: llvm.func @placed(
// NVVM: llvm.icmp "uge"
// NVVM: llvm.icmp "ult"
// NVVM: nvvm.setmaxregister decrease 40
// NVVM: llvm.icmp "eq"
// NVVM: nvvm.setmaxregister increase 168
// NVVM-NOT: nvvm.setmaxregister
// NVVM: llvm.return
func.func @placed(%q: !act {blockattn.name = "q"},
                  %cu: !cu {blockattn.name = "cu_seqlens"}) {
  warpspec.kernel chip(sm_90a) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tokens = memref.dim %q, %c0 : !act
    %heads = memref.dim %q, %c1 : !act
    %x = warpspec.channel "x" depth(2) : !one
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %zero = arith.constant 0 : i32
      %one = arith.constant 1 : i32
      %last = warpspec.tile_loop (%row, %rows, %head) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64)
          iter_args(%e = %zero) -> (i32) {
        %stage, %phase = warpspec.ring_slot %x[%e] : !one
        warpspec.wait_empty %x[%stage] phase(%phase) : !one
        warpspec.expect_tx %x[%stage] bytes(8192) : !one
        %b = warpspec.slot_buffers %x[%stage] : !one
        warpspec.tma_load %q[%row, %head] into %b : !act, !tile
        warpspec.publish %x[%stage] tile(%row, %rows, %head) : !one
        %next = arith.addi %e, %one : i32
        warpspec.yield %next : i32
      }
      %s0, %p0 = warpspec.ring_slot %x[%last] : !one
      warpspec.wait_empty %x[%s0] phase(%p0) : !one
      warpspec.publish_close %x[%s0] : !one
      %two = arith.constant 1 : i32
      %after = arith.addi %last, %two : i32
      %s1, %p1 = warpspec.ring_slot %x[%after] : !one
      warpspec.wait_empty %x[%s1] phase(%p1) : !one
      warpspec.publish_close %x[%s1] : !one
    }
    warpspec.partition "sink" role(compute) warps(4) regs(168) replicas(2) {
      %r = warpspec.replica_id
      %end:2 = scf.while (%e = %r) : (i32) -> (i32, i32) {
        %stage, %phase = warpspec.ring_slot %x[%e] : !one
        warpspec.wait_full %x[%stage] phase(%phase) : !one
        %row, %rows, %head, %pos = warpspec.read_tile %x[%stage] : !one
        %zero = arith.constant 0 : i32
        %open = arith.cmpi sge, %rows, %zero : i32
        scf.condition(%open) %stage, %e : i32, i32
      } do {
      ^bb0(%stage: i32, %e: i32):
        warpspec.arrive_empty %x[%stage] : !one
        %two = arith.constant 2 : i32
        %next = arith.addi %e, %two : i32
        scf.yield %next : i32
      }
    }
    warpspec.partition "idle" role(compute) warps(4) regs(128) {
    }
  }
  return
}

// -----

// A partition whose budget is the launch's (128 with 16 warps) gets no
// setmaxnreg unless it is `explicit`: then `increase` at that same count
// (ptxas allocates its code against the count the instruction names).
// CHECK-LABEL: func.func @explicit_at_launch_budget(
// CHECK: warpspec.partition "low" role(compute) warps(4) regs(112) first_warp(0) barrier_base(1) {
// CHECK-NEXT: warpspec.set_max_registers decrease 112
// CHECK: warpspec.partition "high" role(compute) warps(4) regs(144) first_warp(4) barrier_base(2) {
// CHECK-NEXT: warpspec.set_max_registers increase 144
// CHECK: warpspec.partition "pinned" role(compute) warps(4) regs(128) explicit first_warp(8) barrier_base(3) {
// CHECK-NEXT: warpspec.set_max_registers increase 128
// CHECK-NEXT: warpspec.partition_index
// CHECK: warpspec.partition "idle" role(compute) warps(4) regs(128) first_warp(12) barrier_base(4) {
// CHECK-NEXT: warpspec.partition_index
// CHECK-NEXT: }
// NVVM-LABEL: llvm.func @explicit_at_launch_budget(
// NVVM: nvvm.setmaxregister decrease 112
// NVVM: nvvm.setmaxregister increase 144
// NVVM: nvvm.setmaxregister increase 128
// NVVM-NOT: nvvm.setmaxregister
// NVVM: llvm.return
func.func @explicit_at_launch_budget() {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "low" role(compute) warps(4) regs(112) {
    }
    warpspec.partition "high" role(compute) warps(4) regs(144) {
    }
    warpspec.partition "pinned" role(compute) warps(4) regs(128) explicit {
    }
    warpspec.partition "idle" role(compute) warps(4) regs(128) {
    }
  }
  return
}

// -----

// `pinned_bases` (the lowering pins the shared-memory bases at each use in
// that partition) is kept through the dispatch and the round trip.
// CHECK-LABEL: func.func @pinned_bases(
// CHECK: warpspec.partition "low" role(compute) warps(4) regs(112) first_warp(0) barrier_base(1) {
// CHECK: warpspec.partition "pinned" role(compute) warps(4) regs(144) pinned_bases first_warp(4) barrier_base(2) {
// CHECK-NEXT: warpspec.set_max_registers increase 144
func.func @pinned_bases() {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "low" role(compute) warps(4) regs(112) {
    }
    warpspec.partition "pinned" role(compute) warps(4) regs(144) pinned_bases {
    }
    warpspec.partition "a" role(compute) warps(4) regs(128) {
    }
    warpspec.partition "b" role(compute) warps(4) regs(128) {
    }
  }
  return
}
