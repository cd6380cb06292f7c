// RUN: block-attn-opt %s --pass-pipeline='builtin.module(warpspec-allocate-smem,warpspec-dispatch-partitions,convert-warpspec-to-nvvm)' | FileCheck %s --implicit-check-not=warpspec.

// warpspec.pin with after(%v): the address plus min(v, 0), then the empty
// side-effecting asm of a plain pin. LLVM and ptxas cannot fold min(v, 0)
// (v is a run-time i32), so the descriptors derived from the result are not
// hoisted out of the loops v changes in (the sm_100a grouped backward at
// block size 128 in passes pins its MMA operands after the query head). A
// plain pin has no min.

!tile = !warpspec.buffer<64x64xbf16, smem>

// CHECK-LABEL: llvm.func @pin_after
// CHECK: %[[ZERO:.*]] = llvm.intr.smin(%[[HEAD:.*]], %{{.*}}) : (i32, i32) -> i32
// CHECK-NEXT: %[[SUM:.*]] = llvm.add %[[ADDR:.*]], %[[ZERO]] : i32
// CHECK-NEXT: %{{.*}} = llvm.inline_asm has_side_effects asm_dialect = att "", "=r,0" %[[SUM]] : (i32) -> i32
// CHECK-NEXT: llvm.inttoptr
// CHECK: %[[R:.*]] = llvm.intr.smin(%[[HEAD]], %{{.*}}) : (i32, i32) -> i32
// CHECK-NEXT: %[[ROW:.*]] = llvm.add %[[ROW0:.*]], %[[R]] : i32
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "", "=r,0" %[[ROW]] : (i32) -> i32
// CHECK-NEXT: llvm.inline_asm has_side_effects asm_dialect = att "", "=r,0" %[[ROW0]] : (i32) -> i32
func.func @pin_after(%cu: memref<?xi32> {blockattn.name = "cu_seqlens"}) {
  warpspec.kernel chip("sm_90a") {
    warpspec.partition "compute" role(compute) warps(4) regs(232) {
      %head = warpspec.replica_id
      %c7 = arith.constant 7 : i32
      %row = arith.addi %head, %c7 : i32
      %q = warpspec.scratch : !tile
      %p = warpspec.pin %q after(%head) : !tile
      %r = warpspec.pin %row after(%head) : i32
      %plain = warpspec.pin %row : i32
    }
  }
  return
}
