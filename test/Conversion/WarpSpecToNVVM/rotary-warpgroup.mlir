// RUN: block-attn-opt %s --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_90a rotary-warpgroup=on rotary-warpgroups=1}),warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --implicit-check-not=warpspec.
// RUN: block-attn-opt %s --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_90a}),warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --check-prefix=TWO --implicit-check-not=warpspec.

// The sm_90a rotary forward with its rotary warpgroup (rotary-warpgroup=on;
// docs/rotary.md): four warpgroups, 512 threads launched with 128 registers
// each, which setmaxnreg splits 40 (load) / 104 (rotary) / 184 x 2
// (compute). The shared memory map is the one without the warpgroup: the
// signal ring "rotated" has no buffers, only 4 x (two barriers and a
// record), which fit in the base's alignment slack (230384 bytes, as
// before).
//
// The rotary warpgroup, per tile: wait for the load ring's slot (full), then
// for a free entry of the signal ring (empty); read all of the tile's table
// rows (16 x 16 bytes a thread: 4 passes of 2 cos and 2 sin loads, issued
// before the first turn, as its 104 registers allow), rotate q and k in
// place; the proxy fence and its named barrier (2, 128 threads) make the
// rotated tiles visible to the tensor cores; one thread publishes the signal
// (record, then arrival on the signal's full barrier), and after another
// barrier one thread gives the load slot back (its empty barrier counts two
// consumers: this warpgroup and the compute replica).
//
// A compute replica, per tile: wait for its load slot (full), then for the
// signal of the same entry, give the signal back (barrier of the replica,
// one arrival), and go straight to S = Q K^T: no table read, no rotation.

// By default at head dim 128 the rotary warpgroup has two replicas and the
// consumer one: still 512 threads, now 40 / 104 x 2 / 256, and one output
// staging buffer fewer (214000 bytes; the ring keeps its 4 slots). The load
// ring's empty barrier still counts two arrivals: one rotary replica and
// the consumer give each slot back.
// TWO-LABEL: llvm.func @forward_tables(
// TWO-SAME: smem_bytes = 214000 : i64
// TWO-SAME: threads = 512 : i64
// TWO: %[[EMPTYQ:.*]] = llvm.mlir.constant(2 : i32) : i32
// TWO: nvvm.mbarrier.init %{{.*}}, %[[EMPTYQ]]
// TWO: nvvm.setmaxregister decrease 40
// TWO: nvvm.setmaxregister decrease 104
// TWO: nvvm.setmaxregister increase 256

// CHECK-LABEL: llvm.func @forward_tables(
// CHECK-SAME: smem_bytes = 230384 : i64
// CHECK-SAME: threads = 512 : i64
// CHECK-SAME: nvvm.reqntid = array<i32: 512, 1, 1>
// Both rings' barriers: 4 slots each, the load ring's empty barrier counts
// two consumer partitions, the signal's one.
// CHECK: ^bb1:
// CHECK-NEXT: %[[FULLQ:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %[[FULLQ]]
// CHECK-NEXT: %[[EMPTYQ:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %[[EMPTYQ]]
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: nvvm.setmaxregister decrease 104
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-COUNT-16: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK-NOT: !llvm.ptr<1> -> vector<4xf32>
// CHECK: llvm.fptrunc %{{.*}} : vector<2xf32> to vector<2xbf16>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: %[[BASE:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-NEXT: %[[ID:.*]] = llvm.add %[[BASE]], %{{.*}} : i32
// CHECK-NEXT: %[[N:.*]] = llvm.mlir.constant(128 : i32) : i32
// CHECK-NEXT: nvvm.barrier id = %[[ID]] number_of_threads = %[[N]]
// CHECK: nvvm.mbarrier.arrive
// CHECK: nvvm.barrier id
// CHECK: nvvm.mbarrier.arrive
// CHECK: nvvm.setmaxregister increase 184
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.barrier id
// CHECK: nvvm.mbarrier.arrive
// CHECK-NOT: !llvm.ptr<1> -> vector<4xf32>
// CHECK-NOT: nvvm.fence.proxy
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.mma_async
// CHECK-NOT: !llvm.ptr<1> -> vector<4xf32>
// CHECK: llvm.return

!act = memref<?x4x128xbf16>
!cu = memref<?xi32>
!tab = memref<?x64xf32>

func.func @forward_tables(%q: !act, %k: !act, %v: !act, %o: !act, %cu: !cu,
                          %cos: !tab, %sin: !tab) {
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : !cu) rotary(%cos, %sin : !tab, !tab)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}
