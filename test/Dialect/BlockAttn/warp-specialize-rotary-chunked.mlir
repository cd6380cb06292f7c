// RUN: block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a schedule=chunked" | FileCheck %s
// RUN: block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a tiles-per-cta=16" | FileCheck %s
// RUN: block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a rotary-warpgroup=off" | FileCheck %s --check-prefix=OFF
// RUN: rm -rf %t && block-attn-compile %s --chip=sm_90a --schedule=chunked -o %t --no-header | FileCheck %s --check-prefix=TABLE
// RUN: %ptxas -arch=sm_90a -v %t/forward_d64.ptx -o %t/forward_d64.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: not block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a rotary-warpgroups=2 schedule=chunked" 2>&1 | FileCheck %s --check-prefix=TWO

// The sm_90a half-split rotary forward at head dim 64 without positions or
// rotate_v launches chunked when asked (schedule=chunked or tiles-per-cta;
// under auto from session 28 to 36, persistent and claiming its tiles since
// session 37: run 34): two CTAs an SM, each a producer (40 registers),
// a rotary warpgroup (72) that rotates each slot in place, and one consumer
// (128), 16 tiles a CTA (the others, chunked when asked, with rotate_v: 64
// and 136 registers, 32 tiles). The two CTAs' rotations and products overlap
// (docs/performance-notes.md, run 13 of the rotary log); the other rotary
// forwards at 64 launch persistent since session 28 (run 17).
// CHECK: warpspec.kernel chip(sm_90a) attributes {ctas_per_sm = 2 : i64, info = {{{.*}}head_dim = 64 : i64, kind = "forward", rotary = "half_split"{{.*}}}, tiles_per_cta = 16 : i64} {
// CHECK: warpspec.channel "qkv" depth(4)
// CHECK: warpspec.channel "rotated" depth(4) : <[], smem>
// CHECK: warpspec.partition "load" role(load) warps(4) regs(40) {
// CHECK: warpspec.partition "rotary" role(rotary) warps(4) regs(72) {
// CHECK: warpspec.rotate(
// CHECK: warpspec.partition "compute" role(compute) warps(4) regs(128) {
// CHECK-NOT: warpspec.rotate(
// CHECK: return

// Without the rotary warpgroup the consumers rotate, persistent, two of them.
// OFF: warpspec.kernel chip(sm_90a) attributes {info = {{{.*}}head_dim = 64 : i64, kind = "forward", rotary = "half_split"{{.*}}}} {
// OFF: warpspec.partition "compute" role(compute) warps(4) regs(232) replicas(2) {
// OFF: warpspec.rotate(

// TABLE: {{^}}forward_d64{{ +}}sm_90a{{ +}}load:4w/40r rotary:4w/72r compute:4w/128r{{ +}}- 107504 0
// PTXAS: 0 bytes spill stores, 0 bytes spill loads

// Two rotary warpgroups do not fit two CTAs an SM.
// TWO: error: 'blockattn.forward' op rotary-warpgroups=2 needs one CTA per SM (two CTAs of four warpgroups leave a consumer 88 registers), got ctas-per-sm=2

!act64 = memref<?x4x64xbf16>
!cu = memref<?xi32>
!tab32 = memref<?x32xf32>
func.func @forward_d64(%q: !act64, %k: !act64, %v: !act64, %o: !act64, %cu: !cu,
                       %cos: !tab32, %sin: !tab32) {
  blockattn.forward q(%q : !act64) k(%k : !act64) v(%v : !act64) o(%o : !act64)
      cu_seqlens(%cu : !cu) rotary(%cos, %sin : !tab32, !tab32)
      {head_dim = 64 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}
