// RUN: split-file %s %t
// RUN: block-attn-opt %t/forward.mlir --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_100a}),warpspec-allocate-tmem,warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm{chip=sm_100a})' > %t/forward.nvvm.mlir
// RUN: FileCheck %s --implicit-check-not=warpspec. --implicit-check-not=nvvm.wgmma < %t/forward.nvvm.mlir
//
// Counted: 12 tcgen05.mma, 8 for S = Q K^T (K = 128 in steps of 16, both
// operands shared-memory descriptors) and 4 for O = P V (K = 64, A = P in
// tensor memory); their descriptors carry the tcgen05 fixed bits (46-48 =
// 0b001) and the 128-byte swizzle code 2 (bits 61-63): K-major
// 0x4000404000010000 = 4611756662049538048 (LBO 16, SBO 1024) two per S
// step, MN-major 0x4000404002000000 = 4611756662083026944 (LBO 8192) one
// per P V step (V). Four commits: S and O full, P and Q/K/V empty (release
// after_mma). Two loads (S, O), one store (P), three waits.
// RUN: grep -c 'nvvm.tcgen05.mma ' %t/forward.nvvm.mlir | FileCheck %s --check-prefix=COUNT12
// RUN: grep -c 'nvvm.tcgen05.mma .*: (!llvm.ptr<6>, i64, i64, i32, i1)' %t/forward.nvvm.mlir | FileCheck %s --check-prefix=COUNT8
// RUN: grep -c 'nvvm.tcgen05.mma .*: (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)' %t/forward.nvvm.mlir | FileCheck %s --check-prefix=COUNT4
// RUN: grep -c 'llvm.mlir.constant(4611756662049538048 : i64)' %t/forward.nvvm.mlir | FileCheck %s --check-prefix=COUNT16
// RUN: grep -c 'llvm.mlir.constant(4611756662083026944 : i64)' %t/forward.nvvm.mlir | FileCheck %s --check-prefix=COUNT4
// RUN: grep -c 'nvvm.tcgen05.commit' %t/forward.nvvm.mlir | FileCheck %s --check-prefix=COUNT4
// RUN: grep -c 'nvvm.tcgen05.ld ' %t/forward.nvvm.mlir | FileCheck %s --check-prefix=COUNT2
// RUN: grep -c 'nvvm.tcgen05.st ' %t/forward.nvvm.mlir | FileCheck %s --check-prefix=COUNT1
// RUN: grep -c 'nvvm.tcgen05.wait' %t/forward.nvvm.mlir | FileCheck %s --check-prefix=COUNT3
// RUN: grep -c 'nvvm.tcgen05.alloc' %t/forward.nvvm.mlir | FileCheck %s --check-prefix=COUNT1
// RUN: grep -c 'nvvm.tcgen05.dealloc' %t/forward.nvvm.mlir | FileCheck %s --check-prefix=COUNT1
// RUN: grep -c 'nvvm.tcgen05.relinquish_alloc_permit' %t/forward.nvvm.mlir | FileCheck %s --check-prefix=COUNT1
//
// The backward: S, dP, dV, dK, dQ.
// RUN: block-attn-opt %t/backward.mlir --pass-pipeline='builtin.module(func.func(blockattn-warp-specialize{chip=sm_100a}),warpspec-allocate-tmem,warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm{chip=sm_100a})' > %t/backward.nvvm.mlir
// RUN: FileCheck %s --check-prefix=BWD --implicit-check-not=warpspec. --implicit-check-not=nvvm.tcgen05.st < %t/backward.nvvm.mlir
// RUN: grep -c 'nvvm.tcgen05.mma ' %t/backward.nvvm.mlir | FileCheck %s --check-prefix=COUNT28
// RUN: grep -c 'nvvm.tcgen05.commit' %t/backward.nvvm.mlir | FileCheck %s --check-prefix=COUNT7
// RUN: grep -c 'nvvm.tcgen05.ld ' %t/backward.nvvm.mlir | FileCheck %s --check-prefix=COUNT5
// The instruction descriptors in the NVVM are the ones Descriptors.h
// encodes (blockattn-descriptor-test prints them; descriptors.test and
// cutlass-oracle.test hold them against the PTX ISA tables and CUTLASS):
// S and dP are "S=QK^T" (0x04100490), dV and dK "dV=P^T dO" (0x04218490: A
// and B MN-major), dQ = dS K is "O=PV" at N = 128 (0x04210490: A K-major,
// B MN-major).
// RUN: blockattn-descriptor-test > %t/descriptors.txt
// RUN: cat %t/descriptors.txt %t/backward.nvvm.mlir | FileCheck %s --check-prefix=IDESC

