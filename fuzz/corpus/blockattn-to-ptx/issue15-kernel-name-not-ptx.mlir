!act = memref<?x4x128xbf16>
func.func @"my-kernel"(%q: !act, %k: !act, %v: !act, %o: !act, %cu_seqlens: memref<?xi32>) {
  blockattn.forward q(%q : !act) k(%k : !act) v(%v : !act) o(%o : !act)
      cu_seqlens(%cu_seqlens : memref<?xi32>)
      {block_size = 64 : i64, head_dim = 128 : i64, element_type = bf16}
  return
}
