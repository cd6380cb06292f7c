// RUN: block-attn-opt %s -split-input-file --warpspec-lower-protocol | FileCheck %s
// RUN: block-attn-opt %s -split-input-file --warpspec-lower-protocol | block-attn-opt -split-input-file | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: block-attn-opt %s -split-input-file --warpspec-lower-protocol --warpspec-lower-protocol | FileCheck %s
// RUN: block-attn-opt %s -split-input-file --pass-pipeline='builtin.module(warpspec-allocate-smem,warpspec-lower-protocol,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --check-prefix=NVVM --implicit-check-not=warpspec.

// warpspec-lower-protocol on hand-written warpspec IR: every protocol op
// becomes ring arithmetic and mbarrier-level ops, and each ring position is
// an SSA value the partition carries through its loops. The output verifies,
// parses back (ROUNDTRIP), is left as it is by a second run (nothing of the
// protocol is left) and lowers to NVVM with nothing of warpspec left.
// ROUNDTRIP: warpspec.kernel
// NVVM: llvm.func @rings(
// NVVM: llvm.func @after_mma(

// A single producer starts its ring at entry 0 and carries the position
// through the tile loop; the l2_prefetch acquire prefetches its copy's tile
// before it waits for the slot; the copy's bytes are expected before it is
// issued; the commit publishes and advances the position by the producer's
// one replica.
// CHECK-LABEL: func.func @rings(
// CHECK: %[[X:.*]] = warpspec.channel "x" depth(2)
// CHECK: %[[Y:.*]] = warpspec.channel "y" depth(4)
// CHECK: warpspec.partition "load"
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[LAST:.*]] = warpspec.tile_loop (%[[ROW:.*]], %[[ROWS:.*]], %[[HEAD:.*]], %[[P:.*]]) in %{{.*}} iter_args(%[[E:.*]] = %[[ZERO]]) -> (i32) {
// CHECK-NEXT: warpspec.tma_prefetch %[[Q:.*]][%[[ROW]], %[[HEAD]]] : memref<?x4x64xbf16>, !warpspec.buffer<64x64xbf16, smem>
// CHECK-NEXT: %[[S:.*]], %[[PH:.*]] = warpspec.ring_slot %[[X]][%[[E]]]
// CHECK-NEXT: warpspec.wait_empty %[[X]][%[[S]]] phase(%[[PH]])
// CHECK-NEXT: warpspec.expect_tx %[[X]][%[[S]]] bytes(8192)
// CHECK-NEXT: %[[B:.*]] = warpspec.slot_buffers %[[X]][%[[S]]]
// CHECK-NEXT: warpspec.tma_load %[[Q]][%[[ROW]], %[[HEAD]]] into %[[B]]
// CHECK-NEXT: warpspec.publish %[[X]][%[[S]]] tile(%[[ROW]], %[[ROWS]], %[[HEAD]]) position(%[[P]])
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[NEXT:.*]] = arith.addi %[[E]], %[[ONE]] : i32
// CHECK-NEXT: warpspec.yield %[[NEXT]] : i32
// CHECK-NEXT: }
// The close publishes one end record per consumer replica (two), from the
// position the loop ended on.
// CHECK-NEXT: %[[S0:.*]], %[[PH0:.*]] = warpspec.ring_slot %[[X]][%[[LAST]]]
// CHECK-NEXT: warpspec.wait_empty %[[X]][%[[S0]]] phase(%[[PH0]])
// CHECK-NEXT: warpspec.publish_close %[[X]][%[[S0]]]
// CHECK-NEXT: arith.constant 1 : i32
// CHECK-NEXT: %[[AFTER0:.*]] = arith.addi %[[LAST]]
// CHECK-NEXT: %[[S1:.*]], %[[PH1:.*]] = warpspec.ring_slot %[[X]][%[[AFTER0]]]
// CHECK-NEXT: warpspec.wait_empty %[[X]][%[[S1]]] phase(%[[PH1]])
// CHECK-NEXT: warpspec.publish_close %[[X]][%[[S1]]]
// CHECK-NOT: publish_close

