// RUN: block-attn-opt %s --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_90a rotary-warpgroup=off}),warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --check-prefix=HOPPER --implicit-check-not=warpspec.
// RUN: block-attn-opt %s --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_100a}),warpspec-allocate-tmem,warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --check-prefix=BLACKWELL --implicit-check-not=warpspec.

// convert-warpspec-to-nvvm on kernels with fused rotary embeddings (bf16,
// head_dim 128), after blockattn-warp-specialize and the allocation passes:
// lib/Conversion/WarpSpecToNVVM/Rotary.cpp and the parameters Abi.cpp adds.
//
// - The tables are kernel parameters: base pointer (global), row stride
//   (i64) and row count (i32) of cos, then of sin; explicit positions are a
//   pointer and a length. The manifest lists them in that order.
// - A position comes from the slot's record (its fourth i32), or from
//   positions[row + r] with the token clamped below the positions' length
//   (llvm.intr.umin); it is then clamped into the table: smin with the
//   smaller table's last row, smax with 0 (theta: only the smax).
// - Angles: 16-byte ld.global of 4 table entries (rotate), or single f32
//   loads (rotate_tile); with theta, one exp2 of the pair base times
//   -2 log2(theta) / D, then per pair a Cody-Waite reduction (roundeven,
//   two fma) and the sin.approx / cos.approx intrinsics.
// - The tile: 16-byte shared loads and stores (vector<4xi32>) of 8 bf16
//   each, unpacked to f32 and rounded once; then a proxy fence (generic to
//   async proxy, shared::cta) and a named barrier over the replica (id 2 +
//   replica, its 128 threads) before the tensor cores read the tile.
// - rotate_tile {inverse} negates the sines.

!act = memref<?x4x128xbf16>
!cu = memref<?xi32>
!tab = memref<?x64xf32>

//===----------------------------------------------------------------------===//
// Forward, half-split tables
//===----------------------------------------------------------------------===//

