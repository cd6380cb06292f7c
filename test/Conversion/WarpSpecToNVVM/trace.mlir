// RUN: block-attn-opt %s --convert-warpspec-to-nvvm | FileCheck %s

// The trace ops, lowered: the buffer is a pointer parameter and its length
// (8-byte words); a lane is the buffer and a per-thread variable holding the
// index of the thread's next record (0: do not record); an anchor reads
// %globaltimer and %clock64 together; a record reads %clock64 and writes 16
// bytes. Three lanes (a load partition and two compute replicas) of 4
// records, after the header's slot of 4: (1 + 3) x 4 x 16 = 256 bytes, 16
// records, per CTA.

func.func @traced(%trace: memref<?xi64> {blockattn.name = "trace"}) {
  warpspec.kernel chip(sm_90a) attributes {smem_bytes = 1024 : i64, trace_records = 4 : i64} {
    warpspec.trace_anchor %trace start : memref<?xi64>
    warpspec.partition "load" role(load) warps(4) regs(40) first_warp(0) barrier_base(1) {
      %replica, %thread = warpspec.partition_index
      %lane = warpspec.trace_lane %trace[%replica] thread(%thread) : memref<?xi64>
      warpspec.single_thread %thread {
        warpspec.trace %lane copy
      }
      warpspec.trace_anchor %trace end : memref<?xi64>
    }
    warpspec.partition "compute" role(compute) warps(4) regs(40) replicas(2) first_warp(4) barrier_base(2) {
      %replica, %thread = warpspec.partition_index
      %lane = warpspec.trace_lane %trace[%replica] thread(%thread) : memref<?xi64>
      %c7 = arith.constant 7 : i32
      warpspec.trace %lane tile_begin value(%c7)
      warpspec.trace %lane wait_end detail(2)
    }
  }
  return
}

// The buffer's pointer and length, and the manifest's description of it.
// CHECK-LABEL: gpu.module @traced
// CHECK: llvm.func @traced(%[[BUF:.*]]: !llvm.ptr<1>, %[[WORDS:.*]]: i32)
// CHECK-SAME: params = [{dtype = "i64", kind = "pointer", name = "trace", tensor = "trace", value = "base"}, {dim = 0 : i64, kind = "i32", name = "trace_size0", tensor = "trace", value = "size"}]
// CHECK-SAME: trace = {channels = [], cta_bytes = 256 : i64, events = ["none", "tile_begin", "tile_end", "wait_begin", "wait_end", "arrive", "copy", "mma_begin", "mma_end", "softmax_begin", "softmax_end", "store_begin", "store_end", "rotate_begin", "rotate_end", "tmem_begin", "tmem_end"], header = ["start_globaltimer", "start_clock", "end_globaltimer", "end_clock", "smid"], header_bytes = 64 : i64, lanes = [{partition = "load", replica = 0 : i64, role = "load"}, {partition = "compute", replica = 0 : i64, role = "compute"}, {partition = "compute", replica = 1 : i64, role = "compute"}], param = "trace", record = ["clock:u64", "event:u8", "detail:u8", "pad:u16", "value:i32"], record_bytes = 16 : i64, records_per_lane = 4 : i64}
// One record counter per partition, in the entry block.
// CHECK: %[[COMPUTE_CURSOR:.*]] = llvm.alloca %{{.*}} x i32
// CHECK: %[[LOAD_CURSOR:.*]] = llvm.alloca %{{.*}} x i32
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x

// The start anchor, before the barrier that releases the partitions: thread
// 0 of the CTA, the timer and the clock together, then the SM.
// CHECK: llvm.icmp "eq" %[[TID]], %{{.*}} : i32
// CHECK: nvvm.read.ptx.sreg.globaltimer : i64
// CHECK-NEXT: nvvm.read.ptx.sreg.clock64 : i64
// CHECK: nvvm.read.ptx.sreg.smid : i32
// CHECK: nvvm.barrier0