// Two replicas: each starts at its replica index and advances by two. The
// consume loop waits for its next slot and reads the record before each
// iteration and leaves on a record of -1 rows; it also carries the position
// of %y, which its body acquires. The consumed slot's position is the
// record's fourth field.
// CHECK: warpspec.partition "relay"
// CHECK-NEXT: %[[YSTART:.*]] = warpspec.replica_id
// CHECK-NEXT: %[[XSTART:.*]] = warpspec.replica_id
// CHECK-NEXT: %{{.*}}:7 = scf.while (%[[YE:.*]] = %[[YSTART]], %[[XE:.*]] = %[[XSTART]]) : (i32, i32) -> (i32, i32, i32, i32, i32, i32, i32) {
// CHECK-NEXT: %[[XS:.*]], %[[XPH:.*]] = warpspec.ring_slot %[[X]][%[[XE]]]
// CHECK-NEXT: warpspec.wait_full %[[X]][%[[XS]]] phase(%[[XPH]])
// CHECK-NEXT: %[[R:.*]], %[[RS:.*]], %[[H:.*]], %[[POS:.*]] = warpspec.read_tile %[[X]][%[[XS]]]
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[OPEN:.*]] = arith.cmpi sge, %[[RS]], %[[C0]] : i32
// CHECK-NEXT: scf.condition(%[[OPEN]]) %[[R]], %[[RS]], %[[H]], %[[POS]], %[[XS]], %[[XE]], %[[YE]] :
// CHECK-NEXT: } do {
// CHECK-NEXT: ^bb0(%[[BR:.*]]: i32, %[[BRS:.*]]: i32, %[[BH:.*]]: i32, %[[BPOS:.*]]: i32, %[[BS:.*]]: i32, %[[BE:.*]]: i32, %[[BYE:.*]]: i32):
// CHECK-NEXT: warpspec.slot_buffers %[[X]][%[[BS]]]
// CHECK-NEXT: %[[YS:.*]], %[[YPH:.*]] = warpspec.ring_slot %[[Y]][%[[BYE]]]
// CHECK-NEXT: warpspec.wait_empty %[[Y]][%[[YS]]] phase(%[[YPH]])
// CHECK-NEXT: warpspec.slot_buffers %[[Y]][%[[YS]]]
// CHECK-NEXT: warpspec.publish %[[Y]][%[[YS]]] tile(%[[BR]], %[[BRS]], %[[BH]]) position(%[[BPOS]])
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2 : i32
// CHECK-NEXT: %[[YNEXT:.*]] = arith.addi %[[BYE]], %[[TWO]] : i32
// CHECK-NEXT: warpspec.arrive_empty %[[X]][%[[BS]]]
// CHECK-NEXT: %[[TWO2:.*]] = arith.constant 2 : i32
// CHECK-NEXT: %[[XNEXT:.*]] = arith.addi %[[BE]], %[[TWO2]] : i32
// CHECK-NEXT: scf.yield %[[YNEXT]], %[[XNEXT]] : i32, i32

// A get waits for the full slot, reads its record, takes its buffers and
// advances the position at once; the release arrives on the empty barrier.
// CHECK: warpspec.partition "sink"
// CHECK-NEXT: %[[START:.*]] = warpspec.replica_id
// CHECK-NEXT: warpspec.tile_loop (%{{.*}}, %{{.*}}, %{{.*}}) in %{{.*}} iter_args(%[[GE:.*]] = %[[START]]) -> (i32) {
// CHECK-NEXT: %[[GS:.*]], %[[GPH:.*]] = warpspec.ring_slot %[[Y]][%[[GE]]]
// CHECK-NEXT: warpspec.wait_full %[[Y]][%[[GS]]] phase(%[[GPH]])
// CHECK-NEXT: warpspec.read_tile %[[Y]][%[[GS]]]
// CHECK-NEXT: warpspec.slot_buffers %[[Y]][%[[GS]]]
// CHECK-NEXT: %[[GTWO:.*]] = arith.constant 2 : i32
// CHECK-NEXT: %[[GNEXT:.*]] = arith.addi %[[GE]], %[[GTWO]] : i32
// CHECK-NEXT: warpspec.arrive_empty %[[Y]][%[[GS]]] :
// CHECK-NEXT: warpspec.yield %[[GNEXT]] : i32
// CHECK-NOT: warpspec.acquire
// CHECK-NOT: warpspec.get
// CHECK-NOT: warpspec.release
// CHECK-NOT: warpspec.commit
// CHECK-NOT: warpspec.tile_position

