// A kernel whose manifest's partitions are not dictionaries (robustness.test).
gpu.module @bad_partitions [#nvvm.target<chip = "sm_90a", features = "+ptx86">] {
  llvm.func @bad_partitions() attributes {blockattn.manifest = {kernel = "bad_partitions", chip = "sm_90a", threads = 128 : i64, smem_bytes = 0 : i64, params = [], partitions = [1, 2]}} {
    llvm.return
  }
}
