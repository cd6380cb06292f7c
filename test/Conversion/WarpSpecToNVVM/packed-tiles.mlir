// RUN: block-attn-opt %s | FileCheck %s --check-prefix=ROUND
// RUN: block-attn-opt %s --pass-pipeline='builtin.module(warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --implicit-check-not=warpspec.

// Tiny sequences packed (docs/block-sizes.md): `tile_loop ... packed(4)`
// at block_size(16) deals tiles of 4 virtual blocks, ceil(V / 4) H work
// items with V = T / 16 + B; the body's fourth argument is the tile's block
// ends (byte q: where the block of virtual number 4 t + q ends), committed
// in the record's position field; `mask_blocks` masks the scores of a
// consumer to each row's block, [lo, hi) from those ends.

!act = memref<?x?x64xbf16>
!cu = memref<?xi32>
!tile = !warpspec.buffer<64x64xbf16, smem>
!one = !warpspec.channel<[64x64xbf16], smem>
!s = !warpspec.acc<64x64xf32>
!p = !warpspec.acc<64x64xbf16>

// ROUND-LABEL: func.func @packed
// ROUND: warpspec.tile_loop (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) in %{{.*}} : memref<?xi32> heads(%{{.*}}) tokens(%{{.*}}) block_size(16) packed(4) {
// ROUND: warpspec.mask_blocks %{{.*}} ends(%{{.*}}) block(16) : <64x64xf32>

// The work items: ceil((T / 16 + B) / 4) per head; the walk is 32-bit
// (it runs in the load warpgroup's 40 registers), the items 64-bit.
// CHECK-LABEL: llvm.func @packed(
// CHECK: %[[BS:[0-9]+]] = llvm.mlir.constant(16 : i32) : i32
// CHECK-NEXT: %[[K:[0-9]+]] = llvm.mlir.constant(4 : i32) : i32
// CHECK: %[[TB:[0-9]+]] = llvm.udiv %{{[0-9]+}}, %[[BS]] : i32
// CHECK-NEXT: %[[V:[0-9]+]] = llvm.add %[[TB]], %{{[0-9]+}} : i32
// CHECK-NEXT: %[[K1:[0-9]+]] = llvm.mlir.constant(3 : i32) : i32
// CHECK-NEXT: %[[VK:[0-9]+]] = llvm.add %[[V]], %[[K1]] : i32
// CHECK-NEXT: %[[TILES:[0-9]+]] = llvm.udiv %[[VK]], %[[K]] : i32
// CHECK-NEXT: %[[TILES64:[0-9]+]] = llvm.zext %[[TILES]] : i32 to i64
// CHECK-NEXT: llvm.mul %[[TILES64]], %{{[0-9]+}} : i64
// The CTA's first sequence: a search in four-way rounds, three probes of
// cu_seqlens a round (independent loads), then the new bounds.
// CHECK-COUNT-3: llvm.icmp "ule"
// CHECK: llvm.intr.umin
// The first block start S(4 t), then the ends S(4 t + q + 1) - S(4 t),
// each min(start + j 16, end) of its sequence, shifted into byte q.
// CHECK: %[[S:[0-9]+]] = llvm.intr.umin
// CHECK: llvm.intr.umin
// CHECK-NEXT: %[[E0:[0-9]+]] = llvm.sub %{{[0-9]+}}, %[[S]] : i32
// CHECK-NEXT: %[[S0:[0-9]+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: llvm.shl %[[E0]], %[[S0]] : i32
// CHECK: %[[S8:[0-9]+]] = llvm.mlir.constant(8 : i32) : i32
// CHECK-NEXT: llvm.shl %{{[0-9]+}}, %[[S8]] : i32
// CHECK: %[[S16:[0-9]+]] = llvm.mlir.constant(16 : i32) : i32
// CHECK-NEXT: llvm.shl %{{[0-9]+}}, %[[S16]] : i32
// CHECK: %[[ROWS:[0-9]+]] = llvm.sub %{{[0-9]+}}, %[[S]] : i32
// CHECK-NEXT: %[[S24:[0-9]+]] = llvm.mlir.constant(24 : i32) : i32
// CHECK-NEXT: llvm.shl %[[ROWS]], %[[S24]] : i32
// CHECK-NEXT: %[[ENDS:[0-9]+]] = llvm.or %{{[0-9]+}}, %{{[0-9]+}} : i32
// A tile whose numbers name no block (rows 0) is skipped.
// CHECK-NEXT: %[[Z:[0-9]+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %[[ANY:[0-9]+]] = llvm.icmp "ugt" %[[ROWS]], %[[Z]] : i32
// CHECK-NEXT: llvm.cond_br %[[ANY]]
// The record's fourth field is the ends.
// CHECK: llvm.insertelement %[[ROWS]], %{{[0-9]+}}[%{{[0-9]+}} : i32] : vector<4xi32>
// CHECK: %[[REC:[0-9]+]] = llvm.mlir.constant(3 : i32) : i32
// CHECK-NEXT: %{{[0-9]+}} = llvm.insertelement %[[ENDS]], %{{[0-9]+}}[%[[REC]] : i32] : vector<4xi32>