!act = memref<?x4x64xbf16>
!cu = memref<?xi32>
!tile = !warpspec.buffer<64x64xbf16, smem>
!one = !warpspec.channel<[64x64xbf16], smem>

func.func @rings(%q: !act {blockattn.name = "q"},
                 %cu: !cu {blockattn.name = "cu_seqlens"}) {
  warpspec.kernel chip(sm_90a) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tokens = memref.dim %q, %c0 : !act
    %heads = memref.dim %q, %c1 : !act
    %x = warpspec.channel "x" depth(2) : !one
    %y = warpspec.channel "y" depth(4) : !one
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head, %p) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64) {
        %s, %b = warpspec.acquire %x {l2_prefetch} : !one
        warpspec.tma_load %q[%row, %head] into %b : !act, !tile
        warpspec.commit %s tile(%row, %rows, %head) position(%p)
      }
      warpspec.close %x : !one
    }
    warpspec.partition "relay" role(compute) warps(4) regs(96) replicas(2) {
      warpspec.consume %x (%xs, %row, %rows, %head, %xt) : !one {
        %pos = warpspec.tile_position %xs
        %ys, %yb = warpspec.acquire %y : !one
        warpspec.commit %ys tile(%row, %rows, %head) position(%pos)
        warpspec.release %xs
      }
    }
    warpspec.partition "sink" role(compute) warps(4) regs(96) replicas(2) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64) {
        %s, %b = warpspec.get %y : !one
        %pos = warpspec.tile_position %s
        warpspec.release %s
      }
    }
  }
  return
}

// -----

// A release after_mma stays one: the arrival on the empty barrier is the
// commit of the MMA thread's MMAs.
// CHECK-LABEL: func.func @after_mma(
// CHECK: warpspec.partition "mma"
// CHECK: %[[S:.*]], %{{.*}} = warpspec.ring_slot
// CHECK: warpspec.arrive_empty %{{.*}}[%[[S]]] after_mma

!act = memref<?x4x64xbf16>
!cu = memref<?xi32>
!tile = !warpspec.buffer<64x64xbf16, smem>
!one = !warpspec.channel<[64x64xbf16], smem>

func.func @after_mma(%q: !act {blockattn.name = "q"},
                     %cu: !cu {blockattn.name = "cu_seqlens"}) {
  warpspec.kernel chip(sm_100a) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tokens = memref.dim %q, %c0 : !act
    %heads = memref.dim %q, %c1 : !act
    %x = warpspec.channel "x" depth(2) : !one
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64) {
        %s, %b = warpspec.acquire %x : !one
        warpspec.tma_load %q[%row, %head] into %b : !act, !tile
        warpspec.commit %s tile(%row, %rows, %head)
      }
    }
    warpspec.partition "mma" role(mma) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64) {
        %s, %b = warpspec.get %x : !one
        warpspec.release %s after_mma
      }
    }
  }
  return
}

// -----

// A tile loop that already carries values keeps them first; the ring
// position is appended to its iter_args and to its yield.
// CHECK-LABEL: func.func @carried(
// CHECK: warpspec.partition "load"
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[N0:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %{{.*}}:2 = warpspec.tile_loop (%{{.*}}, %{{.*}}, %{{.*}}) in %{{.*}} iter_args(%[[N:.*]] = %[[N0]], %[[E:.*]] = %[[ZERO]]) -> (i32, i32) {
// CHECK: warpspec.ring_slot %{{.*}}[%[[E]]]
// CHECK: %[[NEXTE:.*]] = arith.addi %[[E]], %{{.*}} : i32
// CHECK: %[[NEXTN:.*]] = arith.addi %[[N]], %{{.*}} : i32
// CHECK-NEXT: warpspec.yield %[[NEXTN]], %[[NEXTE]] : i32, i32

!act = memref<?x4x64xbf16>
!cu = memref<?xi32>
!tile = !warpspec.buffer<64x64xbf16, smem>
!one = !warpspec.channel<[64x64xbf16], smem>

func.func @carried(%q: !act {blockattn.name = "q"},
                   %cu: !cu {blockattn.name = "cu_seqlens"}) {
  warpspec.kernel chip(sm_90a) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tokens = memref.dim %q, %c0 : !act
    %heads = memref.dim %q, %c1 : !act
    %x = warpspec.channel "x" depth(2) : !one
    warpspec.partition "load" role(load) warps(4) regs(40) {
      %n0 = arith.constant 0 : i32
      %tiles = warpspec.tile_loop (%row, %rows, %head) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64)
          iter_args(%n = %n0) -> (i32) {
        %s, %b = warpspec.acquire %x : !one
        warpspec.tma_load %q[%row, %head] into %b : !act, !tile
        warpspec.commit %s tile(%row, %rows, %head)
        %one = arith.constant 1 : i32
        %next = arith.addi %n, %one : i32
        warpspec.yield %next : i32
      }
    }
    warpspec.partition "sink" role(compute) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64) {
        %s, %b = warpspec.get %x : !one
        warpspec.release %s
      }
    }
  }
  return
}

