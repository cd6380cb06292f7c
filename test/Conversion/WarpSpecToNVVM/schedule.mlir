// RUN: block-attn-opt %s --pass-pipeline='builtin.module(warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --implicit-check-not=warpspec.

// Schedule.cpp's patterns, from hand-written warpspec IR: a contiguous
// tile loop whose body takes the row's position (rotary kernels), and the
// consume loop (an scf.while after warpspec-lower-protocol) that forwards
// the record's fields. lowered-protocol.mlir has the strided loop and the
// ring positions both loops carry; Channels.cpp's ops are checked there.

// The tile loop: N = (T / 64 + B) H work items, B = size(cu_seqlens) - 1;
// CTA c owns [c N / G, (c + 1) N / G), and there is work when the range is
// not empty and B > 0.
// CHECK-LABEL: llvm.func @schedule(
// CHECK-SAME: %{{.*}}: !llvm.ptr {{.*}}, %{{.*}}: i32, %[[CU:arg2]]: !llvm.ptr<1>, %[[CUSIZE:arg3]]: i32)
// CHECK: %[[BS:[0-9]+]] = llvm.mlir.constant(64 : i64) : i64
// CHECK: %[[CUSIZE64:[0-9]+]] = llvm.zext %[[CUSIZE]] : i32 to i64
// CHECK-NEXT: %[[B:[0-9]+]] = llvm.sub %[[CUSIZE64]], %{{[0-9]+}} : i64
// CHECK-NEXT: %[[TB:[0-9]+]] = llvm.udiv %{{[0-9]+}}, %[[BS]] : i64
// CHECK-NEXT: %[[V:[0-9]+]] = llvm.add %[[TB]], %[[B]] : i64
// CHECK-NEXT: %[[N:[0-9]+]] = llvm.mul %[[V]], %{{[0-9]+}} : i64
// CHECK-NEXT: %[[G32:[0-9]+]] = nvvm.read.ptx.sreg.nctaid.x : i32
// CHECK-NEXT: %[[G:[0-9]+]] = llvm.zext %[[G32]] : i32 to i64
// CHECK-NEXT: %[[C32:[0-9]+]] = nvvm.read.ptx.sreg.ctaid.x : i32
// CHECK-NEXT: %[[C:[0-9]+]] = llvm.zext %[[C32]] : i32 to i64
// CHECK-NEXT: %[[CN:[0-9]+]] = llvm.mul %[[C]], %[[N]] : i64
// CHECK-NEXT: %[[FIRST:[0-9]+]] = llvm.udiv %[[CN]], %[[G]] : i64
// CHECK-NEXT: %[[ONE:[0-9]+]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: %[[C1:[0-9]+]] = llvm.add %[[C]], %[[ONE]] : i64
// CHECK-NEXT: %[[C1N:[0-9]+]] = llvm.mul %[[C1]], %[[N]] : i64
// CHECK-NEXT: %[[LAST:[0-9]+]] = llvm.udiv %[[C1N]], %[[G]] : i64
// CHECK: %[[SEQS:[0-9]+]] = llvm.icmp "sgt" %[[B]], %{{[0-9]+}} : i64
// CHECK-NEXT: %[[RANGE:[0-9]+]] = llvm.icmp "ult" %[[FIRST]], %[[LAST]] : i64
// CHECK-NEXT: %[[WORK:[0-9]+]] = llvm.and %[[RANGE]], %[[SEQS]] : i1
// CHECK-NEXT: llvm.cond_br %[[WORK]]
// The binary search over key(b) = cu[b] / 64 + b reads cu_seqlens.
// CHECK: llvm.getelementptr %[[CU]][%{{[0-9]+}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
// A tile: row = start + j 64 (valid below the sequence's end), rows =
// min(end - row, 64), and its position row - start, as i32 block arguments.
// CHECK: %[[JBS:[0-9]+]] = llvm.mul %{{[0-9]+}}, %[[BS]] : i64
// CHECK-NEXT: %[[ROW:[0-9]+]] = llvm.add %[[START:[0-9]+]], %[[JBS]] : i64
// CHECK-NEXT: %[[VALID:[0-9]+]] = llvm.icmp "ult" %[[ROW]], %[[END:[0-9]+]] : i64
// CHECK-NEXT: llvm.cond_br %[[VALID]]
// CHECK: %[[LEFT:[0-9]+]] = llvm.sub %[[END]], %[[ROW]] : i64
// CHECK-NEXT: %[[ROWS:[0-9]+]] = llvm.intr.umin(%[[LEFT]], %[[BS]]) : (i64, i64) -> i64
// CHECK-NEXT: %[[ROW32:[0-9]+]] = llvm.trunc %[[ROW]] : i64 to i32
// CHECK-NEXT: %[[ROWS32:[0-9]+]] = llvm.trunc %[[ROWS]] : i64 to i32
// CHECK-NEXT: %[[HEAD32:[0-9]+]] = llvm.trunc %{{[0-9]+}} : i64 to i32
// CHECK-NEXT: %[[POS:[0-9]+]] = llvm.sub %[[ROW]], %[[START]] : i64
// CHECK-NEXT: %[[POS32:[0-9]+]] = llvm.trunc %[[POS]] : i64 to i32
// The ring position the loop carries, loaded where the body reads it.
// CHECK-NEXT: llvm.load %{{[0-9]+}} : !llvm.ptr -> i32
// The record the producer publishes holds (row, rows, head, position).
// CHECK: llvm.insertelement %[[ROW32]]
// CHECK: llvm.insertelement %[[ROWS32]]
// CHECK: llvm.insertelement %[[HEAD32]]
// CHECK: llvm.insertelement %[[POS32]]

// The consume loop: the condition (rows >= 0) forwards the record's fields
// and the ring position to the body as block arguments.
// CHECK: %[[REC:[0-9]+]] = llvm.load %{{[0-9]+}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// CHECK: llvm.extractelement %[[REC]]
// CHECK-NEXT: llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT: %[[RROWS:[0-9]+]] = llvm.extractelement %[[REC]][%{{[0-9]+}} : i32] : vector<4xi32>
// CHECK: %[[OPEN:[0-9]+]] = llvm.icmp "sge" %[[RROWS]], %{{[0-9]+}} : i32
// CHECK-NEXT: llvm.cond_br %[[OPEN]], ^bb{{[0-9]+}}(%{{[0-9]+}}, %[[RROWS]], %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} : i32, i32, i32, i32, i32, i32)

!act = memref<?x4x64xbf16>
!cu = memref<?xi32>
!one = !warpspec.channel<[64x64xbf16], smem>
func.func @schedule(%q: !act {blockattn.name = "q"},
                    %cu: !cu {blockattn.name = "cu_seqlens"}) {
  warpspec.kernel chip("sm_90a") {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tokens = memref.dim %q, %c0 : !act
    %heads = memref.dim %q, %c1 : !act
    %x = warpspec.channel "x" depth(2) : !one
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head, %pos) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64) contiguous {
        %slot, %b = warpspec.acquire %x : !one
        warpspec.tma_load %q[%row, %head] into %b : !act, !warpspec.buffer<64x64xbf16, smem>
        warpspec.commit %slot tile(%row, %rows, %head) position(%pos)
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
