// RUN: split-file %s %t
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_90a softmax-full-tiles=on" | FileCheck %t/forward.mlir --check-prefix=FULL
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_100a softmax-full-tiles=on" | FileCheck %t/forward.mlir --check-prefix=FULL
// RUN: block-attn-opt %t/backward.mlir -blockattn-warp-specialize="chip=sm_90a softmax-full-tiles=on" | FileCheck %t/backward.mlir --check-prefix=FULL
// RUN: block-attn-opt %t/backward.mlir -blockattn-warp-specialize="chip=sm_100a softmax-full-tiles=on" | FileCheck %t/backward.mlir --check-prefix=FULL
// RUN: block-attn-opt %t/forward.mlir -blockattn-warp-specialize="chip=sm_90a" | FileCheck %t/forward.mlir --check-prefix=AUTO --implicit-check-not=full_tile_path
// RUN: block-attn-opt %t/backward.mlir -blockattn-warp-specialize="chip=sm_90a softmax-full-tiles=off" | FileCheck %t/backward.mlir --check-prefix=AUTO --implicit-check-not=full_tile_path
// RUN: block-attn-opt %t/causal.mlir -blockattn-warp-specialize="chip=sm_90a softmax-full-tiles=on" | FileCheck %t/causal.mlir --check-prefix=CAUSAL --implicit-check-not=full_tile_path

// softmax-full-tiles=on marks every softmax without a causal or packed-block
// mask with full_tile_path (its lowering branches to a copy without masks on
// a full tile: tile-math-full-tile.mlir), on both chips; auto (for now) and
// off mark none, and a causal softmax is never marked.

//--- forward.mlir
// FULL: warpspec.softmax {{.*}} {full_tile_path}
// AUTO: warpspec.softmax
func.func @forward(%q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
                   %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>,
                   %cu: memref<?xi32>) {
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16}
  return
}

//--- backward.mlir
// The block-128 backward: each query half's softmax, with valid_rows.
// FULL: warpspec.softmax {{.*}} valid_rows({{.*}} {full_tile_path}
// AUTO: warpspec.softmax
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

//--- causal.mlir
// CAUSAL: warpspec.softmax {{.*}} causal
func.func @causal(%q: memref<?x4x128xbf16>, %k: memref<?x4x128xbf16>,
                  %v: memref<?x4x128xbf16>, %o: memref<?x4x128xbf16>,
                  %cu: memref<?xi32>) {
  blockattn.forward q(%q : memref<?x4x128xbf16>) k(%k : memref<?x4x128xbf16>)
      v(%v : memref<?x4x128xbf16>) o(%o : memref<?x4x128xbf16>)
      cu_seqlens(%cu : memref<?xi32>)
      {head_dim = 128 : i64, element_type = bf16, causal}
  return
}
