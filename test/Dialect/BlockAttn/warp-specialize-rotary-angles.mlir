// RUN: block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a schedule=strided rotary-warpgroup=on rotary-warpgroups=2 rotary-angles=per-tile" | FileCheck %s --check-prefix=TILE
// RUN: block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a schedule=strided rotary-warpgroup=on rotary-warpgroups=2 rotary-angles=per-product" | FileCheck %s --check-prefix=PRODUCT
// RUN: block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a" | FileCheck %s --check-prefix=TILE
// RUN: block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a rotary-warpgroups=1 num-consumers=2" | FileCheck %s --check-prefix=TWO

// rotary-angles: when the sm_90a rotary backward's consumer reads the
// angles that turn its gradients back (dv with rotate_v, dk, dq).
//
// per-tile (TILE; what auto picks here, with one consumer of 256 registers
// next to the rotary warpgroup): one warpspec.rotary_angles per tile, issued as the tile
// arrives, before the consumer waits for the rotary warpgroup's "rotated"
// signal, so that the table reads overlap that wait and the tile's first
// products; all three warpspec.rotate_tile {inverse} take it.
// (Two rotary warpgroups have 104 registers each, the one of the default
// 208, the rest of the three warpgroups' pool.)
// TILE: warpspec.partition "rotary" role(rotary) warps(4) regs({{104|208}})
// TILE: warpspec.partition "compute" role(compute) warps(4) regs(256)
// TILE: warpspec.consume
// TILE: %[[ANGLES:.*]] = warpspec.rotary_angles rows({{.*}}) cos({{.*}}) {interleaved = false} : <64x128xf32>
// TILE-NEXT: %[[SIGNAL:.*]] = warpspec.get
// TILE-NEXT: warpspec.release %[[SIGNAL]]
// TILE-NOT: warpspec.rotary_angles
// TILE: warpspec.rotate_tile %{{.*}} angles(%[[ANGLES]] : !warpspec.acc<64x128xf32>) {interleaved = false, inverse}
// TILE-NOT: warpspec.rotary_angles
// TILE: warpspec.rotate_tile %{{.*}} angles(%[[ANGLES]] : !warpspec.acc<64x128xf32>) {interleaved = false, inverse}
// TILE-NOT: warpspec.rotary_angles
// TILE: warpspec.rotate_tile %{{.*}} angles(%[[ANGLES]] : !warpspec.acc<64x128xf32>) {interleaved = false, inverse}
// TILE-NOT: warpspec.rotary_angles
// TILE: return

// per-product (PRODUCT): each gradient's angles are read just before the
// product that makes it, and held only through it. What auto picks for two
// consumers (TWO), whose 184 registers do not hold the tile's 64 angle
// registers next to an output accumulator.
// PRODUCT: warpspec.partition "compute" role(compute) warps(4) regs(256)
// PRODUCT: warpspec.get
// PRODUCT: %[[A1:.*]] = warpspec.rotary_angles
// PRODUCT-NEXT: warpspec.mma
// PRODUCT-NEXT: warpspec.rotate_tile %{{.*}} angles(%[[A1]] :
// PRODUCT: %[[A2:.*]] = warpspec.rotary_angles
// PRODUCT-NEXT: warpspec.mma
// PRODUCT-NEXT: warpspec.rotate_tile %{{.*}} angles(%[[A2]] :
// PRODUCT: %[[A3:.*]] = warpspec.rotary_angles
// PRODUCT-NEXT: warpspec.mma
// PRODUCT-NEXT: warpspec.release
// PRODUCT-NEXT: warpspec.rotate_tile %{{.*}} angles(%[[A3]] :

// TWO: warpspec.partition "compute" role(compute) warps(4) regs(184) replicas(2)
// TWO: warpspec.get
// TWO-NEXT: warpspec.release
// TWO-NEXT: warpspec.mma
// TWO-COUNT-3: warpspec.rotary_angles

// Values other than the three: warp-specialize-invalid-options.mlir.

!act = memref<?x4x128xbf16>
!cu = memref<?xi32>
!tab = memref<?x64xf32>
func.func @backward_rotate_v(%q: !act, %k: !act, %v: !act, %do: !act,
                             %dq: !act, %dk: !act, %dv: !act, %cu: !cu,
                             %cos: !tab, %sin: !tab) {
  blockattn.backward q(%q : !act) k(%k : !act) v(%v : !act) do(%do : !act)
      dq(%dq : !act) dk(%dk : !act) dv(%dv : !act) cu_seqlens(%cu : !cu)
      rotary(%cos, %sin : !tab, !tab)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16,
       rotary = #blockattn.rotary<half_split>, rotate_v}
  return
}