// HOPPER-LABEL: llvm.func @forward_tables(
// HOPPER-SAME: %[[COS:arg[0-9]+]]: !llvm.ptr<1>, %[[COSSTRIDE:arg[0-9]+]]: i64, %[[COSROWS:arg[0-9]+]]: i32, %[[SIN:arg[0-9]+]]: !llvm.ptr<1>, %{{arg[0-9]+}}: i64, %[[SINROWS:arg[0-9]+]]: i32, %{{arg[0-9]+}}: !llvm.ptr<1>, %{{arg[0-9]+}}: i32)
// HOPPER-SAME: {dtype = "i32", kind = "pointer", name = "cu_seqlens", tensor = "cu_seqlens", value = "base"}, {dim = 0 : i64, kind = "i32", name = "cu_seqlens_size0", tensor = "cu_seqlens", value = "size"},
// HOPPER-SAME: {dtype = "f32", kind = "pointer", name = "cos", tensor = "cos", value = "base"}, {dim = 0 : i64, kind = "i64", name = "cos_stride0", tensor = "cos", value = "stride"}, {dim = 0 : i64, kind = "i32", name = "cos_size0", tensor = "cos", value = "size"},
// HOPPER-SAME: {dtype = "f32", kind = "pointer", name = "sin", tensor = "sin", value = "base"}, {dim = 0 : i64, kind = "i64", name = "sin_stride0", tensor = "sin", value = "stride"}, {dim = 0 : i64, kind = "i32", name = "sin_size0", tensor = "sin", value = "size"}, {dtype = "i32", kind = "pointer", name = "schedule", tensor = "schedule", value = "base"}, {dim = 0 : i64, kind = "i32", name = "schedule_size0", tensor = "schedule", value = "size"}],
// HOPPER-SAME: rotary = "half_split"
// The compute replica's index, from its warp.
// HOPPER: nvvm.setmaxregister  increase 232
// HOPPER-NEXT: %[[C4:.*]] = llvm.mlir.constant(4 : i32) : i32
// HOPPER-NEXT: %[[WG:.*]] = llvm.sub %{{.*}}, %[[C4]] : i32
// HOPPER-NEXT: %{{.*}} = llvm.mlir.constant(4 : i32) : i32
// HOPPER-NEXT: %[[REPLICA:.*]] = llvm.udiv %[[WG]], %{{.*}} : i32
// The slot's record: row, rows, head, position.
// HOPPER: %[[REC:.*]] = llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// HOPPER: %[[C3:.*]] = llvm.mlir.constant(3 : i32) : i32
// HOPPER-NEXT: %[[RECPOS:.*]] = llvm.extractelement %[[REC]][%[[C3]] : i32] : vector<4xi32>
// HOPPER: llvm.cond_br %{{.*}}, ^bb{{[0-9]+}}(%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %[[RECPOS]], %{{[0-9]+}}, %{{[0-9]+}} : i32, i32, i32, i32, i32, i32), ^bb
// HOPPER-NEXT: ^bb{{[0-9]+}}(%{{[0-9]+}}: i32, %{{[0-9]+}}: i32, %{{[0-9]+}}: i32, %[[POS:[0-9]+]]: i32, %{{[0-9]+}}: i32, %{{[0-9]+}}: i32):
// Neither table is read past its end.
// HOPPER: %[[TABROWS:.*]] = llvm.intr.umin(%[[COSROWS]], %[[SINROWS]]) : (i32, i32) -> i32
// The 128-byte swizzle of the 16-byte units.
// HOPPER: llvm.xor
// The position of row r, clamped.
// HOPPER: %[[P:.*]] = llvm.add %[[POS]], %{{[0-9]+}} : i32
// HOPPER-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// HOPPER-NEXT: %[[LAST:.*]] = llvm.sub %[[TABROWS]], %[[ONE]] : i32
// HOPPER-NEXT: %[[PMIN:.*]] = llvm.intr.smin(%[[P]], %[[LAST]]) : (i32, i32) -> i32
// HOPPER-NEXT: %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i32
// HOPPER-NEXT: %[[PCLAMP:.*]] = llvm.intr.smax(%[[PMIN]], %[[ZERO]]) : (i32, i32) -> i32
// HOPPER-NEXT: %[[PAIR:.*]] = llvm.zext %{{.*}} : i32 to i64
// HOPPER-NEXT: %[[P64:.*]] = llvm.zext %[[PCLAMP]] : i32 to i64
// HOPPER-NEXT: %[[ROWOFF:.*]] = llvm.mul %[[P64]], %[[COSSTRIDE]] : i64
// HOPPER-NEXT: %[[ELEM:.*]] = llvm.add %[[ROWOFF]], %[[PAIR]] : i64
// HOPPER-NEXT: llvm.getelementptr %[[COS]][%[[ELEM]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// HOPPER: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// HOPPER: llvm.getelementptr %[[SIN]][%[[ELEM]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// HOPPER: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// A unit of q and its partner D/2 columns on, in f32, turned, rounded once.
// HOPPER: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// HOPPER: llvm.fpext %{{.*}} : vector<2xbf16> to vector<2xf32>
// HOPPER: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// HOPPER: llvm.intr.fma
// HOPPER: llvm.fptrunc %{{.*}} : vector<2xf32> to vector<2xbf16>
// HOPPER: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
// The tensor cores see the rotated tiles: fence, then the replica's barrier.
// HOPPER: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// HOPPER-NEXT: %[[BASE:.*]] = llvm.mlir.constant(2 : i32) : i32
// HOPPER-NEXT: %[[ID:.*]] = llvm.add %[[BASE]], %[[REPLICA]] : i32
// HOPPER-NEXT: %[[N:.*]] = llvm.mlir.constant(128 : i32) : i32
// HOPPER-NEXT: nvvm.barrier id = %[[ID]] number_of_threads = %[[N]]
// Only then S = Q K^T.
// HOPPER-NOT: llvm.store %{{.*}} : vector<4xi32>, !llvm.ptr<3>
// HOPPER: nvvm.wgmma.fence.aligned
// HOPPER: nvvm.wgmma.mma_async

