// RUN: block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a schedule=chunked" | FileCheck %s
// RUN: block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a tiles-per-cta=16" | FileCheck %s
// RUN: block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a tiles-per-cta=8" | FileCheck %s --check-prefix=EIGHT
// RUN: block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a" | FileCheck %s --check-prefix=DEFAULT
// RUN: not block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a tiles-per-cta=16 rotary-warpgroup=off" 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: not block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a tiles-per-cta=16 num-consumers=2 rotary-warpgroups=1" 2>&1 | FileCheck %s --check-prefix=TWO
// RUN: rm -rf %t && block-attn-compile %s --chip=sm_90a --tiles-per-cta=16 -o %t --no-header | FileCheck %s --check-prefix=TABLE
// RUN: %ptxas -arch=sm_90a -v %t/forward_d128.ptx -o %t/forward_d128.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: %ptxas -arch=sm_90a -v %t/backward_d128.ptx -o %t/backward_d128.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// The sm_90a rotary kernels at head dim 128 (block size 64), launched
// chunked when asked (schedule=chunked or tiles-per-cta), have one CTA per
// SM, 16 tiles a CTA: the persistent launch's warpgroups (the forward's two
// rotary warpgroups and one consumer of 256 registers, the backward's one
// rotary warpgroup of 208 and one consumer of 256) in a grid that the
// hardware hands out in order (H100, seed: 1-2% faster than persistent,
// docs/performance-notes.md, run 23 of the rotary log; not the default: a
// grid of fewer CTAs than SMs would leave SMs idle).
// CHECK-LABEL: func.func @forward_d128
// CHECK: warpspec.kernel chip(sm_90a) attributes {info = {{{.*}}head_dim = 128 : i64, kind = "forward", rotary = "interleaved"{{.*}}}, tiles_per_cta = 16 : i64} {
// CHECK-NOT: ctas_per_sm
// CHECK: warpspec.partition "load" role(load) warps(4) regs(40) {
// CHECK: warpspec.partition "rotary" role(rotary) warps(4) regs(104) replicas(2) {
// CHECK: warpspec.partition "compute" role(compute) warps(4) regs(256) {
// CHECK-LABEL: func.func @backward_d128
// CHECK: warpspec.kernel chip(sm_90a) attributes {info = {{{.*}}head_dim = 128 : i64, kind = "backward", rotary = "half_split"{{.*}}}, tiles_per_cta = 16 : i64} {
// CHECK: warpspec.partition "load" role(load) warps(4) regs(40) {
// CHECK: warpspec.partition "rotary" role(rotary) warps(4) regs(208) {
// CHECK: warpspec.partition "compute" role(compute) warps(4) regs(256) {

// tiles-per-cta applies to this launch.
// EIGHT: warpspec.kernel chip(sm_90a) attributes {{{.*}}kind = "forward"{{.*}}tiles_per_cta = 8 : i64} {
// EIGHT: warpspec.kernel chip(sm_90a) attributes {{{.*}}kind = "backward"{{.*}}tiles_per_cta = 8 : i64} {

// By default persistent, with the same warpgroups.
// DEFAULT-NOT: tiles_per_cta
// DEFAULT: warpspec.partition "rotary" role(rotary) warps(4) regs(104) replicas(2) {
// DEFAULT: warpspec.partition "rotary" role(rotary) warps(4) regs(208) {

// Without a rotary warpgroup or with two consumers, tiles-per-cta alone
// does not make the launch chunked (it is refused as for any persistent
// launch).
// OFF: error: 'blockattn.forward' op tiles-per-cta applies to a chunked launch
// TWO: error: 'blockattn.forward' op tiles-per-cta applies to a chunked launch

// TABLE: {{^}}forward_d128{{ +}}sm_90a{{ +}}load:4w/40r rotary:8w/104r compute:4w/256r
// TABLE: {{^}}backward_d128{{ +}}sm_90a{{ +}}load:4w/40r rotary:4w/208r compute:4w/256r
// PTXAS: 0 bytes spill stores, 0 bytes spill loads

!act = memref<?x4x128xbf16>
!cu = memref<?xi32>
!tab = memref<?x64xf32>
func.func @forward_d128(%q: !act, %k: !act, %v: !act, %o: !act, %cu: !cu,
                        %cos: !tab, %sin: !tab) {
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu : !cu) rotary(%cos, %sin : !tab, !tab)
      {head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<interleaved>}
  return
}

func.func @backward_d128(%q: !act, %k: !act, %v: !act, %do: !act,
                         %dq: !act, %dk: !act, %dv: !act, %cu: !cu,
                         %cos: !tab, %sin: !tab) {
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act) cu_seqlens(%cu : !cu)
      rotary(%cos, %sin : !tab, !tab)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>}
  return
}
