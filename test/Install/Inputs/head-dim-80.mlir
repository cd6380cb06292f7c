// Input of consumer.test: the installed verifier, run by the consumer's own
// opt tool, rejects what blockattn does not support.

func.func @consumer_head_dim_80(%q: memref<?x4x80xbf16>, %cu: memref<?xi32>) {
  // expected-error @+1 {{'blockattn.forward' op unsupported head_dim 80; supported head dims: 32, 64, 96, 128, 192, 256}}
  blockattn.forward q(%q : memref<?x4x80xbf16>) k(%q : memref<?x4x80xbf16>)
      v(%q : memref<?x4x80xbf16>) o(%q : memref<?x4x80xbf16>)
      cu_seqlens(%cu : memref<?xi32>) {head_dim = 80 : i64, element_type = bf16}
  return
}