// COUNT1: {{^}}1{{$}}
// COUNT2: {{^}}2{{$}}
// COUNT3: {{^}}3{{$}}
// COUNT4: {{^}}4{{$}}
// COUNT5: {{^}}5{{$}}
// COUNT7: {{^}}7{{$}}
// COUNT8: {{^}}8{{$}}
// COUNT12: {{^}}12{{$}}
// COUNT16: {{^}}16{{$}}
// COUNT28: {{^}}28{{$}}

// convert-warpspec-to-nvvm{chip=sm_100a} on the seed forward (bf16,
// head_dim 128, 4 heads, constant scale) after blockattn-warp-specialize,
// warpspec-allocate-tmem and warpspec-allocate-smem: the module, the
// manifest, the prologue (barriers, tensor-memory allocation), then the
// three roles in order.

// CHECK: gpu.module @seed_forward [#nvvm.target<O = 3, chip = "sm_100a", features = "+ptx86">] {
// CHECK: llvm.func @seed_forward(
// The manifest: 512 threads (load, mma, two softmax warpgroups), the
// shared-memory plan and the 256 tensor-memory columns.
// CHECK-SAME: blockattn.manifest = {block_size = 64 : i64, chip = "sm_100a", element_type = bf16, grid = "persistent", head_dim = 128 : i64, kernel = "seed_forward", kind = "forward", max_registers = 128 : i64,
// CHECK-SAME: partitions = [{name = "load", registers = 40 : i64, replicas = 1 : i64, role = "load", warps = 4 : i64}, {name = "mma", registers = 40 : i64, replicas = 1 : i64, role = "mma", warps = 4 : i64}, {name = "softmax", registers = 216 : i64, replicas = 2 : i64, role = "softmax", warps = 4 : i64}],
// CHECK-SAME: rotary = "none", smem_bytes = 230384 : i64, softmax_scale = 0.0883883461 : f32, threads = 512 : i64, tmem_columns = 256 : i64},
// CHECK-SAME: nvvm.kernel, nvvm.minctasm = 1 : i32, nvvm.reqntid = array<i32: 512, 1, 1>} {
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[WARP:.*]] = llvm.lshr %[[TID]], %{{.*}} : i32
// The barriers, tile records and tensor-memory address (336 bytes from
// offset 229376) go into the bytes the alignment of the base skips when
// they fit there, after the buffers otherwise: every access to them is at
// its offset less 229376 from that base.
// CHECK: %[[FITS:.*]] = llvm.mlir.constant(336 : i32) : i32
// CHECK-NEXT: %[[INPAD:.*]] = llvm.icmp "uge" %{{.*}}, %[[FITS]] : i32
// CHECK-NEXT: %[[BUFEND:.*]] = llvm.mlir.constant(229376 : i32) : i32
// CHECK-NEXT: %[[AFTER:.*]] = llvm.getelementptr %{{.*}}[%[[BUFEND]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %[[META:.*]] = llvm.select %[[INPAD]], %{{.*}}, %[[AFTER]] : i1, !llvm.ptr<3>

