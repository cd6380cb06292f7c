// RUN: block-attn-opt %s --pass-pipeline='builtin.module(warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s
// RUN: not block-attn-opt %s --pass-pipeline='builtin.module(warpspec-allocate-smem,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' 2>&1 | FileCheck %s --check-prefix=UNLOWERED
// RUN: not block-attn-opt %s --pass-pipeline='builtin.module(warpspec-allocate-smem,warpspec-lower-protocol,convert-warpspec-to-nvvm)' 2>&1 | FileCheck %s --check-prefix=UNPLACED

// The conversion takes the lowered protocol only, and placed partitions.
// UNLOWERED: error: 'warpspec.acquire' op is a channel-protocol op: run warpspec-lower-protocol before convert-warpspec-to-nvvm
// UNPLACED: error: 'warpspec.partition' op is not placed on warps: run warpspec-dispatch-partitions before convert-warpspec-to-nvvm

// Slot values from hand-written warpspec IR: each op that names a slot reads
// what the op that took it bound. Partition "a" consumes %x, reads the
// position of its own slot (tile_position %xs) and commits it with its slot
// of %y; partition "b" consumes %y and reads the position of its slot. This
// is issue 16's reproducer written as it must be now (each partition names
// only the slots it took); before slots were values, a tile_position of %x
// in "b" verified and then failed to lower ("operand #0 does not dominate
// this use").

// Partition "a": the record of the consumed %x slot is read after its wait;
// its fourth field (the position) travels into the loop body with the slot
// and is what the commit of the %y slot writes into that slot's record. The
// loop also carries the ring position of %y (the seventh value).
// CHECK: llvm.func @slot_positions(
// CHECK: nvvm.setmaxregister  increase 200
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: %[[REC:[0-9]+]] = llvm.load %{{[0-9]+}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// CHECK: %[[THREE:[0-9]+]] = llvm.mlir.constant(3 : i32) : i32
// CHECK-NEXT: %[[POS:[0-9]+]] = llvm.extractelement %[[REC]][%[[THREE]] : i32] : vector<4xi32>
// CHECK: llvm.cond_br %{{[0-9]+}}, ^[[BODY:bb[0-9]+]](%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %[[POS]], %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} : i32, i32, i32, i32, i32, i32, i32), ^{{bb[0-9]+}}
// CHECK-NEXT: ^[[BODY]](%[[R:[0-9]+]]: i32, %[[RS:[0-9]+]]: i32, %[[H:[0-9]+]]: i32, %[[P:[0-9]+]]: i32, %{{[0-9]+}}: i32, %{{[0-9]+}}: i32, %{{[0-9]+}}: i32):
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: llvm.insertelement %[[R]], %{{[0-9]+}}[%{{[0-9]+}} : i32] : vector<4xi32>
// CHECK: llvm.insertelement %[[RS]], %{{[0-9]+}}[%{{[0-9]+}} : i32] : vector<4xi32>
// CHECK: llvm.insertelement %[[H]], %{{[0-9]+}}[%{{[0-9]+}} : i32] : vector<4xi32>
// CHECK: %[[YREC:[0-9]+]] = llvm.insertelement %[[P]], %{{[0-9]+}}[%{{[0-9]+}} : i32] : vector<4xi32>
// CHECK-NEXT: llvm.store %[[YREC]], %{{[0-9]+}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
// CHECK: nvvm.mbarrier.arrive

// Partition "b": its own slot's record, read after its wait, gives the
// position.
// CHECK: nvvm.setmaxregister  increase 200
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: %[[BREC:[0-9]+]] = llvm.load %{{[0-9]+}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// CHECK: %[[BTHREE:[0-9]+]] = llvm.mlir.constant(3 : i32) : i32
// CHECK-NEXT: %[[BPOS:[0-9]+]] = llvm.extractelement %[[BREC]][%[[BTHREE]] : i32] : vector<4xi32>
// CHECK: llvm.cond_br %{{[0-9]+}}, ^{{bb[0-9]+}}(%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %[[BPOS]], %{{[0-9]+}}, %{{[0-9]+}} : i32, i32, i32, i32, i32, i32), ^{{bb[0-9]+}}

!act = memref<?x4x64xbf16>
!cu = memref<?xi32>
!tile = !warpspec.buffer<64x64xbf16, smem>
!one = !warpspec.channel<[64x64xbf16], smem>

func.func @slot_positions(%q: !act {blockattn.name = "q"},
                          %cu: !cu {blockattn.name = "cu_seqlens"}) {
  warpspec.kernel chip(sm_90a) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tokens = memref.dim %q, %c0 : !act
    %heads = memref.dim %q, %c1 : !act
    %x = warpspec.channel "x" depth(2) : !one
    %y = warpspec.channel "y" depth(2) : !one
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head, %p) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64) {
        %s, %b = warpspec.acquire %x : !one
        warpspec.tma_load %q[%row, %head] into %b : !act, !tile
        warpspec.commit %s tile(%row, %rows, %head) position(%p)
      }
      warpspec.close %x : !one
    }
    warpspec.partition "a" role(compute) warps(4) regs(200) {
      warpspec.consume %x (%xs, %row, %rows, %head, %xt) : !one {
        %pos = warpspec.tile_position %xs
        %ys, %yb = warpspec.acquire %y : !one
        warpspec.commit %ys tile(%row, %rows, %head) position(%pos)
        warpspec.release %xs
      }
      warpspec.close %y : !one
    }
    warpspec.partition "b" role(compute) warps(4) regs(200) {
      warpspec.consume %y (%ys, %row, %rows, %head, %yt) : !one {
        %pos = warpspec.tile_position %ys
        warpspec.rotate(%yt) into(%yt) rows(%rows) row(%row) position(%pos)
            {interleaved = false, theta = 10000.0 : f32} : !tile into !tile
        warpspec.release %ys
      }
    }
  }
  return
}
