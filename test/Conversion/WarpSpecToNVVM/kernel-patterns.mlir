// RUN: block-attn-opt %s --pass-pipeline='builtin.module(warpspec-allocate-smem,convert-warpspec-to-nvvm)' | FileCheck %s --implicit-check-not=warpspec.

// KernelPatterns.cpp's patterns and the shells the pass lowers after them
// (Prologue.cpp), from hand-written warpspec IR that is already dispatched
// (first_warp, barrier_base, partition_index, single_thread, as
// warpspec-dispatch-partitions writes them): the prologue, the kernel's
// scalars, each partition's warp-range branch, set_max_registers,
// partition_index, single_thread, scratch and wait_bulk_stores.

// The prologue: thread, warp (tid >> 5) and lane (tid & 31); the dynamic
// shared memory rounded up to 1024 bytes.
// CHECK-LABEL: llvm.func @kernel_ops(
// CHECK-SAME: %[[QSIZE0:arg0]]: i32)
// CHECK: %[[TID:[0-9]+]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NEXT: %[[FIVE:[0-9]+]] = llvm.mlir.constant(5 : i32) : i32
// CHECK-NEXT: %[[WARP:[0-9]+]] = llvm.lshr %[[TID]], %[[FIVE]] : i32
// CHECK: %[[RAW:[0-9]+]] = llvm.mlir.addressof @__blockattn_dynamic_smem : !llvm.ptr<3>
// CHECK: %[[SMEM:[0-9]+]] = llvm.getelementptr %[[RAW]][%{{[0-9]+}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// The kernel's scalars: index constants are i64; memref.dim is the static
// size (4 heads) or the zero-extended i32 size parameter (tokens).
// CHECK: llvm.mlir.constant(0 : i64) : i64
// CHECK-NEXT: llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: llvm.zext %[[QSIZE0]] : i32 to i64
// CHECK-NEXT: llvm.mlir.constant(4 : i64) : i64
// No channels: thread 0 only fences the (absent) barrier initialization,
// then the CTA barrier.
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.barrier0

// "producer": warps [0, 4); it gives registers back, and its replica and
// thread indices are (warp - 0) / 4 and tid - (0 + replica * 4) * 32.
// CHECK: %[[END:[0-9]+]] = llvm.mlir.constant(4 : i32) : i32
// CHECK-NEXT: %[[BELOW:[0-9]+]] = llvm.icmp "ult" %[[WARP]], %[[END]] : i32
// CHECK-NEXT: %[[FIRST:[0-9]+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %[[ABOVE:[0-9]+]] = llvm.icmp "uge" %[[WARP]], %[[FIRST]] : i32
// CHECK-NEXT: %[[IN:[0-9]+]] = llvm.and %[[ABOVE]], %[[BELOW]] : i1
// CHECK-NEXT: llvm.cond_br %[[IN]], ^bb3, ^bb6
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: %[[REPLICA:[0-9]+]] = llvm.udiv %{{[0-9]+}}, %{{[0-9]+}} : i32
// CHECK: %[[THREAD:[0-9]+]] = llvm.sub %[[TID]], %{{[0-9]+}} : i32
// single_thread: the body on thread 0 of the replica.
// CHECK: %[[LEADER:[0-9]+]] = llvm.icmp "eq" %[[THREAD]], %{{[0-9]+}} : i32
// CHECK-NEXT: llvm.cond_br %[[LEADER]], ^bb4, ^bb5
// CHECK: %[[ONE:[0-9]+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: llvm.add %[[ONE]], %[[ONE]] : i32
// CHECK-NEXT: llvm.mlir.constant(4294967296 : i64) : i64
// CHECK-NEXT: llvm.mlir.constant(5.000000e-01 : f32) : f32

// "compute": warps [4, 12) (two replicas of 4 warps); the scratch buffer of
// replica r is at offset 0 + r * 8192 of the aligned shared memory.
// CHECK: llvm.mlir.constant(12 : i32) : i32
// CHECK: nvvm.setmaxregister  increase 232
// CHECK: %[[CREPLICA:[0-9]+]] = llvm.udiv %{{[0-9]+}}, %{{[0-9]+}} : i32
// CHECK: %[[STRIDE:[0-9]+]] = llvm.mlir.constant(8192 : i32) : i32
// CHECK-NEXT: %[[OFF:[0-9]+]] = llvm.mul %[[CREPLICA]], %[[STRIDE]] : i32
// CHECK-NEXT: %[[BASE:[0-9]+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %[[AT:[0-9]+]] = llvm.add %[[BASE]], %[[OFF]] : i32
// CHECK-NEXT: llvm.getelementptr %[[SMEM]][%[[AT]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK: llvm.icmp "eq" %[[CREPLICA]], %{{[0-9]+}} : i32
// CHECK: nvvm.cp.async.bulk.wait_group 0
// CHECK: llvm.return

!act = memref<?x4x64xbf16>
func.func @kernel_ops(%q: !act {blockattn.name = "q"}) {
  warpspec.kernel chip("sm_90a") {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tokens = memref.dim %q, %c0 : !act
    %heads = memref.dim %q, %c1 : !act
    warpspec.partition "producer" role(load) warps(4) regs(40) first_warp(0) barrier_base(1) {
      warpspec.set_max_registers decrease 40
      %replica, %thread = warpspec.partition_index
      warpspec.single_thread %thread {
        %one = arith.constant 1 : i32
        %two = arith.addi %one, %one : i32
        %big = arith.constant 4294967296 : i64
        %half = arith.constant 0.5 : f32
      }
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) replicas(2) first_warp(4) barrier_base(2) {
      warpspec.set_max_registers increase 232
      %replica, %thread = warpspec.partition_index
      %buf = warpspec.scratch : !warpspec.buffer<64x64xbf16, smem>
      %zero = arith.constant 0 : i32
      %first = arith.cmpi eq, %replica, %zero : i32
      warpspec.single_thread %thread {
        warpspec.wait_bulk_stores
      }
    }
  }
  return
}
