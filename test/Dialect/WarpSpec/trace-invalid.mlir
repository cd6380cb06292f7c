// RUN: block-attn-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the trace ops (warpspec.trace_anchor,
// warpspec.trace_lane, warpspec.trace) and of a traced kernel's
// trace_records. The pass's own diagnostics: insert-trace-invalid.mlir.
//
// "records into the lane of another partition" cannot be reached from
// textual IR: another partition's lane is not in scope there (the parser
// reports the undeclared value). It guards C++ builders.

func.func @negative_trace_records(%t: memref<?xi64>) {
  // expected-error @+1 {{'warpspec.kernel' op trace_records must be a power of two in [4, 65536], got 6}}
  warpspec.kernel chip(sm_90a) attributes {trace_records = 6 : i64} {
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      %r, %th = warpspec.partition_index
    }
  }
  return
}

// -----

func.func @negative_trace_untraced_kernel(%t: memref<?xi64>) {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      %r, %th = warpspec.partition_index
      // expected-error @+1 {{'warpspec.trace_lane' op is in a kernel that is not traced (no trace_records: run warpspec-insert-trace)}}
      %lane = warpspec.trace_lane %t[%r] thread(%th) : memref<?xi64>
    }
  }
  return
}

// -----

func.func @negative_anchor_untraced_kernel(%t: memref<?xi64>) {
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      %r, %th = warpspec.partition_index
      // expected-error @+1 {{'warpspec.trace_anchor' op is in a kernel that is not traced}}
      warpspec.trace_anchor %t start : memref<?xi64>
    }
  }
  return
}

// -----

func.func @negative_anchor_neither(%t: memref<?xi64>) {
  warpspec.kernel chip(sm_90a) attributes {trace_records = 4 : i64} {
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      %r, %th = warpspec.partition_index
      // expected-error @+1 {{'warpspec.trace_anchor' op must be either `start` or `end`}}
      warpspec.trace_anchor %t : memref<?xi64>
    }
  }
  return
}

// -----

func.func @negative_anchor_both(%t: memref<?xi64>) {
  warpspec.kernel chip(sm_90a) attributes {trace_records = 4 : i64} {
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      %r, %th = warpspec.partition_index
      // expected-error @+1 {{'warpspec.trace_anchor' op must be either `start` or `end`}}
      warpspec.trace_anchor %t start end : memref<?xi64>
    }
  }
  return
}

// -----

// Thread 0 of the CTA writes the anchors: they stand in warp 0's partition.
func.func @negative_anchor_not_on_warp0(%t: memref<?xi64>) {
  warpspec.kernel chip(sm_90a) attributes {trace_records = 4 : i64} {
    warpspec.partition "a" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      %r, %th = warpspec.partition_index
    }
    warpspec.partition "b" role(compute) warps(4) regs(128) first_warp(4) barrier_base(2) {
      %r, %th = warpspec.partition_index
      // expected-error @+1 {{'warpspec.trace_anchor' op is in partition "b", which does not run on warp 0 (thread 0 of the CTA writes the anchors)}}
      warpspec.trace_anchor %t end : memref<?xi64>
    }
  }
  return
}

// -----

func.func @negative_anchor_end_outside_partition(%t: memref<?xi64>) {
  warpspec.kernel chip(sm_90a) attributes {trace_records = 4 : i64} {
    // expected-error @+1 {{'warpspec.trace_anchor' op end must stand in the partition that runs on warp 0, not directly in the warpspec.kernel}}
    warpspec.trace_anchor %t end : memref<?xi64>
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      %r, %th = warpspec.partition_index
    }
  }
  return
}

// -----

// The start is read before the barrier that releases the roles: a start in
// a partition could follow the other roles' first events.
func.func @negative_anchor_start_in_partition(%t: memref<?xi64>) {
  warpspec.kernel chip(sm_90a) attributes {trace_records = 4 : i64} {
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      %r, %th = warpspec.partition_index
      // expected-error @+1 {{'warpspec.trace_anchor' op start is in partition "p": it must stand directly in the warpspec.kernel, before the partitions start}}
      warpspec.trace_anchor %t start : memref<?xi64>
    }
  }
  return
}

