func.func @f(%b: !warpspec.buffer<4x4611686018427387904xbf16, smem>) {
  return
}