// -----

// Consumers of one channel with different replica counts, as the sm_90a
// rotary warpgroup (one replica) and the two consumers take the load ring:
// each advances by its own partition's replicas, the single "stage" through
// every entry and each "compute" replica through every second one. The close
// ends the most replicated consumer's loops: two end records, of which the
// single replica reads the first. "done" is a signal (a channel without
// buffers): no expect_tx, no buffers, only the barriers and the record.
// CHECK-LABEL: func.func @mixed_replicas(
// CHECK: %[[X:.*]] = warpspec.channel "x" depth(4)
// CHECK: %[[DONE:.*]] = warpspec.channel "done" depth(4) : <[], smem>
// CHECK: warpspec.partition "load"
// CHECK: warpspec.publish_close %[[X]]
// CHECK: warpspec.publish_close %[[X]]
// CHECK-NOT: warpspec.publish_close
// CHECK: warpspec.partition "stage"
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[R:.*]] = warpspec.replica_id
// CHECK-NEXT: %{{.*}}:7 = scf.while (%[[DE:.*]] = %[[Z]], %[[XE:.*]] = %[[R]])
// CHECK: } do {
// CHECK-NEXT: ^bb0(%{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %[[BS:.*]]: i32, %[[BE:.*]]: i32, %[[BDE:.*]]: i32):
// CHECK-NEXT: warpspec.slot_buffers %[[X]][%[[BS]]]
// CHECK-NEXT: %[[DS:.*]], %[[DPH:.*]] = warpspec.ring_slot %[[DONE]][%[[BDE]]]
// CHECK-NEXT: warpspec.wait_empty %[[DONE]][%[[DS]]] phase(%[[DPH]])
// CHECK-NEXT: warpspec.slot_buffers %[[DONE]][%[[DS]]] : <[], smem>
// CHECK-NEXT: warpspec.publish %[[DONE]][%[[DS]]]
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[DNEXT:.*]] = arith.addi %[[BDE]], %[[ONE]] : i32
// CHECK-NEXT: warpspec.arrive_empty %[[X]][%[[BS]]]
// CHECK-NEXT: %[[ONE2:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[XNEXT:.*]] = arith.addi %[[BE]], %[[ONE2]] : i32
// CHECK-NEXT: scf.yield %[[DNEXT]], %[[XNEXT]] : i32, i32
// CHECK: warpspec.partition "compute"
// CHECK-NEXT: %[[CR:.*]] = warpspec.replica_id
// CHECK-NEXT: %[[CR2:.*]] = warpspec.replica_id
// CHECK-NEXT: %{{.*}}:7 = scf.while (%{{.*}} = %[[CR]], %{{.*}} = %[[CR2]])
// CHECK: } do {
// CHECK-NEXT: ^bb0(%{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %[[CS:.*]]: i32, %[[CE:.*]]: i32, %[[CDE:.*]]: i32):
// CHECK-NEXT: warpspec.slot_buffers %[[X]][%[[CS]]]
// CHECK-NEXT: %[[GS:.*]], %[[GPH:.*]] = warpspec.ring_slot %[[DONE]][%[[CDE]]]
// CHECK-NEXT: warpspec.wait_full %[[DONE]][%[[GS]]] phase(%[[GPH]])
// CHECK-NEXT: warpspec.read_tile %[[DONE]][%[[GS]]]
// CHECK-NEXT: warpspec.slot_buffers %[[DONE]][%[[GS]]] : <[], smem>
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2 : i32
// CHECK-NEXT: %[[GNEXT:.*]] = arith.addi %[[CDE]], %[[TWO]] : i32
// CHECK-NEXT: warpspec.arrive_empty %[[DONE]][%[[GS]]]
// CHECK-NEXT: warpspec.arrive_empty %[[X]][%[[CS]]]
// CHECK-NEXT: %[[TWO2:.*]] = arith.constant 2 : i32
// CHECK-NEXT: %[[CNEXT:.*]] = arith.addi %[[CE]], %[[TWO2]] : i32
// CHECK-NEXT: scf.yield %[[GNEXT]], %[[CNEXT]] : i32, i32
// NVVM: llvm.func @mixed_replicas(