// Blackwell: the load warpgroup keeps 48 registers; the rotary warpgroup (the
// second one: 56 registers) reads the record of the load ring's slot and
// writes the rotated tiles into the "rotated" ring, then fences and gathers
// its 128 threads.
// BLACKWELL-LABEL: llvm.func @forward_tables(
// BLACKWELL-SAME: %[[COS:arg[0-9]+]]: !llvm.ptr<1>, %{{arg[0-9]+}}: i64, %[[COSROWS:arg[0-9]+]]: i32, %[[SIN:arg[0-9]+]]: !llvm.ptr<1>, %{{arg[0-9]+}}: i64, %[[SINROWS:arg[0-9]+]]: i32)
// BLACKWELL-SAME: name = "cos_size0"
// BLACKWELL-SAME: name = "sin_size0"
// BLACKWELL-SAME: partitions = [{name = "load", registers = 48 : i64, replicas = 1 : i64, role = "load", warps = 4 : i64}, {name = "rotary", registers = 56 : i64, replicas = 1 : i64, role = "rotary", warps = 4 : i64}, {name = "mma", registers = 56 : i64, replicas = 1 : i64, role = "mma", warps = 4 : i64}, {name = "softmax", registers = 160 : i64, replicas = 2 : i64, role = "softmax", warps = 4 : i64}]
// BLACKWELL-SAME: threads = 640 : i64
// BLACKWELL: nvvm.setmaxregister  decrease 48
// BLACKWELL: nvvm.setmaxregister  decrease 56
// BLACKWELL-NEXT: %[[C4:.*]] = llvm.mlir.constant(4 : i32) : i32
// BLACKWELL-NEXT: %[[WG:.*]] = llvm.sub %{{.*}}, %[[C4]] : i32
// BLACKWELL-NEXT: %{{.*}} = llvm.mlir.constant(4 : i32) : i32
// BLACKWELL-NEXT: %[[REPLICA:.*]] = llvm.udiv %[[WG]], %{{.*}} : i32
// BLACKWELL: %[[REC:.*]] = llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// BLACKWELL: %[[C3:.*]] = llvm.mlir.constant(3 : i32) : i32
// BLACKWELL-NEXT: %[[RECPOS:.*]] = llvm.extractelement %[[REC]][%[[C3]] : i32] : vector<4xi32>
// The loop also carries the ring position of the rotated ring (the seventh
// value).
// BLACKWELL: llvm.cond_br %{{.*}}, ^bb{{[0-9]+}}(%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %[[RECPOS]], %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} : i32, i32, i32, i32, i32, i32, i32), ^bb
// BLACKWELL-NEXT: ^bb{{[0-9]+}}(%{{[0-9]+}}: i32, %{{[0-9]+}}: i32, %{{[0-9]+}}: i32, %[[POS:[0-9]+]]: i32, %{{[0-9]+}}: i32, %{{[0-9]+}}: i32, %{{[0-9]+}}: i32):
// A free slot of the rotated ring.
// BLACKWELL: nvvm.mbarrier.try_wait.parity
// BLACKWELL: %[[TABROWS:.*]] = llvm.intr.umin(%[[COSROWS]], %[[SINROWS]]) : (i32, i32) -> i32
// BLACKWELL: %[[P:.*]] = llvm.add %[[POS]], %{{[0-9]+}} : i32
// BLACKWELL-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// BLACKWELL-NEXT: %[[LAST:.*]] = llvm.sub %[[TABROWS]], %[[ONE]] : i32
// BLACKWELL-NEXT: %[[PMIN:.*]] = llvm.intr.smin(%[[P]], %[[LAST]]) : (i32, i32) -> i32
// BLACKWELL-NEXT: %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i32
// BLACKWELL-NEXT: llvm.intr.smax(%[[PMIN]], %[[ZERO]]) : (i32, i32) -> i32
// BLACKWELL: llvm.getelementptr %[[COS]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// BLACKWELL: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// BLACKWELL: llvm.getelementptr %[[SIN]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// BLACKWELL: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// BLACKWELL: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// BLACKWELL: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
// BLACKWELL: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// BLACKWELL-NEXT: %[[BASE:.*]] = llvm.mlir.constant(2 : i32) : i32
// BLACKWELL-NEXT: %[[ID:.*]] = llvm.add %[[BASE]], %[[REPLICA]] : i32
// BLACKWELL-NEXT: %[[N:.*]] = llvm.mlir.constant(128 : i32) : i32
// BLACKWELL-NEXT: nvvm.barrier id = %[[ID]] number_of_threads = %[[N]]
// The slot of the rotated ring is published (arrive on its full barrier).
// BLACKWELL: nvvm.mbarrier.arrive
// The MMA warpgroup, then its MMAs.
// BLACKWELL: nvvm.setmaxregister  decrease 56
// BLACKWELL: nvvm.tcgen05.mma
// BLACKWELL: nvvm.setmaxregister  increase 160
func.func @forward_tables(%q: !act, %k: !act, %v: !act, %o: !act, %cu: !cu,
                          %cos: !tab, %sin: !tab) {
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : !cu) rotary(%cos, %sin : !tab, !tab)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}