// Prologue, thread 0: full and empty barriers of the 4 qkv slots and of the
// 2 slots of s, p and o (20), then the teardown barrier after the
// tensor-memory address (tmem_base_offset 229696 + 8), which the partitions
// that use tensor memory arrive on when they are done: mma and the two
// softmax replicas, 3.
// CHECK-COUNT-20: nvvm.mbarrier.init %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32
// CHECK-NEXT: %[[THREE:.*]] = llvm.mlir.constant(3 : i32) : i32
// CHECK-NEXT: %[[TDOFF:.*]] = llvm.mlir.constant(229704 : i32) : i32
// CHECK-NEXT: %[[TDSTART:.*]] = llvm.mlir.constant(229376 : i32) : i32
// CHECK-NEXT: %[[TDREL:.*]] = llvm.sub %[[TDOFF]], %[[TDSTART]] : i32
// CHECK-NEXT: %[[TD:.*]] = llvm.getelementptr %[[META]][%[[TDREL]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: nvvm.mbarrier.init %[[TD]], %[[THREE]] : !llvm.ptr<3>, i32
// CHECK-NEXT: nvvm.fence.mbarrier.init
// Warp 0 allocates the 256 columns, writing their address to shared memory
// at tmem_base_offset, and gives up the right to allocate more.
// CHECK: %[[W0:.*]] = llvm.icmp "eq" %[[WARP]], %{{.*}} : i32
// CHECK-NEXT: llvm.cond_br %[[W0]], ^[[ALLOC:bb[0-9]+]], ^[[JOIN:bb[0-9]+]]
// CHECK-NEXT: ^[[ALLOC]]:
// CHECK-NEXT: %[[SLOTOFF:.*]] = llvm.mlir.constant(229696 : i32) : i32
// CHECK-NEXT: %[[SLOTSTART:.*]] = llvm.mlir.constant(229376 : i32) : i32
// CHECK-NEXT: %[[SLOTREL:.*]] = llvm.sub %[[SLOTOFF]], %[[SLOTSTART]] : i32
// CHECK-NEXT: %[[SLOT:.*]] = llvm.getelementptr %[[META]][%[[SLOTREL]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %[[COLS:.*]] = llvm.mlir.constant(256 : i32) : i32
// CHECK-NEXT: nvvm.tcgen05.alloc %[[SLOT]], %[[COLS]] : !llvm.ptr<3>, i32
// CHECK-NEXT: nvvm.tcgen05.relinquish_alloc_permit
// CHECK-NEXT: llvm.br ^[[JOIN]]
// The CTA barrier publishes the barriers and the address, with the tcgen05
// fences around it; then every thread reads the address.
// CHECK-NEXT: ^[[JOIN]]:
// CHECK-NEXT: nvvm.tcgen05.fence <before>
// CHECK-NEXT: nvvm.barrier0
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK-NEXT: %[[BASEOFF:.*]] = llvm.mlir.constant(229696 : i32) : i32
// CHECK-NEXT: %[[BASESTART:.*]] = llvm.mlir.constant(229376 : i32) : i32
// CHECK-NEXT: %[[BASEREL:.*]] = llvm.sub %[[BASEOFF]], %[[BASESTART]] : i32
// CHECK-NEXT: %[[BASEPTR:.*]] = llvm.getelementptr %[[META]][%[[BASEREL]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %[[TMEM:.*]] = llvm.load %[[BASEPTR]] {alignment = 4 : i64} : !llvm.ptr<3> -> i32

// Load (warps 0-3): six TMA loads (Q, K, V: two 64-column boxes each).
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK-COUNT-6: nvvm.cp.async.bulk.tensor.shared.cluster.global
// At the end warp 0 (the allocating warp) waits until every user of the
// tensor memory arrived on the teardown barrier, then frees the columns.
// CHECK: %[[TDWOFF:.*]] = llvm.mlir.constant(229704 : i32) : i32
// CHECK-NEXT: %[[TDWSTART:.*]] = llvm.mlir.constant(229376 : i32) : i32
// CHECK-NEXT: %[[TDWREL:.*]] = llvm.sub %[[TDWOFF]], %[[TDWSTART]] : i32
// CHECK-NEXT: %[[TDW:.*]] = llvm.getelementptr %[[META]][%[[TDWREL]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-NEXT: %{{.*}} = llvm.mlir.constant(10000000 : i32) : i32
// CHECK-NEXT: nvvm.mbarrier.try_wait.parity %[[TDW]], %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32, i32
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK-NEXT: %[[FREE:.*]] = llvm.inttoptr %[[TMEM]] : i32 to !llvm.ptr<6>
// CHECK-NEXT: %[[NCOLS:.*]] = llvm.mlir.constant(256 : i32) : i32
// CHECK-NEXT: nvvm.tcgen05.dealloc %[[FREE]], %[[NCOLS]] : !llvm.ptr<6>, i32