// The load partition's lane: 32 words per CTA, its region inside the
// buffer; its first record is 16 x CTA + 4 x (1 + lane); thread 0 records,
// the others hold 0.
// CHECK: %[[CTA:.*]] = nvvm.read.ptx.sreg.ctaid.x
// CHECK: %[[CTA64:.*]] = llvm.zext %[[CTA]] : i32 to i64
// CHECK: %[[FIRST:.*]] = llvm.mul %[[CTA64]], %{{.*}} : i64
// CHECK: %[[END:.*]] = llvm.add %[[FIRST]], %{{.*}} : i64
// CHECK: %[[FITS:.*]] = llvm.icmp "ule" %[[END]], %{{.*}} : i64
// CHECK: %[[CTA2:.*]] = nvvm.read.ptx.sreg.ctaid.x
// CHECK: %[[LANEIDX:.*]] = llvm.add %{{.*}}, %{{.*}} : i32
// CHECK: %[[FOUR:.*]] = llvm.mlir.constant(4 : i32) : i32
// CHECK: %[[LANESTART:.*]] = llvm.mul %[[LANEIDX]], %[[FOUR]] : i32
// CHECK: %[[SIXTEEN:.*]] = llvm.mlir.constant(16 : i32) : i32
// CHECK: %[[REGIONSTART:.*]] = llvm.mul %[[CTA2]], %[[SIXTEEN]] : i32
// CHECK: %[[START:.*]] = llvm.add %[[REGIONSTART]], %[[LANESTART]] : i32
// CHECK: %[[RECORDER:.*]] = llvm.and %{{.*}}, %[[FITS]] : i1
// CHECK: %[[ZERO:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: %[[INIT:.*]] = llvm.select %[[RECORDER]], %[[START]], %[[ZERO]]
// CHECK: llvm.store %[[INIT]], %[[LOAD_CURSOR]]

// A record (copy = 6) unless the index is 0: the clock, then the code, at
// the buffer's record %N; then the next index, or 0 past the lane's last
// record (N + 1 a multiple of 4).
// CHECK: %[[N:.*]] = llvm.load %[[LOAD_CURSOR]] : !llvm.ptr -> i32
// CHECK: llvm.icmp "ne" %[[N]], %{{.*}} : i32
// CHECK: %[[CLOCK:.*]] = nvvm.read.ptx.sreg.clock64 : i64
// CHECK: %[[AT:.*]] = llvm.getelementptr %[[BUF]][%{{.*}}]
// CHECK: llvm.store %[[CLOCK]], %[[AT]] {alignment = 16 : i64}
// CHECK: %[[CODE:.*]] = llvm.mlir.constant(6 : i64) : i64
// CHECK: llvm.store %[[CODE]], %{{.*}} {alignment = 8 : i64}
// CHECK: %[[NEXT:.*]] = llvm.add %[[N]], %{{.*}} : i32
// CHECK: %[[MASK:.*]] = llvm.mlir.constant(3 : i32) : i32
// CHECK: %[[LOW:.*]] = llvm.and %[[NEXT]], %[[MASK]] : i32
// CHECK: %[[FULL:.*]] = llvm.icmp "eq" %[[LOW]], %{{.*}} : i32
// CHECK: %[[AFTER:.*]] = llvm.select %[[FULL]], %{{.*}}, %[[NEXT]] : i1, i32
// CHECK: llvm.store %[[AFTER]], %[[LOAD_CURSOR]]

// The end anchor: words 2 and 3.
// CHECK: nvvm.read.ptx.sreg.globaltimer : i64
// CHECK-NEXT: nvvm.read.ptx.sreg.clock64 : i64
// CHECK: llvm.mlir.constant(2 : i64) : i64
// CHECK: llvm.mlir.constant(3 : i64) : i64

// The compute replicas: lanes 1 + replica, after the header's slot.
// CHECK: %[[TWO:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK: llvm.add %[[TWO]], %{{.*}} : i32
// CHECK: llvm.store %{{.*}}, %[[COMPUTE_CURSOR]]
// tile_begin (1) with the value 7 in the upper 4 bytes; wait_end (4) with
// detail 2: 4 | 2 << 8.
// CHECK: llvm.mlir.constant(7 : i32) : i32
// CHECK: nvvm.read.ptx.sreg.clock64
// CHECK: %[[SHIFT:.*]] = llvm.mlir.constant(32 : i64) : i64
// CHECK: llvm.shl %{{.*}}, %[[SHIFT]] : i64
// CHECK: nvvm.read.ptx.sreg.clock64
// CHECK: llvm.mlir.constant(516 : i64) : i64