!act = memref<?x4x64xbf16>
!cu = memref<?xi32>
!tile = !warpspec.buffer<64x64xbf16, smem>
!one = !warpspec.channel<[64x64xbf16], smem>
!signal = !warpspec.channel<[], smem>

func.func @mixed_replicas(%q: !act {blockattn.name = "q"},
                          %cu: !cu {blockattn.name = "cu_seqlens"}) {
  warpspec.kernel chip(sm_90a) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tokens = memref.dim %q, %c0 : !act
    %heads = memref.dim %q, %c1 : !act
    %x = warpspec.channel "x" depth(4) : !one
    %done = warpspec.channel "done" depth(4) : !signal
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64) {
        %s, %b = warpspec.acquire %x : !one
        warpspec.tma_load %q[%row, %head] into %b : !act, !tile
        warpspec.commit %s tile(%row, %rows, %head)
      }
      warpspec.close %x : !one
    }
    warpspec.partition "stage" role(rotary) warps(4) regs(104) {
      warpspec.consume %x (%xs, %row, %rows, %head, %xt) : !one {
        %ds = warpspec.acquire %done : !signal
        warpspec.commit %ds tile(%row, %rows, %head)
        warpspec.release %xs
      }
    }
    warpspec.partition "compute" role(compute) warps(4) regs(184) replicas(2) {
      warpspec.consume %x (%xs, %row, %rows, %head, %xt) : !one {
        %ds = warpspec.get %done : !signal
        warpspec.release %ds
        warpspec.release %xs
      }
    }
  }
  return
}

// -----

// An scf.for (the grouped-query backward's loop over a group's query heads)
// carries the positions its body advances as iter_args after its own; the
// position after the loop is the loop's result. The consumer's get inside
// the loop advances its own position of the channel.
// CHECK-LABEL: func.func @group_loop(
// CHECK: warpspec.partition "load"
// CHECK: warpspec.tile_loop
// CHECK: %[[LOOP:.*]]:2 = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[E:.*]] = %{{.*}}) -> (i32, i32) : i32 {
// CHECK: warpspec.ring_slot %{{.*}}[%[[E]]]
// CHECK: warpspec.publish
// CHECK: %[[NEXT:.*]] = arith.addi %[[E]], %{{.*}} : i32
// CHECK: scf.yield %{{.*}}, %[[NEXT]] : i32, i32
// CHECK: warpspec.yield %{{.*}}, %[[LOOP]]#1 : i32, i32
// CHECK: warpspec.partition "compute"
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (i32) : i32 {
// CHECK: warpspec.wait_full
!act = memref<?x4x64xbf16>
!cu = memref<?xi32>
!tile = !warpspec.buffer<64x64xbf16, smem>
!one = !warpspec.channel<[64x64xbf16], smem>
!signal = !warpspec.channel<[], smem>

func.func @group_loop(%q: !act {blockattn.name = "q"},
                      %cu: !cu {blockattn.name = "cu_seqlens"}) {
  warpspec.kernel chip(sm_90a) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tokens = memref.dim %q, %c0 : !act
    %heads = memref.dim %q, %c1 : !act
    %items = warpspec.channel "items" depth(2) : !signal
    %x = warpspec.channel "x" depth(4) : !one
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64) {
        %is = warpspec.acquire %items : !signal
        warpspec.commit %is tile(%row, %rows, %head)
        %lo = arith.constant 0 : i32
        %hi = arith.constant 2 : i32
        %step = arith.constant 1 : i32
        %sum = scf.for %i = %lo to %hi step %step iter_args(%acc = %lo) -> (i32) : i32 {
          %s, %b = warpspec.acquire %x : !one
          warpspec.tma_load %q[%row, %i] into %b : !act, !tile
          warpspec.commit %s tile(%row, %rows, %i)
          %more = arith.addi %acc, %i : i32
          scf.yield %more : i32
        }
      }
      warpspec.close %items : !signal
    }
    warpspec.partition "compute" role(compute) warps(4) regs(184) {
      warpspec.consume %items (%is, %row, %rows, %head) : !signal {
        warpspec.release %is
        %lo = arith.constant 0 : i32
        %hi = arith.constant 2 : i32
        %step = arith.constant 1 : i32
        scf.for %i = %lo to %hi step %step : i32 {
          %s, %b = warpspec.get %x : !one
          warpspec.release %s
        }
      }
    }
  }
  return
}

