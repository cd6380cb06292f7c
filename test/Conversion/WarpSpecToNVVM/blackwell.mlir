// RUN: block-attn-opt %s --pass-pipeline='builtin.module(warpspec-allocate-tmem,warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --implicit-check-not=warpspec. --implicit-check-not=nvvm.wgmma

// Blackwell.cpp's patterns, from hand-written warpspec IR (the protocol
// written with acquire/commit/get/release, lowered by the passes before the
// conversion): the tensor-memory allocation and its teardown, mma_async,
// tmem_load and tmem_store on sm_100a. Rings "s" (64x64 f32) and "p"
// (64x64 bf16) live in tensor memory, "kv" in shared memory; the tensor-
// memory address slot is at byte 8352, the teardown barrier at 8360.

// The prologue: warp 0 allocates 128 columns into the address slot and
// gives up the right to allocate more; every thread reads the address after
// the CTA barrier, between tcgen05 fences.
// CHECK-LABEL: llvm.func @blackwell(
// CHECK: nvvm.fence.mbarrier.init
// CHECK: %[[WARP0:[0-9]+]] = llvm.icmp "eq" %{{[0-9]+}}, %{{[0-9]+}} : i32
// CHECK-NEXT: llvm.cond_br %[[WARP0]]
// CHECK: %[[SLOT:[0-9]+]] = llvm.getelementptr
// CHECK-NEXT: %[[COLS:[0-9]+]] = llvm.mlir.constant(128 : i32) : i32
// CHECK-NEXT: nvvm.tcgen05.alloc %[[SLOT]], %[[COLS]] : !llvm.ptr<3>, i32
// CHECK-NEXT: nvvm.tcgen05.relinquish_alloc_permit
// CHECK: nvvm.tcgen05.fence <before>
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK-NEXT: llvm.mlir.constant(8352 : i32) : i32
// CHECK: %[[TMEM:[0-9]+]] = llvm.load %{{[0-9]+}} {alignment = 4 : i64} : !llvm.ptr<3> -> i32

// The load partition (warps 0-3) deallocates at the end: warp 0 waits for
// the teardown barrier (phase 0) and frees the columns.
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: llvm.mlir.constant(8360 : i32) : i32
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK-NEXT: %[[BASE:[0-9]+]] = llvm.inttoptr %[[TMEM]] : i32 to !llvm.ptr<6>
// CHECK-NEXT: %[[COLS2:[0-9]+]] = llvm.mlir.constant(128 : i32) : i32
// CHECK-NEXT: nvvm.tcgen05.dealloc %[[BASE]], %[[COLS2]] : !llvm.ptr<6>, i32

// mma_async: D is slot s's address (lane 16 for slot 1: 1 << 20), A and B
// shared-memory descriptors (K-major, the tcgen05 fixed bits), the
// instruction descriptor 68158608 (M = 64, N = 64, bf16 x bf16 -> f32, B
// transposed), 4 steps of K = 16, the first overwriting D.
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: %[[LANE16:[0-9]+]] = llvm.mlir.constant(1048576 : i32) : i32
// CHECK: %[[SLOTADDR:[0-9]+]] = llvm.select %{{[0-9]+}}, %{{[0-9]+}}, %[[LANE16]] : i1, i32
// CHECK: %[[DADDR0:[0-9]+]] = llvm.add %[[TMEM]], %[[SLOTADDR]] : i32
// CHECK-NEXT: %[[DADDR:[0-9]+]] = llvm.add %[[DADDR0]], %{{[0-9]+}} : i32
// CHECK: %[[D:[0-9]+]] = llvm.inttoptr %[[DADDR]] : i32 to !llvm.ptr<6>
// CHECK-NEXT: %[[IDESC:[0-9]+]] = llvm.mlir.constant(68158608 : i32) : i32
// CHECK: llvm.mlir.constant(4611756662049538048 : i64) : i64
// CHECK: %[[FIRST:[0-9]+]] = llvm.mlir.constant(false) : i1
// CHECK-NEXT: nvvm.tcgen05.mma %[[D]], %{{[0-9]+}}, %{{[0-9]+}}, %[[IDESC]], %[[FIRST]] {ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<f16>} : (!llvm.ptr<6>, i64, i64, i32, i1)
// CHECK-COUNT-3: nvvm.tcgen05.mma %[[D]], %{{[0-9]+}}, %{{[0-9]+}}, %[[IDESC]], %{{[0-9]+}} {ctaGroup
// The MMA partition publishes s: the record's arrival, then tcgen05.commit
// on the same full barrier.
// CHECK: nvvm.mbarrier.arrive %[[FULL:[0-9]+]] : !llvm.ptr<3>
// CHECK-NEXT: nvvm.tcgen05.commit %[[FULL]] : !llvm.ptr<3>

