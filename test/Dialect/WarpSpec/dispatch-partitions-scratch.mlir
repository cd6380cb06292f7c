// RUN: block-attn-opt %s --warpspec-dispatch-partitions | FileCheck %s
// RUN: block-attn-opt %s --warpspec-dispatch-partitions | block-attn-opt | FileCheck %s
// RUN: block-attn-opt %s --pass-pipeline='builtin.module(warpspec-allocate-tmem,warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --check-prefix=NVVM --implicit-check-not=warpspec.

// Scratch buffers in a single-thread partition. warpspec.scratch stays a
// direct child of its partition (one copy per replica) while the rest of
// the body moves into warpspec.single_thread; the pass used to leave the
// scratch ops after the region, where the MMA that reads them no longer saw
// them ("operand #0 does not dominate this use"). They now come before the
// region, in their order, right after the partition's indices, wherever the
// body declared them.

!tile = !warpspec.buffer<64x64xbf16, smem>
!sring = !warpspec.channel<[64x64xf32], tmem>

// CHECK-LABEL: func.func @scratch_in_mma(
// CHECK: warpspec.partition "mma" role(mma) warps(4) regs(40) first_warp(0) barrier_base(1) {
// CHECK-NEXT: warpspec.set_max_registers decrease 40
// CHECK-NEXT: %{{.*}}, %[[T:.*]] = warpspec.partition_index
// CHECK-NEXT: %[[A:.*]] = warpspec.scratch : <64x64xbf16, smem>
// CHECK-NEXT: %[[B:.*]] = warpspec.scratch : <64x64xbf16, smem>
// CHECK-NEXT: warpspec.single_thread %[[T]] {
// CHECK-NEXT: %[[SLOT:.*]], %[[S:.*]] = warpspec.acquire
// CHECK-NEXT: warpspec.mma_async %[[A]], %[[B]] into %[[S]] {transpose_b}
// CHECK-NEXT: warpspec.commit %[[SLOT]]
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK: warpspec.partition "softmax"
// CHECK-NOT: warpspec.single_thread

// Lowered: every thread of the partition computes the replica's scratch
// addresses (offset 0, then 8192, plus replica * 8192) before the branch of
// thread 0, which reads them for the MMA's descriptors.
// NVVM-LABEL: llvm.func @scratch_in_mma(
// NVVM: nvvm.setmaxregister  decrease 40
// NVVM: %[[REPLICA:[0-9]+]] = llvm.udiv
// NVVM: %[[STRIDE:[0-9]+]] = llvm.mlir.constant(8192 : i32) : i32
// NVVM-NEXT: %[[ROFF:[0-9]+]] = llvm.mul %[[REPLICA]], %[[STRIDE]] : i32
// NVVM-NEXT: %[[OFF:[0-9]+]] = llvm.mlir.constant(0 : i32) : i32
// NVVM-NEXT: %[[AOFF:[0-9]+]] = llvm.add %[[OFF]], %[[ROFF]] : i32
// NVVM-NEXT: %[[APTR:[0-9]+]] = llvm.getelementptr %{{[0-9]+}}[%[[AOFF]]]
// NVVM-NEXT: %[[STRIDE2:[0-9]+]] = llvm.mlir.constant(8192 : i32) : i32
// NVVM-NEXT: %[[ROFF2:[0-9]+]] = llvm.mul %[[REPLICA]], %[[STRIDE2]] : i32
// NVVM-NEXT: %[[OFF2:[0-9]+]] = llvm.mlir.constant(8192 : i32) : i32
// NVVM-NEXT: %[[BOFF:[0-9]+]] = llvm.add %[[OFF2]], %[[ROFF2]] : i32
// NVVM-NEXT: %[[BPTR:[0-9]+]] = llvm.getelementptr %{{[0-9]+}}[%[[BOFF]]]
// NVVM-NEXT: llvm.mlir.constant(0 : i32) : i32
// NVVM-NEXT: llvm.icmp "eq"
// NVVM-NEXT: llvm.cond_br
// NVVM: llvm.ptrtoint %[[APTR]] : !llvm.ptr<3> to i32
// NVVM-NEXT: llvm.ptrtoint %[[BPTR]] : !llvm.ptr<3> to i32
// NVVM-COUNT-4: nvvm.tcgen05.mma
// NVVM: nvvm.tcgen05.commit
func.func @scratch_in_mma() {
  warpspec.kernel chip(sm_100a) {
    %i = arith.constant 0 : i32
    %s = warpspec.channel "s" depth(1) : !sring
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      %a = warpspec.scratch : !tile
      %slot, %sb = warpspec.acquire %s : !sring
      %b = warpspec.scratch : !tile
      warpspec.mma_async %a, %b into %sb {transpose_b}
          : !tile, !tile, !warpspec.buffer<64x64xf32, tmem>
      warpspec.commit %slot tile(%i, %i, %i)
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(216) {
      %slot1, %sb1 = warpspec.get %s : !sring
      %sv = warpspec.tmem_load %sb1
          : !warpspec.buffer<64x64xf32, tmem> -> !warpspec.acc<64x64xf32>
      warpspec.release %slot1
    }
  }
  return
}
