// A kernel whose manifest carries a bool, a unit and a negative integer next to
// the required keys (robustness.test): each keeps its JSON type and value.
gpu.module @manifest_values [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  llvm.func @manifest_values() attributes {blockattn.manifest = {kernel = "manifest_values", chip = "sm_90a", threads = 128 : i64, smem_bytes = 0 : i64, params = [], partitions = [{name = "load", warps = 4 : i64}], yes = true, no = false, unit, negative = -3 : i64}} {
    llvm.return
  }
}
