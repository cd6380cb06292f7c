// RUN: block-attn-opt %s --pass-pipeline='builtin.module(warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --implicit-check-not=warpspec.

// A dynamic tile schedule (Schedule.cpp, DynamicSchedule): CTA c takes item
// c, then claims each next item at the start of the tile before, as the grid
// plus the old value of the first counter (the schedule argument's word 0).
// After its last claim the CTA counts itself finished in word 1 (a release),
// and the CTA that counts the grid's last resets both words (an acquire).

// CHECK-LABEL: llvm.func @dynamic(
// CHECK-SAME: %[[CU:arg2]]: !llvm.ptr<1>, %{{.*}}: i32, %[[SCHED:arg4]]: !llvm.ptr<1>, %{{.*}}: i32)
// CHECK: %[[G32:[0-9]+]] = nvvm.read.ptx.sreg.nctaid.x : i32
// CHECK-NEXT: %[[G:[0-9]+]] = llvm.zext %[[G32]] : i32 to i64
// CHECK-NEXT: %[[C32:[0-9]+]] = nvvm.read.ptx.sreg.ctaid.x : i32
// CHECK-NEXT: %[[C:[0-9]+]] = llvm.zext %[[C32]] : i32 to i64
// The first item is the CTA's own: no claim before the search.
// CHECK-NOT: llvm.atomicrmw
// CHECK: llvm.getelementptr %[[CU]]
// The claim, before the tile's body (its acquire's wait).
// CHECK: %[[NEXT:[0-9]+]] = llvm.getelementptr %[[SCHED]][0] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i32
// CHECK-NEXT: %[[OLD:[0-9]+]] = llvm.atomicrmw add %[[NEXT]], %{{[0-9]+}} syncscope("device") monotonic : !llvm.ptr<1>, i32
// CHECK-NEXT: %[[OLD64:[0-9]+]] = llvm.zext %[[OLD]] : i32 to i64
// CHECK-NEXT: %[[ITEM:[0-9]+]] = llvm.add %[[G]], %[[OLD64]] : i64
// CHECK: nvvm.mbarrier.try_wait.parity
// The claimed item's block and head: one division.
// CHECK: %[[V:[0-9]+]] = llvm.udiv %[[ITEM]], %[[H:[0-9]+]] : i64
// CHECK: %[[VH:[0-9]+]] = llvm.mul %[[V]], %[[H]] : i64
// CHECK-NEXT: llvm.sub %[[ITEM]], %[[VH]] : i64
// After the loop, on every path (also a CTA without work).
// CHECK: llvm.fence syncscope("device") release
// CHECK-NEXT: llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[DONE:[0-9]+]] = llvm.getelementptr %[[SCHED]][1] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i32
// CHECK-NEXT: %[[FINISHED:[0-9]+]] = llvm.atomicrmw add %[[DONE]], %{{[0-9]+}} syncscope("device") monotonic : !llvm.ptr<1>, i32
// CHECK-NEXT: %[[ONE:[0-9]+]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: %[[GM1:[0-9]+]] = llvm.sub %[[G]], %[[ONE]] : i64
// CHECK-NEXT: %[[FINISHED64:[0-9]+]] = llvm.zext %[[FINISHED]] : i32 to i64
// CHECK-NEXT: %[[LAST:[0-9]+]] = llvm.icmp "eq" %[[FINISHED64]], %[[GM1]] : i64
// CHECK-NEXT: llvm.cond_br %[[LAST]]
// CHECK: llvm.fence syncscope("device") acquire
// CHECK: llvm.store %{{[0-9]+}}, %{{[0-9]+}} {alignment = 4 : i64} : i32, !llvm.ptr<1>
// CHECK: llvm.store %{{[0-9]+}}, %{{[0-9]+}} {alignment = 4 : i64} : i32, !llvm.ptr<1>


!act = memref<?x4x64xbf16>
!cu = memref<?xi32>
!sched = memref<2xi32>
!one = !warpspec.channel<[64x64xbf16], smem>
func.func @dynamic(%q: !act {blockattn.name = "q"},
                   %cu: !cu {blockattn.name = "cu_seqlens"},
                   %schedule: !sched {blockattn.name = "schedule"}) {
  warpspec.kernel chip("sm_90a") {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tokens = memref.dim %q, %c0 : !act
    %heads = memref.dim %q, %c1 : !act
    %x = warpspec.channel "x" depth(2) : !one
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64)
          dynamic(%schedule : !sched) {
        %slot, %b = warpspec.acquire %x : !one
        warpspec.tma_load %q[%row, %head] into %b : !act, !warpspec.buffer<64x64xbf16, smem>
        warpspec.commit %slot tile(%row, %rows, %head)
      }
      warpspec.close %x : !one
    }
    warpspec.partition "sink" role(compute) warps(4) regs(40) {
      warpspec.consume %x (%slot1, %row, %rows, %head, %b) : !one {
        warpspec.release %slot1
      }
    }
  }
  return
}
