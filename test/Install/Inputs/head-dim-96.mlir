// Input of consumer.test: the installed verifier, run by the consumer's own
// opt tool, rejects what blockattn does not support.

func.func @consumer_head_dim_96(%q: memref<?x4x96xbf16>, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.forward' op unsupported head_dim 96; supported head dims: 64, 128}}
  blockattn.forward q(%q : memref<?x4x96xbf16>) k(%q : memref<?x4x96xbf16>)
      v(%q : memref<?x4x96xbf16>) o(%q : memref<?x4x96xbf16>)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 96 : i64, element_type = bf16}
  return
}