// -----

func.func @negative_anchor_outside_kernel(%t: memref<?xi64>) {
  // expected-error @+1 {{'warpspec.trace_anchor' op expects parent op to be one of 'warpspec.kernel, warpspec.partition'}}
  warpspec.trace_anchor %t start : memref<?xi64>
  return
}

// -----

// The buffer is 8-byte words.
func.func @negative_trace_buffer_type(%t: memref<?xi32>) {
  warpspec.kernel chip(sm_90a) attributes {trace_records = 4 : i64} {
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      %r, %th = warpspec.partition_index
      // expected-error @+1 {{'warpspec.trace_lane' op operand #0 must be 1D memref of 64-bit signless integer values}}
      %lane = warpspec.trace_lane %t[%r] thread(%th) : memref<?xi32>
    }
  }
  return
}

// -----

func.func @negative_lane_thread(%t: memref<?xi64>) {
  warpspec.kernel chip(sm_90a) attributes {trace_records = 4 : i64} {
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      %r, %th = warpspec.partition_index
      // expected-error @+1 {{'warpspec.trace_lane' op takes a thread that is not the `thread` result of a warpspec.partition_index}}
      %lane = warpspec.trace_lane %t[%r] thread(%r) : memref<?xi64>
    }
  }
  return
}

// -----

func.func @negative_lane_replica(%t: memref<?xi64>) {
  warpspec.kernel chip(sm_90a) attributes {trace_records = 4 : i64} {
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      %r, %th = warpspec.partition_index
      // expected-error @+1 {{'warpspec.trace_lane' op takes a replica that is not the `replica` result of the partition's warpspec.partition_index}}
      %lane = warpspec.trace_lane %t[%th] thread(%th) : memref<?xi64>
    }
  }
  return
}

// -----

func.func @negative_lane_outside_partition(%t: memref<?xi64>, %x: i32) {
  warpspec.kernel chip(sm_90a) attributes {trace_records = 4 : i64} {
    // expected-error @+1 {{'warpspec.trace_lane' op expects parent op 'warpspec.partition'}}
    %lane = warpspec.trace_lane %t[%x] thread(%x) : memref<?xi64>
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      %r, %th = warpspec.partition_index
    }
  }
  return
}

// -----

func.func @negative_trace_detail(%t: memref<?xi64>) {
  warpspec.kernel chip(sm_90a) attributes {trace_records = 4 : i64} {
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      %r, %th = warpspec.partition_index
      %lane = warpspec.trace_lane %t[%r] thread(%th) : memref<?xi64>
      // expected-error @+1 {{'warpspec.trace' op detail must be in [0, 255] (one byte of the event code), got 256}}
      warpspec.trace %lane wait_begin detail(256)
    }
  }
  return
}

// -----

// A lane from above the kernel is no lane.
func.func @negative_trace_lane_not_from_trace_lane(%lane: !warpspec.trace) {
  warpspec.kernel chip(sm_90a) attributes {trace_records = 4 : i64} {
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      %r, %th = warpspec.partition_index
      // expected-error @+1 {{'warpspec.trace' op takes a lane that is not the result of a warpspec.trace_lane}}
      warpspec.trace %lane tile_begin
    }
  }
  return
}

// -----

func.func @negative_trace_event(%t: memref<?xi64>) {
  warpspec.kernel chip(sm_90a) attributes {trace_records = 4 : i64} {
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      %r, %th = warpspec.partition_index
      %lane = warpspec.trace_lane %t[%r] thread(%th) : memref<?xi64>
      // expected-error @+2 {{expected valid keyword or string}}
      // expected-error @+1 {{failed to parse WarpSpec_TraceEventAttr parameter 'value' which is to be a `::mlir::warpspec::TraceEvent`}}
      warpspec.trace %lane 7
    }
  }
  return
}