// -----

// A producer that acquires a second slot before it commits the first (as
// the sm_100a block-128 backward above head dim 128's MMA warp does, both
// query halves' S accumulated at once): the second slot is the entry after
// the first's, and each commit advances the position from its own slot's
// entry, so after both the position is two entries on.
// CHECK-LABEL: func.func @two_acquired(
// CHECK: warpspec.partition "load"
// CHECK: %{{.*}} = warpspec.tile_loop (%{{.*}}, %{{.*}}, %{{.*}}) in %{{.*}} iter_args(%[[E:.*]] = %{{.*}}) -> (i32) {
// CHECK-NEXT: %[[S0:.*]], %{{.*}} = warpspec.ring_slot %[[C:.*]][%[[E]]]
// CHECK: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[E1:.*]] = arith.addi %[[E]], %[[ONE]] : i32
// CHECK-NEXT: %[[S1:.*]], %{{.*}} = warpspec.ring_slot %[[C]][%[[E1]]]
// CHECK: warpspec.publish %[[C]][%[[S0]]]
// CHECK: arith.addi %[[E]], %{{.*}} : i32
// CHECK-NEXT: warpspec.publish %[[C]][%[[S1]]]
// CHECK: %[[N2:.*]] = arith.addi %[[E1]], %{{.*}} : i32
// CHECK-NEXT: warpspec.yield %[[N2]] : i32

!act = memref<?x4x64xbf16>
!cu = memref<?xi32>
!tile = !warpspec.buffer<64x64xbf16, smem>
!one = !warpspec.channel<[64x64xbf16], smem>

func.func @two_acquired(%q: !act {blockattn.name = "q"},
                        %cu: !cu {blockattn.name = "cu_seqlens"}) {
  warpspec.kernel chip(sm_90a) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tokens = memref.dim %q, %c0 : !act
    %heads = memref.dim %q, %c1 : !act
    %x = warpspec.channel "x" depth(2) : !one
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64) {
        %s0, %b0 = warpspec.acquire %x : !one
        %s1, %b1 = warpspec.acquire %x : !one
        warpspec.tma_load %q[%row, %head] into %b0 : !act, !tile
        warpspec.tma_load %q[%row, %head] into %b1 : !act, !tile
        warpspec.commit %s0 tile(%row, %rows, %head)
        warpspec.commit %s1 tile(%row, %rows, %head)
      }
      warpspec.close %x : !one
    }
    warpspec.partition "compute" role(compute) warps(4) regs(184) {
      warpspec.consume %x (%s, %row, %rows, %head, %b) : !one {
        warpspec.release %s
      }
    }
  }
  return
}

// -----

// A producer that works on its loaded tiles (the sm_90a column-pass
// producer rotating them): every thread runs its body (role rotary), the
// commit `landed` publishes and then waits on the slot's full barrier at
// the entry's phase (a wait that does not make it a consumer), and the
// partition signals another ring that the consumer waits on. In NVVM the
// bytes are announced and the copies issued by thread 0 only, and the
// publish gathers the warpgroup first.
// CHECK-LABEL: func.func @landed(
// CHECK: warpspec.partition "load" role(rotary)
// CHECK: %[[S:.*]], %[[P:.*]] = warpspec.ring_slot %[[X:.*]][%[[E:.*]]]
// CHECK-NEXT: warpspec.wait_empty %[[X]][%[[S]]] phase(%[[P]])
// CHECK-NEXT: warpspec.expect_tx %[[X]][%[[S]]] bytes(8192)
// CHECK: warpspec.publish %[[X]][%[[S]]]
// CHECK-NEXT: %[[S2:.*]], %[[P2:.*]] = warpspec.ring_slot %[[X]][%[[E]]]
// CHECK-NEXT: warpspec.wait_full %[[X]][%[[S2]]] phase(%[[P2]]) landed
// CHECK: warpspec.publish %{{.*}}[%{{.*}}] tile
// NVVM: llvm.func @landed(
// NVVM: mbarrier.try_wait.parity
// NVVM: llvm.cond_br
// NVVM: nvvm.mbarrier.expect_tx
// NVVM: llvm.cond_br
// NVVM: nvvm.cp.async.bulk.tensor.shared.cluster.global
// NVVM: nvvm.fence.proxy
// NVVM: nvvm.barrier
// NVVM: nvvm.mbarrier.arrive
// NVVM: mbarrier.try_wait.parity

