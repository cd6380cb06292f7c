//===- scripts/sanitizer_probes.cu - what compute-sanitizer can see -------===//
//
// Minimal kernels that use the synchronization and store instructions of the
// blockattn kernels, each correct by the PTX memory model, to learn which of
// them compute-sanitizer models (docs/sanitizers.md reads the results):
//
//   racecheck  mbarrier       a shared-memory record written by one warp and
//                             read by another, ordered only by mbarrier
//                             arrive (release) / try_wait.parity (acquire),
//                             then rewritten after a second mbarrier hand-off
//                             (the RAW and WAR of the kernels' tile records)
//   racecheck  syncthreads    the same accesses ordered by bar.sync (control)
//   racecheck  elected        the kernels' pattern before the fix: 64 threads
//                             read the record, one of them releases the slot
//   racecheck  gather         the same with a named barrier over the 64
//                             before the one arrival (the kernels' fix)
//   racecheck  perwarp        lane 0 of each warp arrives after __syncwarp
//   racecheck  everyone       each of the 64 arrives on the slot itself
//   initcheck  bulk           global memory written only by
//                             cp.async.bulk.global.shared::cta, then read
//   initcheck  tensor         global memory written only by
//                             cp.async.bulk.tensor.2d (a TMA store), then read
//   initcheck  stg            global memory written by st.global (control)
//
// Build: nvcc -std=c++17 -arch=sm_90a -o sanitizer-probes sanitizer_probes.cu
// -lcuda Run:   compute-sanitizer --tool racecheck ./sanitizer-probes racecheck
// mbarrier
//
// The PTX comes from CCCL's cuda::ptx wrappers (the CUDA toolkit's own), not
// from inline assembly in this file.
//
//===----------------------------------------------------------------------===//

#include <cuda.h>
#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace ptx = cuda::ptx;

#define CHECK(call)                                                            \
  do {                                                                         \
    auto status_ = (call);                                                     \
    if (status_ != 0) {                                                        \
      std::fprintf(stderr, "%s failed: %d\n", #call, int(status_));            \
      return 1;                                                                \
    }                                                                          \
  } while (0)

__device__ void waitParity(uint64_t *barrier, uint32_t parity) {
  while (!ptx::mbarrier_try_wait_parity(barrier, parity)) {
  }
}

// Warp 0 writes the record and hands it to warp 1 through `full`; warp 1
// reads it and hands the slot back through `empty`; warp 0 then rewrites it.
// Both hand-offs are release/acquire pairs on an mbarrier (PTX ISA 9.7.13.15:
// mbarrier.arrive has .release semantics by default, try_wait .acquire).
__global__ void recordThroughMbarrier(int4 *out) {
  __shared__ uint64_t full, empty;
  __shared__ int4 record;
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&full, 1);
    ptx::mbarrier_init(&empty, 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();
  if (warp == 0 && lane == 0) {
    record = make_int4(1, 2, 3, 4);
    ptx::mbarrier_arrive(&full);
    waitParity(&empty, 0);
    record = make_int4(5, 6, 7, 8);
    out[1] = record;
  } else if (warp == 1 && lane == 0) {
    waitParity(&full, 0);
    out[0] = record;
    ptx::mbarrier_arrive(&empty);
  }
}

// The blockattn pattern: every thread of a 64-thread consumer reads the
// record, one thread releases the slot for all of them. With `gather`, a named
// barrier over the consumer orders the others' reads before that thread's
// arrival (release cumulativity); without it the reads are unordered with the
// rewrite (a race in the PTX memory model). With `everyone`, each consumer
// thread arrives itself (the empty barrier counts 64); with `perWarp`, lane 0
// of each warp arrives after __syncwarp (bar.warp.sync orders the lanes).
enum class Release { elected, gather, perWarp, everyone };

template <Release kRelease>
__global__ void recordReleasedByConsumer(int4 *out) {
  __shared__ uint64_t full, empty;
  __shared__ int4 record;
  constexpr uint32_t kConsumers = 64;
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&full, 1);
    ptx::mbarrier_init(&empty, kRelease == Release::everyone  ? kConsumers
                               : kRelease == Release::perWarp ? kConsumers / 32
                                                              : 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    if (threadIdx.x == 0) {
      record = make_int4(1, 2, 3, 4);
      ptx::mbarrier_arrive(&full);
      waitParity(&empty, 0);
      record = make_int4(5, 6, 7, 8);
      out[1] = record;
    }
    return;
  }
  waitParity(&full, 0);
  int4 seen = record;
  if (threadIdx.x == 32 + kConsumers - 1)
    out[0] = seen;
  if (kRelease == Release::gather)
    __barrier_sync_count(1, kConsumers);
  if (kRelease == Release::perWarp)
    __syncwarp();
  bool arrives = kRelease == Release::everyone ||
                 (kRelease == Release::perWarp ? threadIdx.x % 32 == 0
                                               : threadIdx.x == 32);
  if (arrives)
    ptx::mbarrier_arrive(&empty);
}

__global__ void recordThroughSyncthreads(int4 *out) {
  __shared__ int4 record;
  if (threadIdx.x == 0)
    record = make_int4(1, 2, 3, 4);
  __syncthreads();
  if (threadIdx.x == 32)
    out[0] = record;
  __syncthreads();
  if (threadIdx.x == 0) {
    record = make_int4(5, 6, 7, 8);
    out[1] = record;
  }
}