// The consumer: the ends (byte q), the row clamped below the last, its
// block's [lo, hi) from the ends at or below it and above it, two compares
// and an and per element.
// CHECK: %[[FF:[0-9]+]] = llvm.mlir.constant(255 : i32) : i32
// CHECK-NEXT: %[[Q0:[0-9]+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: llvm.lshr %{{[0-9]+}}, %[[Q0]] : i32
// CHECK-NEXT: llvm.and %{{[0-9]+}}, %[[FF]] : i32
// CHECK: llvm.intr.smin
// CHECK: llvm.icmp "sle"
// CHECK: llvm.intr.smax
// CHECK: llvm.intr.smin
// CHECK: %[[NEGINF:[0-9]+]] = llvm.mlir.constant(0xFF800000 : f32) : f32
// CHECK: %[[GE:[0-9]+]] = llvm.icmp "sge" %{{[0-9]+}}, %{{[0-9]+}} : i32
// CHECK-NEXT: %[[LT:[0-9]+]] = llvm.icmp "slt" %{{[0-9]+}}, %{{[0-9]+}} : i32
// CHECK-NEXT: %[[KEEP:[0-9]+]] = llvm.and %[[GE]], %[[LT]] : i1
// CHECK-NEXT: llvm.select %[[KEEP]], %{{[0-9]+}}, %[[NEGINF]] : i1, f32
func.func @packed(%q: !act {blockattn.name = "q"},
                  %cu: !cu {blockattn.name = "cu_seqlens"},
                  %scale: f32 {blockattn.name = "scale"}) {
  warpspec.kernel chip("sm_90a") {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tokens = memref.dim %q, %c0 : !act
    %heads = memref.dim %q, %c1 : !act
    %x = warpspec.channel "x" depth(2) : !one
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head, %ends) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(16) packed(4) {
        %slot, %b = warpspec.acquire %x : !one
        warpspec.tma_load %q[%row, %head] into %b : !act, !tile
        warpspec.commit %slot tile(%row, %rows, %head) position(%ends)
      }
      warpspec.close %x : !one
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      %pbuf = warpspec.scratch : !tile
      warpspec.consume %x (%slot1, %row, %rows, %head, %b) : !one {
        %ends = warpspec.tile_position %slot1
        %s = warpspec.mma %b, %b {transpose_b} : !tile, !tile -> !s
        %m = warpspec.mask_blocks %s ends(%ends) block(16) : !s
        %p, %l = warpspec.softmax %m valid_cols(%rows) scale(%scale)
            : !s -> !p, !warpspec.rows<64xf32>
        warpspec.write %p, %pbuf : !p, !tile
        warpspec.release %slot1
      }
    }
  }
  return
}