!act = memref<?x4x64xbf16>
!cu = memref<?xi32>
!tile = !warpspec.buffer<64x64xbf16, smem>
!one = !warpspec.channel<[64x64xbf16], smem>
!sig = !warpspec.channel<[], smem>

func.func @landed(%q: !act {blockattn.name = "q"},
                  %cu: !cu {blockattn.name = "cu_seqlens"}) {
  warpspec.kernel chip(sm_90a) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tokens = memref.dim %q, %c0 : !act
    %heads = memref.dim %q, %c1 : !act
    %x = warpspec.channel "x" depth(2) : !one
    %done = warpspec.channel "done" depth(2) : !sig
    warpspec.partition "load" role(rotary) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64) {
        %s, %b = warpspec.acquire %x : !one
        warpspec.tma_load %q[%row, %head] into %b : !act, !tile
        warpspec.commit %s tile(%row, %rows, %head) landed
        %d = warpspec.acquire %done : !sig
        warpspec.commit %d tile(%row, %rows, %head)
      }
    }
    warpspec.partition "sink" role(compute) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64) {
        %s, %b = warpspec.get %x : !one
        %d = warpspec.get %done : !sig
        warpspec.release %d
        warpspec.release %s
      }
    }
  }
  return
}

// -----

// A bulk store staged in the slot it reads (o-store=slot): the store keeps
// the slot's buffer (warpspec.slot_buffers once lowered), the release
// after_stores becomes an arrive_empty after_stores, and in NVVM the
// arriving thread waits for the bulk stores' reads before it arrives.
// CHECK-LABEL: func.func @after_stores(
// CHECK: warpspec.partition "compute"
// CHECK: %[[B:.*]] = warpspec.slot_buffers %{{.*}}[%[[S:[a-z0-9_]+]]]
// CHECK: warpspec.store %{{.*}} via(%[[B]]) bulk
// CHECK-NEXT: warpspec.arrive_empty %{{.*}}[%[[S]]] after_stores
// NVVM: llvm.func @after_stores(
// NVVM: nvvm.cp.async.bulk.tensor.global.shared.cta
// NVVM: nvvm.cp.async.bulk.commit.group
// NVVM: nvvm.barrier id =
// NVVM: nvvm.cp.async.bulk.wait_group 0 {read}
// NVVM-NEXT: nvvm.mbarrier.arrive

!act = memref<?x4x64xbf16>
!cu = memref<?xi32>
!tile = !warpspec.buffer<64x64xbf16, smem>
!one = !warpspec.channel<[64x64xbf16], smem>

func.func @after_stores(%q: !act {blockattn.name = "q"},
                        %o: !act {blockattn.name = "o"},
                        %cu: !cu {blockattn.name = "cu_seqlens"}) {
  warpspec.kernel chip(sm_90a) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %tokens = memref.dim %q, %c0 : !act
    %heads = memref.dim %q, %c1 : !act
    %x = warpspec.channel "x" depth(2) : !one
    warpspec.partition "load" role(load) warps(4) regs(40) {
      warpspec.tile_loop (%row, %rows, %head) in %cu : !cu
          heads(%heads) tokens(%tokens) block_size(64) {
        %s, %b = warpspec.acquire %x : !one
        warpspec.tma_load %q[%row, %head] into %b : !act, !tile
        warpspec.commit %s tile(%row, %rows, %head)
      }
      warpspec.close %x : !one
    }
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      warpspec.consume %x (%s, %row, %rows, %head, %b) : !one {
        %acc = warpspec.mma %b, %b {transpose_b} : !tile, !tile -> !warpspec.acc<64x64xf32>
        warpspec.store %acc to %o[%row, %head] rows(%rows) via(%b) bulk
            : !warpspec.acc<64x64xf32>, !act, !tile
        warpspec.release %s after_stores
      }
    }
  }
  return
}
