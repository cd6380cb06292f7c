// RUN: block-attn-opt %s -split-input-file -verify-diagnostics --warpspec-insert-trace
// RUN: not block-attn-opt %S/insert-trace.mlir --warpspec-insert-trace=records=0 2>&1 | FileCheck %s --check-prefix=RECORDS

// The diagnostics of warpspec-insert-trace.

// RECORDS: error: 'warpspec.kernel' op cannot be traced with 0 records per lane; warpspec-insert-trace takes a power of two from 4 to 65536

func.func @traced_twice(%t: memref<?xi64>) {
  // expected-error @+1 {{'warpspec.kernel' op is traced already (trace_records)}}
  warpspec.kernel chip(sm_90a) attributes {trace_records = 4 : i64} {
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      %r, %th = warpspec.partition_index
    }
  }
  return
}

// -----

// The events bracket the dispatched ops, and the lanes need the partitions'
// indices.
func.func @not_dispatched() {
  warpspec.kernel chip(sm_90a) {
    // expected-error @+1 {{'warpspec.partition' op is not placed on warps: run warpspec-dispatch-partitions before warpspec-insert-trace}}
    warpspec.partition "p" role(compute) warps(4) regs(128) {
    }
  }
  return
}

// -----

// The buffer becomes an argument of the kernel's function.
func.func @not_alone() {
  // expected-error @+1 {{'warpspec.kernel' op must be the only operation (besides its return) of a function, which takes the trace buffer as its argument}}
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      %r, %th = warpspec.partition_index
    }
  }
  %c0 = arith.constant 0 : i32
  return
}

// -----

// A traced kernel is named <name>_trace; that name must be free.
func.func @k() {
  // expected-error @+1 {{'warpspec.kernel' op cannot be traced as 'k_trace': that symbol exists}}
  warpspec.kernel chip(sm_90a) {
    warpspec.partition "p" role(compute) warps(4) regs(128) first_warp(0) barrier_base(1) {
      %r, %th = warpspec.partition_index
    }
  }
  return
}
func.func @k_trace() {
  return
}
