// A gpu.module without a target attribute (robustness.test).
gpu.module @no_targets {
  llvm.func @no_targets() attributes {blockattn.manifest = {kernel = "no_targets", chip = "sm_90a", threads = 128 : i64, smem_bytes = 0 : i64, params = [], partitions = []}} {
    llvm.return
  }
}
