// Where does a TMA box whose inner extent (64 bytes) is narrower than its swizzle span (128 bytes)
// land in shared memory? (Session 22, docs/head-dims.md, "The pair-halves layout on hardware".)
// Global: R rows of D u16 values, value = row * 1000 + column. Map: the kernels' pair-halves map,
// dims (D/2, 2, 1, R), strides (D/2*2 bytes, D*2, D*2), box (32, 2, 1, rows), SWIZZLE_128B; with a
// third argument, two boxes (32, 1, 1, rows), the second 64 bytes into the line. Shared memory is
// prefilled with 0xFFFF; the output compares every 16-byte unit with the dense-rows model the
// kernels assumed. A probe, not product code: the copies are inline PTX.
//   nvcc -arch=sm_90a -O2 -o tma_box_probe bench/tma_box_probe.cu -lcuda
//   ./tma_box_probe 192 1        # D, chunk j  -> 764 of 1024 units differ on an H100 (2026-12-05)
//   ./tma_box_probe 192 1 two    # -> "misaligned address"
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <cstdlib>
// One box (32, 2, 1, rows) at the buffer's start, or (`two`) two boxes (32, 1, 1, rows), half h
// at 64 h bytes; then the shared memory, sentinels and all, to `out`.
__global__ void probe(const __grid_constant__ CUtensorMap map, uint16_t *out, int c0, int words, int two) {
  extern __shared__ __align__(1024) uint16_t smem[];
  __shared__ __align__(8) uint64_t bar;
  for (int i = threadIdx.x; i < words; i += blockDim.x) smem[i] = 0xFFFF;
  __syncthreads();
  uint32_t b = (uint32_t)__cvta_generic_to_shared(&bar);
  uint32_t s = (uint32_t)__cvta_generic_to_shared(smem);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared.b64 [%0], 1;" ::"r"(b));
    asm volatile("fence.proxy.async.shared::cta;");
    asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" ::"r"(b), "r"(32 * 2 * 2 * 64));
    for (int h = 0; h < (two ? 2 : 1); ++h)
      asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];"
                   ::"r"(s + 64 * h), "l"(&map), "r"(c0), "r"(h), "r"(0), "r"(0), "r"(b) : "memory");
    asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.shared.b64 p, [%0], 0; @!p bra W; }" ::"r"(b));
  }
  __syncthreads();
  for (int i = threadIdx.x; i < words; i += blockDim.x) out[i] = smem[i];
}
int main(int argc, char **argv) {
  int D = argc > 1 ? atoi(argv[1]) : 192, R = 64, rows = 64, j = argc > 2 ? atoi(argv[2]) : 1, two = argc > 3;
  std::vector<uint16_t> h(R * D);
  for (int r = 0; r < R; ++r) for (int c = 0; c < D; ++c) h[r * D + c] = r * 1000 + c;
  uint16_t *g, *o; int words = 2 * 32 * 2 * rows;  // twice the dense box, sentinel-filled
  cudaMalloc(&g, h.size() * 2); cudaMemcpy(g, h.data(), h.size() * 2, cudaMemcpyHostToDevice);
  cudaMalloc(&o, words * 2);
  CUtensorMap map;
  cuuint64_t dims[4] = {(cuuint64_t)D / 2, 2, 1, (cuuint64_t)R};
  cuuint64_t strides[3] = {(cuuint64_t)D / 2 * 2, (cuuint64_t)D * 2, (cuuint64_t)D * 2};
  cuuint32_t box[4] = {32, two ? 1u : 2u, 1, (cuuint32_t)rows}, es[4] = {1, 1, 1, 1};
  CUresult e = cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_UINT16, 4, g, dims, strides, box, es,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  printf("D=%d j=%d two=%d encode=%d\n", D, j, two, (int)e);
  cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, words * 2);
  probe<<<1, 128, words * 2>>>(map, o, 32 * j, words, two);
  cudaError_t ce = cudaDeviceSynchronize(); printf("kernel=%s\n", cudaGetErrorString(ce));
  std::vector<uint16_t> out(words); cudaMemcpy(out.data(), o, words * 2, cudaMemcpyDeviceToHost);
  // Per 16-byte unit (8 values): which (row, column) its first value holds.
  int bad = 0;
  for (int u = 0; u < words / 8; ++u) {
    uint16_t v = out[u * 8];
    int byte = u * 16, line = byte / 128, unit = (byte / 16) % 8;
    // Expected if the box lands densely (row = line, 64-byte halves side by side) and the 128-byte
    // swizzle XORs the 16-byte unit with (address / 128) % 8.
    int logical = unit ^ (line % 8), half = logical / 4, col = 32 * j + (logical % 4) * 8 + half * (D / 2);
    int want = line < rows ? line * 1000 + col : 0xFFFF;
    if (v != want) ++bad;
    if (u < 48 || (v != want && bad < 40))
      printf("unit %4d (line %3d slot %d): row %5d col %4d  want row %d col %d%s\n", u, line, unit, v == 0xFFFF ? -1 : v / 1000,
             v == 0xFFFF ? -1 : v % 1000, want / 1000, want % 1000, v == want ? "" : "  <-- differs");
  }
  printf("units differing from the dense-box model: %d of %d\n", bad, words / 8);
}
