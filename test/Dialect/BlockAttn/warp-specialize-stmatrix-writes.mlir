// RUN: block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a stmatrix-writes=on" | FileCheck %s --check-prefix=ON --implicit-check-not="warpspec.write %{{[0-9a-z_#]+}}, %{{[0-9a-z_#]+}} :" --implicit-check-not="bulk :"
// RUN: block-attn-opt %s -blockattn-warp-specialize="chip=sm_100a stmatrix-writes=on" | FileCheck %s --check-prefix=ON --implicit-check-not="warpspec.write %{{[0-9a-z_#]+}}, %{{[0-9a-z_#]+}} :" --implicit-check-not="bulk :"
// RUN: block-attn-opt %s -blockattn-warp-specialize="chip=sm_90a" | FileCheck %s --check-prefix=AUTO --implicit-check-not=stmatrix
// RUN: block-attn-opt %s -blockattn-warp-specialize="chip=sm_100a stmatrix-writes=off" | FileCheck %s --check-prefix=AUTO --implicit-check-not=stmatrix

// stmatrix-writes=on marks every register tile written to shared memory
// with stmatrix, on both chips: P and dS for the products that read them
// there (warpspec.write) and the gradients staged for their bulk stores
// (warpspec.store ... via(...)); tile-math-stmatrix.mlir has the lowering.
// auto (for now) and off mark none.

// ON: warpspec.write {{.*}} {stmatrix}
// ON: warpspec.store {{.*}} via({{.*}}) bulk {stmatrix}
// AUTO: warpspec.write
// AUTO: warpspec.store
func.func @backward(%q: memref<?x4x64xbf16>, %k: memref<?x4x64xbf16>,
                    %v: memref<?x4x64xbf16>, %do: memref<?x4x64xbf16>,
                    %dq: memref<?x4x64xbf16>, %dk: memref<?x4x64xbf16>,
                    %dv: memref<?x4x64xbf16>, %cu: memref<?xi32>) {
  blockattn.backward q(%q : memref<?x4x64xbf16>) k(%k : memref<?x4x64xbf16>)
      v(%v : memref<?x4x64xbf16>) do(%do : memref<?x4x64xbf16>)
      dq(%dq : memref<?x4x64xbf16>) dk(%dk : memref<?x4x64xbf16>)
      dv(%dv : memref<?x4x64xbf16>) cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 64 : i64, block_size = 128 : i64, element_type = bf16}
  return
}