constexpr int kElems = 256; // 1 KiB of ints

// Fills the staging buffer with 0..kElems-1 and makes it visible to the
// bulk-copy engine (the async proxy) before thread 0 issues the copy.
__device__ void stage(int *staging) {
  for (int i = threadIdx.x; i < kElems; i += blockDim.x)
    staging[i] = i;
  ptx::fence_proxy_async(ptx::space_shared);
  __syncthreads();
}

__device__ void waitForBulkStores() {
  ptx::cp_async_bulk_commit_group();
  ptx::cp_async_bulk_wait_group(ptx::n32_t<0>());
}

__global__ void storeBulk(int *dst) {
  __shared__ alignas(128) int staging[kElems];
  stage(staging);
  if (threadIdx.x == 0) {
    ptx::cp_async_bulk(ptx::space_global, ptx::space_shared, dst, staging,
                       kElems * sizeof(int));
    waitForBulkStores();
  }
}

__global__ void storeTensor(const __grid_constant__ CUtensorMap map) {
  __shared__ alignas(128) int staging[kElems];
  stage(staging);
  if (threadIdx.x == 0) {
    int32_t coords[2] = {0, 0};
    ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, &map,
                              coords, staging);
    waitForBulkStores();
  }
}

__global__ void storePlain(int *dst) {
  for (int i = threadIdx.x; i < kElems; i += blockDim.x)
    dst[i] = i;
}

// The reader: any uninitialized word it loads is an initcheck report.
__global__ void sum(const int *src, int *total) {
  int value = 0;
  for (int i = threadIdx.x; i < kElems; i += blockDim.x)
    value += src[i];
  atomicAdd(total, value);
}

static int racecheckProbe(const char *variant) {
  int4 *out;
  CHECK(cudaMalloc(&out, 2 * sizeof(int4)));
  if (!std::strcmp(variant, "mbarrier"))
    recordThroughMbarrier<<<1, 64>>>(out);
  else if (!std::strcmp(variant, "syncthreads"))
    recordThroughSyncthreads<<<1, 64>>>(out);
  else if (!std::strcmp(variant, "elected"))
    recordReleasedByConsumer<Release::elected><<<1, 96>>>(out);
  else if (!std::strcmp(variant, "gather"))
    recordReleasedByConsumer<Release::gather><<<1, 96>>>(out);
  else if (!std::strcmp(variant, "perwarp"))
    recordReleasedByConsumer<Release::perWarp><<<1, 96>>>(out);
  else if (!std::strcmp(variant, "everyone"))
    recordReleasedByConsumer<Release::everyone><<<1, 96>>>(out);
  else
    return std::fprintf(stderr, "unknown racecheck probe %s\n", variant), 2;
  CHECK(cudaDeviceSynchronize());
  int4 host[2];
  CHECK(cudaMemcpy(host, out, sizeof(host), cudaMemcpyDeviceToHost));
  bool ok =
      host[0].x == 1 && host[0].w == 4 && host[1].x == 5 && host[1].w == 8;
  std::printf("racecheck %s: record read %d..%d, rewritten %d..%d: %s\n",
              variant, host[0].x, host[0].w, host[1].x, host[1].w,
              ok ? "ordered" : "WRONG");
  return ok ? 0 : 1;
}

static int encodeMap(CUtensorMap *map, int *base) {
  cuuint64_t dims[2] = {64, kElems / 64};
  cuuint64_t strides[1] = {64 * sizeof(int)};
  cuuint32_t box[2] = {64, kElems / 64}, elementStrides[2] = {1, 1};
  CHECK(cuTensorMapEncodeTiled(
      map, CU_TENSOR_MAP_DATA_TYPE_INT32, 2, base, dims, strides, box,
      elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
      CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return 0;
}

static int initcheckProbe(const char *variant) {
  int *dst, *total;
  CHECK(cudaMalloc(&dst, kElems * sizeof(int))); // never memset: uninitialized
  CHECK(cudaMalloc(&total, sizeof(int)));
  CHECK(cudaMemset(total, 0, sizeof(int)));
  if (!std::strcmp(variant, "bulk")) {
    storeBulk<<<1, 128>>>(dst);
  } else if (!std::strcmp(variant, "tensor")) {
    CUtensorMap map;
    if (encodeMap(&map, dst))
      return 1;
    storeTensor<<<1, 128>>>(map);
  } else if (!std::strcmp(variant, "stg")) {
    storePlain<<<1, 128>>>(dst);
  } else {
    return std::fprintf(stderr, "unknown initcheck probe %s\n", variant), 2;
  }
  sum<<<1, 128>>>(dst, total);
  int host = 0;
  CHECK(cudaMemcpy(&host, total, sizeof(int), cudaMemcpyDeviceToHost));
  int expected = kElems * (kElems - 1) / 2;
  std::printf("initcheck %s: sum %d (expected %d): %s\n", variant, host,
              expected, host == expected ? "every word written" : "WRONG");
  return host == expected ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc != 3)
    return std::fprintf(stderr, "usage: %s racecheck|initcheck VARIANT\n",
                        argv[0]),
           2;
  if (!std::strcmp(argv[1], "racecheck"))
    return racecheckProbe(argv[2]);
  if (!std::strcmp(argv[1], "initcheck"))
    return initcheckProbe(argv[2]);
  return std::fprintf(stderr, "unknown tool %s\n", argv[1]), 2;
}