// MMA (warps 4-7, one thread issues). Waiting for a Q/K/V slot, then for a
// free s slot: each wait is followed by tcgen05.fence::after_thread_sync.
// CHECK: nvvm.setmaxregister  decrease 40
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// S = Q K^T: the s slot's address (slot 0 at lane 0, slot 1 at lane 16 of
// the same columns: 16 << 16 = 1048576) added to the allocation's base;
// instruction descriptor 0x04100490 (M = 64, N = 64, bf16 x bf16 -> f32,
// both K-major); 8 steps of K = 16, the first one overwriting D.
// CHECK-NEXT: %{{.*}} = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %[[SLANE:.*]] = llvm.mlir.constant(1048576 : i32) : i32
// CHECK: %[[SSEL:.*]] = llvm.select %{{.*}}, %{{.*}}, %[[SLANE]] : i1, i32
// CHECK-NEXT: %{{.*}} = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %[[SA:.*]] = llvm.add %[[TMEM]], %[[SSEL]] : i32
// CHECK: %[[SD:.*]] = llvm.inttoptr %{{.*}} : i32 to !llvm.ptr<6>
// CHECK-NEXT: %[[IDS:.*]] = llvm.mlir.constant(68158608 : i32) : i32
// CHECK: %[[FIRST:.*]] = llvm.mlir.constant(false) : i1
// CHECK-NEXT: nvvm.tcgen05.mma %[[SD]], %{{.*}}, %{{.*}}, %[[IDS]], %[[FIRST]] {ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<f16>} : (!llvm.ptr<6>, i64, i64, i32, i1)
// CHECK: %[[ACC:.*]] = llvm.mlir.constant(true) : i1
// CHECK-NEXT: nvvm.tcgen05.mma %[[SD]], %{{.*}}, %{{.*}}, %[[IDS]], %[[ACC]]
// CHECK-COUNT-6: nvvm.tcgen05.mma %[[SD]], %{{.*}}, %{{.*}}, %[[IDS]], %{{.*}} {ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<f16>} : (!llvm.ptr<6>, i64, i64, i32, i1)
// CHECK-NOT: nvvm.tcgen05.mma
// Commit S: the record's arrival, then tcgen05.commit to the same full
// barrier (count 2), which arrives when the MMAs complete.
// CHECK: nvvm.mbarrier.arrive %[[SFULL:.*]] : !llvm.ptr<3>
// CHECK-NEXT: nvvm.tcgen05.commit %[[SFULL]] : !llvm.ptr<3>
// get P, acquire an o slot.
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// O = P V: o at column 96 (lane 0 or 16), A = P in tensor memory (a
// tensor-memory address, 8 columns further per K = 16 step), B = V's
// MN-major descriptor; instruction descriptor 0x04210490 (N = 128, B
// MN-major); 4 steps.
// CHECK-NEXT: %{{.*}} = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %[[OLANE:.*]] = llvm.mlir.constant(1048672 : i32) : i32
// CHECK-NEXT: %[[OCOL:.*]] = llvm.mlir.constant(96 : i32) : i32
// CHECK: %[[OD:.*]] = llvm.inttoptr %{{.*}} : i32 to !llvm.ptr<6>
// CHECK-NEXT: %[[IDO:.*]] = llvm.mlir.constant(69272720 : i32) : i32
// CHECK-NEXT: %{{.*}} = llvm.mlir.constant(0 : i32) : i32
// CHECK-NEXT: %[[PA0:.*]] = llvm.add %[[P:.*]], %{{.*}} : i32
// CHECK-NEXT: %[[PT0:.*]] = llvm.inttoptr %[[PA0]] : i32 to !llvm.ptr<6>
// CHECK: %[[VD0:.*]] = llvm.or %{{.*}}, %{{.*}} : i64
// CHECK-NEXT: %{{.*}} = llvm.mlir.constant(false) : i1
// CHECK-NEXT: nvvm.tcgen05.mma %[[OD]], %[[PT0]], %[[VD0]], %[[IDO]], %{{.*}} {{.*}} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
// CHECK-NEXT: %[[EIGHT:.*]] = llvm.mlir.constant(8 : i32) : i32
// CHECK-NEXT: %[[PA1:.*]] = llvm.add %[[P]], %[[EIGHT]] : i32
// CHECK-NEXT: %[[PT1:.*]] = llvm.inttoptr %[[PA1]] : i32 to !llvm.ptr<6>
// CHECK-NEXT: %[[VSTEP:.*]] = llvm.mlir.constant(2048 : i32) : i32
// CHECK: nvvm.tcgen05.mma %[[OD]], %[[PT1]], %{{.*}}, %[[IDO]], %{{.*}} {{.*}} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
// CHECK-COUNT-2: nvvm.tcgen05.mma %[[OD]], %{{.*}}, %{{.*}}, %[[IDO]], %{{.*}} {{.*}} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
// CHECK-NOT: nvvm.tcgen05.mma
// Commit O the same way; then release P and Q/K/V after_mma: a
// tcgen05.commit each, to the slots' empty barriers.
// CHECK: nvvm.mbarrier.arrive %[[OFULL:.*]] : !llvm.ptr<3>
// CHECK-NEXT: nvvm.tcgen05.commit %[[OFULL]] : !llvm.ptr<3>
// CHECK: nvvm.tcgen05.commit %{{.*}} : !llvm.ptr<3>
// CHECK-NOT: nvvm.mbarrier.arrive
// CHECK: nvvm.tcgen05.commit %{{.*}} : !llvm.ptr<3>
// Close s: one end-of-stream record per softmax replica, each arriving for
// the record and for the commit at once (count 2).
// CHECK: nvvm.mbarrier.arrive %{{.*}}, %{{.*}} : !llvm.ptr<3>
// CHECK: nvvm.mbarrier.arrive %{{.*}}, %{{.*}} : !llvm.ptr<3>
// Done with tensor memory: fence, arrive on the teardown barrier.
// CHECK: nvvm.tcgen05.fence <before>
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>