// tmem_load: warp q of the warpgroup reads lanes 32q.. (((thread >> 5) & 3)
// * 32) << 16), shape 16x256b, waited for; the 32 registers are f32.
// CHECK: nvvm.setmaxregister  increase 216
// CHECK: %[[LANES:[0-9]+]] = llvm.shl %{{[0-9]+}}, %{{[0-9]+}} : i32
// CHECK-NEXT: %[[SADDR:[0-9]+]] = llvm.add %{{[0-9]+}}, %[[LANES]] : i32
// CHECK-NEXT: %[[SPTR:[0-9]+]] = llvm.inttoptr %[[SADDR]] : i32 to !llvm.ptr<6>
// CHECK-NEXT: %[[LOADED:[0-9]+]] = nvvm.tcgen05.ld %[[SPTR]] {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>} : vector<32xi32>
// CHECK-NEXT: nvvm.tcgen05.wait <load>
// CHECK: llvm.extractelement %[[LOADED]][%{{[0-9]+}} : i32] : vector<32xi32>
// CHECK-NEXT: llvm.bitcast %{{[0-9]+}} : i32 to f32
// Releasing s orders the loads before the replica barrier.
// CHECK: nvvm.tcgen05.fence <before>
// CHECK-NEXT: llvm.mlir.constant
// CHECK-NEXT: llvm.add
// CHECK-NEXT: llvm.mlir.constant(128 : i32) : i32
// CHECK-NEXT: nvvm.barrier

// tmem_store: P's 16 packed pairs, shape 16x128b, at P's slot plus the
// warp's lanes; the store is waited for before the commit's barrier.
// CHECK-COUNT-15: llvm.insertelement {{.*}} : vector<16xi32>
// CHECK: %[[PACKED:[0-9]+]] = llvm.insertelement {{.*}} : vector<16xi32>
// CHECK: %[[PPTR:[0-9]+]] = llvm.inttoptr %{{[0-9]+}} : i32 to !llvm.ptr<6>
// CHECK-NEXT: nvvm.tcgen05.st %[[PPTR]], %[[PACKED]] {shape = #nvvm.tcgen05_ldst_shape<shape_16x128b>} : vector<16xi32>
// CHECK-NEXT: nvvm.tcgen05.wait <store>
// CHECK-NEXT: nvvm.tcgen05.fence <before>
!tile = !warpspec.buffer<64x64xbf16, smem>
!sring = !warpspec.channel<[64x64xf32], tmem>
!pring = !warpspec.channel<[64x64xbf16], tmem>
func.func @blackwell(%scale: f32 {blockattn.name = "scale"}) {
  warpspec.kernel chip("sm_100a") {
    %i = arith.constant 0 : i32
    %s = warpspec.channel "s" depth(2) : !sring
    %p = warpspec.channel "p" depth(2) : !pring
    %kv = warpspec.channel "kv" depth(1) : !warpspec.channel<[64x64xbf16], smem>
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %kv_slot, %kb = warpspec.acquire %kv : !warpspec.channel<[64x64xbf16], smem>
      warpspec.commit %kv_slot tile(%i, %i, %i)
    }
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      %kv_slot1, %a = warpspec.get %kv : !warpspec.channel<[64x64xbf16], smem>
      %s_slot, %sb = warpspec.acquire %s : !sring
      warpspec.mma_async %a, %a into %sb {transpose_b}
          : !tile, !tile, !warpspec.buffer<64x64xf32, tmem>
      warpspec.commit %s_slot tile(%i, %i, %i)
      %p_slot, %pb = warpspec.get %p : !pring
      warpspec.release %p_slot after_mma
      warpspec.release %kv_slot1 after_mma
    }
    warpspec.partition "softmax" role(softmax) warps(4) regs(216) {
      %s_slot1, %sslot = warpspec.get %s : !sring
      %sv = warpspec.tmem_load %sslot
          : !warpspec.buffer<64x64xf32, tmem> -> !warpspec.acc<64x64xf32>
      warpspec.release %s_slot1
      %pr, %l = warpspec.softmax %sv valid_cols(%i) scale(%scale)
          : !warpspec.acc<64x64xf32>
          -> !warpspec.acc<64x64xbf16>, !warpspec.rows<64xf32>
      %p_slot1, %pslot = warpspec.acquire %p : !pring
      warpspec.tmem_store %pr, %pslot
          : !warpspec.acc<64x64xbf16>, !warpspec.buffer<64x64xbf16, tmem>
      warpspec.commit %p_slot1 tile(%i, %i, %i)
    }
  }
  return
}
