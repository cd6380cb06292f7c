// RUN: block-attn-opt %s --pass-pipeline='builtin.module(warpspec-allocate-smem,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --implicit-check-not=warpspec.

// Channels.cpp's patterns (and Schedule.cpp's loops that carry ring
// positions; schedule.mlir has the rest of the schedule): the ops of the
// lowered protocol, written by hand (warpspec-lower-protocol's output form),
// lowered each on its own: the ring position a loop carries
// lives in a per-thread variable (stored before the loop and by its yield),
// ring_slot is the slot and phase arithmetic of that position, and each
// barrier or record op addresses the slot it names. Channel "x": depth 2,
// full barriers at 16384 and 16392, empty at 16400 and 16408, records at
// 16416.

// The producer: position e, slot e % 2 and phase (e / 2) & 1; it waits for
// empty[slot] with the opposite parity, expects the copy's 8192 bytes on
// full[slot], loads, writes the record and arrives on full[slot]; the
// yield stores e + 1.
// CHECK-LABEL: llvm.func @lowered(
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: llvm.store %{{[0-9]+}}, %[[EVAR:[0-9]+]] : i32, !llvm.ptr
// CHECK: %[[E:[0-9]+]] = llvm.load %[[EVAR]] : !llvm.ptr -> i32
// CHECK-NEXT: %[[TWO:[0-9]+]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: %[[S:[0-9]+]] = llvm.urem %[[E]], %[[TWO]] : i32
// CHECK-NEXT: %[[ONE:[0-9]+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[LAP:[0-9]+]] = llvm.udiv %[[E]], %[[TWO]] : i32
// CHECK-NEXT: %[[PH:[0-9]+]] = llvm.and %[[LAP]], %[[ONE]] : i32
// CHECK-NEXT: %[[ONE2:[0-9]+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[PARITY:[0-9]+]] = llvm.xor %[[PH]], %[[ONE2]] : i32
// CHECK-NEXT: %[[EIGHT:[0-9]+]] = llvm.mlir.constant(8 : i32) : i32
// CHECK-NEXT: %[[OFF:[0-9]+]] = llvm.mul %[[S]], %[[EIGHT]] : i32
// CHECK-NEXT: %[[EMPTY0:[0-9]+]] = llvm.mlir.constant(16400 : i32) : i32
// CHECK-NEXT: llvm.add %[[EMPTY0]], %[[OFF]] : i32
// CHECK: %[[EMPTY:[0-9]+]] = llvm.getelementptr
// CHECK: nvvm.mbarrier.try_wait.parity %[[EMPTY]], %[[PARITY]], %{{[0-9]+}} : !llvm.ptr<3>, i32, i32
// CHECK-NEXT: %[[BYTES:[0-9]+]] = llvm.mlir.constant(8192 : i32) : i32
// CHECK: llvm.mul %[[S]], %{{[0-9]+}} : i32
// CHECK-NEXT: %[[FULL0:[0-9]+]] = llvm.mlir.constant(16384 : i32) : i32
// CHECK: %[[FULL:[0-9]+]] = llvm.getelementptr
// CHECK-NEXT: nvvm.mbarrier.expect_tx %[[FULL]], %[[BYTES]] : !llvm.ptr<3>, i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: llvm.store %{{[0-9]+}}, %{{[0-9]+}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
// CHECK: nvvm.mbarrier.arrive
// CHECK: %[[NEXT:[0-9]+]] = llvm.add %[[E]], %{{[0-9]+}} : i32
// CHECK-NEXT: llvm.store %[[NEXT]], %[[EVAR]] : i32, !llvm.ptr
// The close record after the loop, from the position the loop ended on:
// rows = -1.
// CHECK: %[[LAST:[0-9]+]] = llvm.load %[[EVAR]] : !llvm.ptr -> i32
// CHECK-NEXT: llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: llvm.urem %[[LAST]]
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: llvm.mlir.constant(-1 : i32) : i32
// CHECK: llvm.store %{{[0-9]+}}, %{{[0-9]+}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
// CHECK: nvvm.mbarrier.arrive

// The consumer: its position starts at its replica index; each iteration
// waits for full[slot] with the phase's own parity, reads the record and
// goes on while rows >= 0, arrives on empty[slot] after the replica's named
// barrier, and stores e + 1.
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: %[[REPLICA:[0-9]+]] = llvm.udiv %{{[0-9]+}}, %{{[0-9]+}} : i32
// CHECK: llvm.store %[[REPLICA]], %[[CVAR:[0-9]+]] : i32, !llvm.ptr
// CHECK: %[[CE:[0-9]+]] = llvm.load %[[CVAR]] : !llvm.ptr -> i32
// CHECK-NEXT: %[[CTWO:[0-9]+]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: llvm.urem %[[CE]], %[[CTWO]] : i32
// CHECK-NEXT: %[[CONE:[0-9]+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[CLAP:[0-9]+]] = llvm.udiv %[[CE]], %[[CTWO]] : i32
// CHECK-NEXT: %[[CPH:[0-9]+]] = llvm.and %[[CLAP]], %[[CONE]] : i32
// CHECK: nvvm.mbarrier.try_wait.parity %{{[0-9]+}}, %[[CPH]], %{{[0-9]+}} : !llvm.ptr<3>, i32, i32
// CHECK: %[[REC:[0-9]+]] = llvm.load %{{[0-9]+}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// CHECK: %[[FIELD1:[0-9]+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[ROWS:[0-9]+]] = llvm.extractelement %[[REC]][%[[FIELD1]] : i32] : vector<4xi32>
// CHECK: %[[OPEN:[0-9]+]] = llvm.icmp "sge" %[[ROWS]], %{{[0-9]+}} : i32
// CHECK-NEXT: llvm.cond_br %[[OPEN]]
// CHECK: nvvm.barrier id =
// CHECK: nvvm.mbarrier.arrive
// CHECK: llvm.store %{{[0-9]+}}, %[[CVAR]] : i32, !llvm.ptr

!act = memref<?x4x64xbf16>
!cu = memref<?xi32>
!tile = !warpspec.buffer<64x64xbf16, smem>
!one = !warpspec.channel<[64x64xbf16], smem>

func.func @lowered(%q: !act {blockattn.name = "q"},
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
      %stage, %phase = warpspec.ring_slot %x[%last] : !one
      warpspec.wait_empty %x[%stage] phase(%phase) : !one
      warpspec.publish_close %x[%stage] : !one
    }
    warpspec.partition "sink" role(compute) warps(4) regs(40) {
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
        %one = arith.constant 1 : i32
        %next = arith.addi %e, %one : i32
        scf.yield %next : i32
      }
    }
  }
  return
}