//===----------------------------------------------------------------------===//
// Forward, interleaved, theta, explicit positions
//===----------------------------------------------------------------------===//

// No tables: the positions are the last parameters, the angles come from
// theta = 10000 (c = -2 log2(10000) / 128 = -0.20762..., and the second pair
// of a run turns 2^c = 0.86596... as fast as the first).
// HOPPER-LABEL: llvm.func @forward_theta_positions(
// HOPPER-SAME: %[[POSITIONS:arg[0-9]+]]: !llvm.ptr<1>, %[[NPOS:arg[0-9]+]]: i32, %{{arg[0-9]+}}: !llvm.ptr<1>, %{{arg[0-9]+}}: i32)
// HOPPER-NOT: name = "cos"
// HOPPER-SAME: {dtype = "i32", kind = "pointer", name = "positions", tensor = "positions", value = "base"}, {dim = 0 : i64, kind = "i32", name = "positions_size0", tensor = "positions", value = "size"}, {dtype = "i32", kind = "pointer", name = "schedule", tensor = "schedule", value = "base"}, {dim = 0 : i64, kind = "i32", name = "schedule_size0", tensor = "schedule", value = "size"}],
// HOPPER-SAME: rotary = "interleaved"
// HOPPER: nvvm.setmaxregister  increase 232
// HOPPER: llvm.cond_br %{{.*}}, ^bb{{[0-9]+}}(%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} : i32, i32, i32, i32, i32, i32), ^bb
// HOPPER-NEXT: ^bb{{[0-9]+}}(%[[ROW:[0-9]+]]: i32,
// No table, so no row count to bound the positions by.
// HOPPER-NOT: llvm.intr.umin
// The token of row r, clamped into the positions, and its position.
// HOPPER: %[[TOK:.*]] = llvm.add %[[ROW]], %{{[0-9]+}} : i32
// HOPPER-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// HOPPER-NEXT: %[[LASTTOK:.*]] = llvm.sub %[[NPOS]], %[[ONE]] : i32
// HOPPER-NEXT: %[[TOKC:.*]] = llvm.intr.umin(%[[TOK]], %[[LASTTOK]]) : (i32, i32) -> i32
// HOPPER-NEXT: %[[PPTR:.*]] = llvm.getelementptr %[[POSITIONS]][%[[TOKC]]] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
// HOPPER-NEXT: %[[P:.*]] = llvm.load %[[PPTR]] {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// HOPPER-NEXT: %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i32
// HOPPER-NEXT: %[[PCLAMP:.*]] = llvm.intr.smax(%[[P]], %[[ZERO]]) : (i32, i32) -> i32
// One exp2 for the run of pairs.
// HOPPER-NEXT: %[[C:.*]] = llvm.mlir.constant(-0.207620502 : f32) : f32
// HOPPER-NEXT: %[[BASEF:.*]] = llvm.uitofp %{{.*}} : i32 to f32
// HOPPER-NEXT: %[[EXPO:.*]] = llvm.fmul %[[BASEF]], %[[C]] : f32
// HOPPER-NEXT: %[[FREQ:.*]] = llvm.intr.exp2(%[[EXPO]]) : (f32) -> f32
// HOPPER-NEXT: %[[PF:.*]] = llvm.sitofp %[[PCLAMP]] : i32 to f32
// HOPPER-NEXT: %[[SCALED:.*]] = llvm.fmul %[[PF]], %[[FREQ]] : f32
// Pair 0: reduced into [-pi, pi], then the approximate cosine and sine.
// HOPPER-NEXT: %{{.*}} = llvm.mlir.constant(1.000000e+00 : f32) : f32
// HOPPER-NEXT: %[[A0:.*]] = llvm.fmul %[[SCALED]], %{{.*}} : f32
// HOPPER-NEXT: %{{.*}} = llvm.mlir.constant(0.159154937 : f32) : f32
// HOPPER-NEXT: %[[TURNS:.*]] = llvm.fmul %[[A0]], %{{.*}} : f32
// HOPPER-NEXT: %[[K:.*]] = llvm.intr.roundeven(%[[TURNS]]) : (f32) -> f32
// HOPPER-NEXT: %[[NEGK:.*]] = llvm.fneg %[[K]] : f32
// HOPPER-NEXT: %{{.*}} = llvm.mlir.constant(6.28318548 : f32) : f32
// HOPPER-NEXT: %[[RED1:.*]] = llvm.intr.fma(%[[NEGK]], %{{.*}}, %[[A0]]) : (f32, f32, f32) -> f32
// HOPPER-NEXT: %{{.*}} = llvm.mlir.constant(-1.74845553E-7 : f32) : f32
// HOPPER-NEXT: %[[RED2:.*]] = llvm.intr.fma(%[[NEGK]], %{{.*}}, %[[RED1]]) : (f32, f32, f32) -> f32
// HOPPER-NEXT: llvm.call_intrinsic "llvm.nvvm.cos.approx.f"(%[[RED2]]) : (f32) -> f32
// HOPPER-NEXT: llvm.call_intrinsic "llvm.nvvm.sin.approx.f"(%[[RED2]]) : (f32) -> f32
// Pair 1.
// HOPPER-NEXT: %{{.*}} = llvm.mlir.constant(0.865964353 : f32) : f32
// HOPPER-NEXT: llvm.fmul %[[SCALED]], %{{.*}} : f32
// HOPPER: llvm.call_intrinsic "llvm.nvvm.cos.approx.f"
// HOPPER-NOT: llvm.getelementptr %{{.*}} -> !llvm.ptr<1>, f32
// HOPPER: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// HOPPER: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
// HOPPER: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// HOPPER-NEXT: llvm.mlir.constant(2 : i32)
// HOPPER-NEXT: llvm.add
// HOPPER-NEXT: llvm.mlir.constant(128 : i32)
// HOPPER-NEXT: nvvm.barrier id

