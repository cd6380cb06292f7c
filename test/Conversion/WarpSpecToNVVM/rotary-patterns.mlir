// RUN: block-attn-opt %s --pass-pipeline='builtin.module(warpspec-allocate-smem,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --implicit-check-not=warpspec.

// Rotary.cpp's patterns, from hand-written warpspec IR: rotate (a 64x64
// bf16 shared-memory tile, half-split, from cos/sin tables [T, 32]),
// rotary_angles and rotate_tile with its angles (inverse), and rotate_tile
// with a base theta at explicit positions (interleaved).

// rotate: table rows are clamped to the smaller table (umin of the two row
// counts) and positions into [0, rows - 1]; each of the 128 threads takes
// one 16-byte unit of the first half and its partner D/2 columns on, 4
// passes of 16 rows, the tables of 2 passes loaded ahead (232 registers):
// 16-byte loads of 4 angles. The pairs turn in f32 (x c - y s, y c + x s)
// and are written back as packed bf16 units, then fenced for the async
// proxy and gathered at the replica's named barrier.
// CHECK-LABEL: llvm.func @rotary(
// CHECK: %[[TABROWS:[0-9]+]] = llvm.intr.umin(%arg5, %arg8) : (i32, i32) -> i32
// CHECK: %[[CLAMP:[0-9]+]] = llvm.intr.smin(%{{[0-9]+}}, %{{[0-9]+}}) : (i32, i32) -> i32
// CHECK: llvm.intr.smax(%[[CLAMP]], %{{[0-9]+}}) : (i32, i32) -> i32
// CHECK-COUNT-4: llvm.load %{{[0-9]+}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: llvm.intr.smin
// CHECK-COUNT-4: llvm.load %{{[0-9]+}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: %[[UNIT:[0-9]+]] = llvm.load %{{[0-9]+}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// CHECK: llvm.fpext %{{[0-9]+}} : vector<2xbf16> to vector<2xf32>
// CHECK: llvm.load %{{[0-9]+}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// CHECK: %[[YS:[0-9]+]] = llvm.fmul %{{[0-9]+}}, %{{[0-9]+}} : f32
// CHECK-NEXT: %[[XS:[0-9]+]] = llvm.fmul %{{[0-9]+}}, %{{[0-9]+}} : f32
// CHECK-NEXT: %[[NYS:[0-9]+]] = llvm.fneg %[[YS]] : f32
// CHECK-NEXT: llvm.intr.fma(%{{[0-9]+}}, %{{[0-9]+}}, %[[NYS]]) : (f32, f32, f32) -> f32
// CHECK-NEXT: llvm.intr.fma(%{{[0-9]+}}, %{{[0-9]+}}, %[[XS]]) : (f32, f32, f32) -> f32
// CHECK: llvm.fptrunc %{{[0-9]+}} : vector<2xf32> to vector<2xbf16>
// CHECK: llvm.store %{{[0-9]+}}, %{{[0-9]+}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
// CHECK: llvm.store %{{[0-9]+}}, %{{[0-9]+}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.barrier id

// rotary_angles: the register tile's pairs (wgmma accumulator layout,
// half-split: column c and c + 32) read two adjacent angles with one 8-byte
// load from each table.
// CHECK: nvvm.wgmma.mma_async
// CHECK: llvm.load %{{[0-9]+}} {alignment = 8 : i64} : !llvm.ptr<1> -> vector<2xf32>
// rotate_tile with those angles, inverse: the sines negated, then the turn
// of every row, those past `rows` too (whole rows: no select per element).
// CHECK: %[[NEG:[0-9]+]] = llvm.fneg %{{[0-9]+}} : f32
// CHECK-NEXT: llvm.fmul %{{[0-9]+}}, %[[NEG]] : f32
// CHECK-NOT: llvm.select

// rotate_tile with theta 10000 at explicit positions (interleaved): the
// position is read from the positions tensor (clamped), the angle is
// p * theta^(-2i/D) (one exp2 per pair run, then constants), reduced into
// [-pi, pi] for cos.approx/sin.approx.
// CHECK: %[[P:[0-9]+]] = llvm.load %{{[0-9]+}} {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// CHECK: llvm.uitofp %{{[0-9]+}} : i32 to f32
// CHECK: llvm.intr.exp2
// CHECK: llvm.sitofp %{{[0-9]+}} : i32 to f32
// CHECK: llvm.intr.roundeven
// CHECK: llvm.call_intrinsic "llvm.nvvm.cos.approx.f"(%[[R:[0-9]+]]) : (f32) -> f32
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.sin.approx.f"(%[[R]]) : (f32) -> f32
// CHECK-NOT: llvm.select {{.*}} : i1, f32
// rotate_tile of a part of wider rows (head dim 128, pairs 16-47 of its
// half-split rows): the rows past `rows` are returned as they were, one
// select per element against the row's index.
// CHECK: llvm.select %[[VALID:[0-9]+]], %{{[0-9]+}}, %{{[0-9]+}} : i1, f32
// CHECK-NEXT: llvm.select %[[VALID]], %{{[0-9]+}}, %{{[0-9]+}} : i1, f32
!tile = !warpspec.buffer<64x64xbf16, smem>
!tab = memref<?x32xf32>
!s = !warpspec.acc<64x64xf32>
!o = memref<?x4x64xbf16>
func.func @rotary(%o: !o {blockattn.name = "o"},
                  %cos: !tab {blockattn.name = "cos"},
                  %sin: !tab {blockattn.name = "sin"},
                  %positions: memref<?xi32> {blockattn.name = "positions"}) {
  warpspec.kernel chip("sm_90a") {
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      %a = warpspec.scratch : !tile
      %b = warpspec.scratch : !tile
      %row = arith.constant 0 : i32
      %rows = arith.constant 64 : i32
      %pos = arith.constant 5 : i32
      warpspec.rotate(%a) into(%b) rows(%rows) row(%row) position(%pos)
          cos(%cos, %sin : !tab, !tab) {interleaved = false} : !tile into !tile
      %s = warpspec.mma %a, %b {transpose_b} : !tile, !tile -> !s
      %angles = warpspec.rotary_angles rows(%rows) row(%row) position(%pos)
          cos(%cos, %sin : !tab, !tab) {interleaved = false} : !s
      %r = warpspec.rotate_tile %s rows(%rows) row(%row) position(%pos) angles(%angles : !s) {interleaved = false, inverse} : !s -> !s
      %t = warpspec.rotate_tile %s rows(%rows) row(%row) position(%pos) positions(%positions : memref<?xi32>) {interleaved = true, theta = 1.0e+04 : f32} : !s -> !s
      warpspec.store %r to %o[%row, %row] rows(%rows) : !s, !o
      warpspec.store %t to %o[%row, %row] rows(%rows) : !s, !o
      %part = warpspec.rotate_tile %s rows(%rows) row(%row) position(%pos) {interleaved = false, theta = 1.0e+04 : f32, head_dim = 128 : i64, pair_offset = 16 : i64} : !s -> !s
      warpspec.store %part to %o[%row, %row] rows(%rows) : !s, !o
    }
  }
  return
}