// Softmax x2 (warps 8-15).
// CHECK: nvvm.setmaxregister  increase 216
// Wait for S, then read it: warp q of the warpgroup at lane field 32q
// ((thread >> 5) & 3) * 32 << 16) of the slot, 16x256b, 32 registers (64
// columns), and wait for the load.
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// The slot's record: row, rows, head, position.
// CHECK-COUNT-4: llvm.extractelement %{{.*}} : vector<4xi32>
// CHECK: %[[Q3:.*]] = llvm.mlir.constant(3 : i32) : i32
// CHECK-NEXT: %[[Q5:.*]] = llvm.mlir.constant(5 : i32) : i32
// CHECK-NEXT: %[[QW:.*]] = llvm.lshr %{{.*}}, %[[Q5]] : i32
// CHECK-NEXT: %[[QQ:.*]] = llvm.and %[[QW]], %[[Q3]] : i32
// CHECK-NEXT: %[[Q16:.*]] = llvm.mlir.constant(16 : i32) : i32
// CHECK-NEXT: %[[Q32:.*]] = llvm.mlir.constant(32 : i32) : i32
// CHECK-NEXT: %[[QL:.*]] = llvm.mul %[[QQ]], %[[Q32]] : i32
// CHECK-NEXT: %[[QF:.*]] = llvm.shl %[[QL]], %[[Q16]] : i32
// CHECK-NEXT: %[[SADDR:.*]] = llvm.add %{{.*}}, %[[QF]] : i32
// CHECK-NEXT: %[[SPTR:.*]] = llvm.inttoptr %[[SADDR]] : i32 to !llvm.ptr<6>
// CHECK-NEXT: %{{.*}} = nvvm.tcgen05.ld %[[SPTR]] {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>} : vector<32xi32>
// CHECK-NEXT: nvvm.tcgen05.wait <load>
// Release s: order the loads before the arrival, gather the warpgroup.
// CHECK: nvvm.tcgen05.fence <before>
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// The softmax: row maxima and sums over the 4 threads of a row, two rows
// per thread.
// CHECK-COUNT-8: nvvm.shfl.sync  bfly
// Acquire a p slot, write P (bf16 pairs packed in 32-bit columns): 16x128b,
// 16 registers (32 columns); commit: wait for the stores, fence, gather
// the warpgroup, arrive.
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK: nvvm.tcgen05.st %{{.*}}, %{{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_16x128b>} : vector<16xi32>
// CHECK-NEXT: nvvm.tcgen05.wait <store>
// CHECK-NEXT: nvvm.tcgen05.fence <before>
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// get O, read it: 64 registers (128 columns); release it.
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NEXT: nvvm.tcgen05.fence <after>
// CHECK: nvvm.tcgen05.ld %{{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>} : vector<64xi32>
// CHECK-NEXT: nvvm.tcgen05.wait <load>
// CHECK: nvvm.tcgen05.fence <before>
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// O / L staged and stored: two bulk tensor stores of a full tile.
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// After the loop: the bulk stores have read shared memory; then the
// replica is done with tensor memory.
// CHECK: nvvm.cp.async.bulk.wait_group 0
// CHECK: nvvm.tcgen05.fence <before>
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK: llvm.return
// CHECK-NOT: nvvm.tcgen05

// The backward (bf16, head_dim 128): all 512 columns, S and dP (K-major, 8
// steps each, N = 64), dV = P^T dO and dK = dS^T Q (P and dS read
// MN-major from the pds slot, dO and Q MN-major; 4 steps of K = 16 rows,
// 2048 bytes each, N = 128), dQ = dS K (dS K-major, K MN-major).
// BWD: gpu.module @seed_backward [#nvvm.target<O = 3, chip = "sm_100a", features = "+ptx86">] {
// BWD: llvm.func @seed_backward(
// BWD-SAME: partitions = [{name = "load", registers = 40 : i64, replicas = 1 : i64, role = "load", warps = 4 : i64}, {name = "mma", registers = 40 : i64, replicas = 1 : i64, role = "mma", warps = 4 : i64}, {name = "softmax", registers = 216 : i64, replicas = 2 : i64, role = "softmax", warps = 4 : i64}],
// BWD-SAME: smem_bytes = 197616 : i64, softmax_scale = 0.0883883461 : f32, threads = 512 : i64, tmem_columns = 512 : i64},
// BWD: %[[COLS:.*]] = llvm.mlir.constant(512 : i32) : i32
// BWD-NEXT: nvvm.tcgen05.alloc %{{.*}}, %[[COLS]] : !llvm.ptr<3>, i32
// BWD-NEXT: nvvm.tcgen05.relinquish_alloc_permit
// BWD: %[[NCOLS:.*]] = llvm.mlir.constant(512 : i32) : i32
// BWD-NEXT: nvvm.tcgen05.dealloc %{{.*}}, %[[NCOLS]] : !llvm.ptr<6>, i32
// S = Q K^T into s (column 0), dP = dO V^T into dp (column 64).
// BWD: %[[IDS:.*]] = llvm.mlir.constant(68158608 : i32) : i32
// BWD-COUNT-8: nvvm.tcgen05.mma %{{.*}}, %{{.*}}, %{{.*}}, %[[IDS]], %{{.*}} {{.*}} : (!llvm.ptr<6>, i64, i64, i32, i1)
// BWD: nvvm.tcgen05.commit
// BWD: llvm.mlir.constant(64 : i32) : i32
// BWD: %[[IDP:.*]] = llvm.mlir.constant(68158608 : i32) : i32
// BWD-COUNT-8: nvvm.tcgen05.mma %{{.*}}, %{{.*}}, %{{.*}}, %[[IDP]], %{{.*}} {{.*}} : (!llvm.ptr<6>, i64, i64, i32, i1)
// BWD: nvvm.tcgen05.commit
// dV into dv (column 128): both descriptors MN-major (LBO 8192); A steps
// 2048 bytes (16 rows of P).
// BWD: llvm.mlir.constant(128 : i32) : i32
// BWD: %[[IDV:.*]] = llvm.mlir.constant(69305488 : i32) : i32
// BWD: llvm.mlir.constant(4611756662083026944 : i64) : i64
// BWD: llvm.mlir.constant(4611756662083026944 : i64) : i64
// BWD: nvvm.tcgen05.mma %{{.*}}, %{{.*}}, %{{.*}}, %[[IDV]], %{{.*}} {{.*}} : (!llvm.ptr<6>, i64, i64, i32, i1)
// BWD-NEXT: %[[ASTEP:.*]] = llvm.mlir.constant(2048 : i32) : i32
// BWD-COUNT-3: nvvm.tcgen05.mma %{{.*}}, %{{.*}}, %{{.*}}, %[[IDV]], %{{.*}} {{.*}} : (!llvm.ptr<6>, i64, i64, i32, i1)
// BWD: nvvm.tcgen05.commit
// dK into dk (column 256), the same form.
// BWD: llvm.mlir.constant(256 : i32) : i32
// BWD: %[[IDK:.*]] = llvm.mlir.constant(69305488 : i32) : i32
// BWD-COUNT-4: nvvm.tcgen05.mma %{{.*}}, %{{.*}}, %{{.*}}, %[[IDK]], %{{.*}} {{.*}} : (!llvm.ptr<6>, i64, i64, i32, i1)
// BWD: nvvm.tcgen05.commit
// dQ into dq (column 384): A K-major, B MN-major.
// BWD: llvm.mlir.constant(384 : i32) : i32
// BWD: %[[IDQ:.*]] = llvm.mlir.constant(69272720 : i32) : i32
// BWD: llvm.mlir.constant(4611756662049538048 : i64) : i64
// BWD: llvm.mlir.constant(4611756662083026944 : i64) : i64
// BWD-COUNT-4: nvvm.tcgen05.mma %{{.*}}, %{{.*}}, %{{.*}}, %[[IDQ]], %{{.*}} {{.*}} : (!llvm.ptr<6>, i64, i64, i32, i1)
// BWD-NOT: nvvm.tcgen05.mma
// Commit dq, then release P/dS and Q/K/V/dO after_mma.
// BWD: nvvm.mbarrier.arrive %[[DQFULL:.*]] : !llvm.ptr<3>
// BWD-NEXT: nvvm.tcgen05.commit %[[DQFULL]] : !llvm.ptr<3>
// BWD: nvvm.tcgen05.commit
// BWD: nvvm.tcgen05.commit
// Compute: S and dP (32 registers each), then dV, dK, dQ (64 each).
// BWD: nvvm.setmaxregister  increase 216
// BWD-COUNT-2: nvvm.tcgen05.ld %{{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>} : vector<32xi32>
// BWD-COUNT-3: nvvm.tcgen05.ld %{{.*}} {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>} : vector<64xi32>

// IDESC: idesc S=QK^T bf16 n64 = 0x[[#%.8x,S:]]
// IDESC: idesc O=PV bf16 n128 = 0x[[#%.8x,PV:]]
// IDESC: idesc dV=P^T dO bf16 n128 = 0x[[#%.8x,DV:]]
// IDESC: llvm.mlir.constant([[#%u,S]] : i32) : i32
// IDESC: llvm.mlir.constant([[#%u,S]] : i32) : i32
// IDESC: llvm.mlir.constant([[#%u,DV]] : i32) : i32
// IDESC: llvm.mlir.constant([[#%u,DV]] : i32) : i32
// IDESC: llvm.mlir.constant([[#%u,PV]] : i32) : i32

//--- forward.mlir

!act = memref<?x4x128xbf16>
func.func @seed_forward(%q: !act, %k: !act, %v: !act, %o: !act,
                        %cu_seqlens: memref<?xi32>) {
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu_seqlens : memref<?xi32>)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}

//--- backward.mlir

!act = memref<?x4x128xbf16>
func.func @seed_backward(%q: !act, %k: !act, %v: !act, %do: !act,
                         %dq: !act, %dk: !act, %dv: !act,
                         %cu_seqlens: memref<?xi32>) {
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act)
      cu_seqlens(%cu_seqlens : memref<?xi32>)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}