// BLACKWELL-LABEL: llvm.func @forward_theta_positions(
// BLACKWELL-SAME: %[[POSITIONS:arg[0-9]+]]: !llvm.ptr<1>, %[[NPOS:arg[0-9]+]]: i32)
// BLACKWELL-NOT: name = "cos"
// BLACKWELL-SAME: name = "positions_size0"
// BLACKWELL: nvvm.setmaxregister  decrease 56
// BLACKWELL: %[[TOKC:.*]] = llvm.intr.umin(%{{.*}}, %{{.*}}) : (i32, i32) -> i32
// BLACKWELL-NEXT: llvm.getelementptr %[[POSITIONS]][%[[TOKC]]] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
// BLACKWELL: llvm.intr.exp2
// BLACKWELL: llvm.call_intrinsic "llvm.nvvm.cos.approx.f"
// BLACKWELL: llvm.call_intrinsic "llvm.nvvm.sin.approx.f"
// BLACKWELL: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// BLACKWELL: nvvm.setmaxregister  decrease 56
func.func @forward_theta_positions(%q: !act, %k: !act, %v: !act, %o: !act,
                                   %cu: !cu, %pos: memref<?xi32>) {
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : !cu) positions(%pos : memref<?xi32>)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<interleaved>, rotary_theta = 10000.0 : f32}
  return
}

//===----------------------------------------------------------------------===//
// Backward, half-split tables
//===----------------------------------------------------------------------===//

// dK and dQ are turned back in registers (rotate_tile {inverse}): one f32
// entry of each table per register pair, the sine negated, then the
// rotation, of every row (whole rows: the rows past the tile are turned too,
// no select).
// HOPPER-LABEL: llvm.func @backward_tables(
// HOPPER-SAME: %[[COS:arg[0-9]+]]: !llvm.ptr<1>, %{{arg[0-9]+}}: i64, %{{arg[0-9]+}}: i32, %[[SIN:arg[0-9]+]]: !llvm.ptr<1>, %{{arg[0-9]+}}: i64, %{{arg[0-9]+}}: i32, %{{arg[0-9]+}}: !llvm.ptr<1>, %{{arg[0-9]+}}: i32)
// HOPPER-SAME: kind = "backward"
// HOPPER-SAME: rotary = "half_split"
// q and k rotated in the slot first.
// HOPPER: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// HOPPER: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// HOPPER-NEXT: llvm.mlir.constant(2 : i32)
// HOPPER-NEXT: llvm.add
// HOPPER-NEXT: llvm.mlir.constant(128 : i32)
// HOPPER-NEXT: nvvm.barrier id
// HOPPER-NOT: -> vector<4xf32>
// Then, in the epilogue, the inverse rotation of each register pair: the
// entries of both tables at the pair's position (clamped) and column, the
// sines negated before the turn (whose own negation follows a multiply),
// and no select: the stores stop at the tile's rows.
// HOPPER: llvm.intr.smin
// HOPPER: llvm.getelementptr %[[COS]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// HOPPER-NEXT: llvm.getelementptr
// HOPPER-NEXT: llvm.load %{{.*}} : !llvm.ptr<1> -> {{f32|vector<2xf32>}}
// HOPPER: llvm.getelementptr %[[SIN]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// HOPPER-NEXT: llvm.getelementptr
// HOPPER-NEXT: llvm.load %{{.*}} : !llvm.ptr<1> -> {{f32|vector<2xf32>}}
// HOPPER-NOT: llvm.fmul
// HOPPER: %[[NEGS:.*]] = llvm.fneg %{{[0-9]+}} : f32
// HOPPER: %[[YS:.*]] = llvm.fmul %[[Y:[0-9]+]], %[[NEGS]] : f32
// HOPPER-NEXT: %[[XS:.*]] = llvm.fmul %[[X:[0-9]+]], %[[NEGS]] : f32
// HOPPER-NEXT: %[[NYS:.*]] = llvm.fneg %[[YS]] : f32
// HOPPER-NEXT: %[[NX:.*]] = llvm.intr.fma(%[[X]], %[[C:[0-9]+]], %[[NYS]]) : (f32, f32, f32) -> f32
// HOPPER-NEXT: %[[NY:.*]] = llvm.intr.fma(%[[Y]], %[[C]], %[[XS]]) : (f32, f32, f32) -> f32
// HOPPER-NOT: llvm.select {{.*}} : i1, f32

// BLACKWELL-LABEL: llvm.func @backward_tables(
// BLACKWELL-SAME: %[[COS:arg[0-9]+]]: !llvm.ptr<1>, %{{arg[0-9]+}}: i64, %{{arg[0-9]+}}: i32, %[[SIN:arg[0-9]+]]: !llvm.ptr<1>, %{{arg[0-9]+}}: i64, %{{arg[0-9]+}}: i32)
// BLACKWELL-SAME: {name = "rotary", registers = 72 : i64, replicas = 1 : i64, role = "rotary", warps = 4 : i64}, {name = "mma", registers = 96 : i64, replicas = 1 : i64, role = "mma", warps = 4 : i64}, {name = "softmax", registers = 256 : i64, replicas = 1 : i64, role = "softmax", warps = 4 : i64}
// BLACKWELL-SAME: threads = 512 : i64
// BLACKWELL-SAME: tmem_columns = 512 : i64
// BLACKWELL: nvvm.setmaxregister  decrease 72
// BLACKWELL: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// BLACKWELL: nvvm.setmaxregister  decrease 96
// BLACKWELL: nvvm.setmaxregister  increase 256
// dK from tensor memory, then turned back.
// BLACKWELL: nvvm.tcgen05.ld
// BLACKWELL: nvvm.tcgen05.ld
// BLACKWELL: nvvm.tcgen05.ld
// BLACKWELL: llvm.getelementptr %[[COS]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// BLACKWELL-NEXT: llvm.getelementptr
// BLACKWELL-NEXT: llvm.load %{{.*}} : !llvm.ptr<1> -> {{f32|vector<2xf32>}}
// BLACKWELL: llvm.getelementptr %[[SIN]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// BLACKWELL-NEXT: llvm.getelementptr
// BLACKWELL-NEXT: llvm.load %{{.*}} : !llvm.ptr<1> -> {{f32|vector<2xf32>}}
// BLACKWELL-NOT: llvm.fmul
// BLACKWELL: %[[NEGS:.*]] = llvm.fneg %{{[0-9]+}} : f32
// BLACKWELL: llvm.fmul %{{[0-9]+}}, %[[NEGS]] : f32
func.func @backward_tables(%q: !act, %k: !act, %v: !act, %do: !act,
                           %dq: !act, %dk: !act, %dv: !act, %cu: !cu,
                           %cos: !tab, %sin: !tab) {
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act) cu_seqlens(%cu : !cu)
      rotary(%cos, %sin : !tab, !tab)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}
