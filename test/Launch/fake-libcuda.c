/*===- fake-libcuda.c - a libcuda with no GPU, for tests and host timing --===*\
|*                                                                            *|
|* The four driver entry points libblockattn_launch opens with dlopen/dlsym   *|
|* ($BLOCKATTN_LIBCUDA), doing no work: an encode writes a 128-byte map that *|
|* holds the encode's count, a launch records its grid, threads, stream and   *|
|* the first 8 bytes of each parameter. Python tests (ctypes) and             *|
|* bench/host_profile.py (the host's cost of a call without a GPU) load it in *|
|* libcuda's place; fakeCuda* read what it saw.                               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include <stdint.h>
#include <string.h>

#define MAX_PARAMS 64

static uint64_t encodes, launches;
static uint32_t lastGrid, lastThreads, lastSmem;
static uint64_t lastStream, lastParams[MAX_PARAMS];
static void *current;

int cuTensorMapEncodeTiled(void *map, int dataType, uint32_t rank,
                           void *address, const uint64_t *dims,
                           const uint64_t *strides, const uint32_t *box,
                           const uint32_t *elementStrides, int interleave,
                           int swizzle, int l2, int oob) {
  (void)dataType, (void)rank, (void)address, (void)dims, (void)strides;
  (void)box, (void)elementStrides, (void)interleave, (void)swizzle, (void)l2;
  (void)oob;
  if (!current)
    return 201; /* CUDA_ERROR_INVALID_CONTEXT, as the driver */
  ++encodes;
  memset(map, 0, 128);
  memcpy(map, &encodes, sizeof(encodes));
  return 0;
}

/* The parameter count is not passed to cuLaunchKernel: the test sets how
   many parameters to copy (fakeCudaSetParams), 0 by default. */
static int paramCount;

void fakeCudaSetParams(int count) {
  paramCount = count < MAX_PARAMS ? count : MAX_PARAMS;
}

int cuLaunchKernel(void *function, uint32_t gx, uint32_t gy, uint32_t gz,
                   uint32_t bx, uint32_t by, uint32_t bz, uint32_t smem,
                   void *stream, void **params, void **extra) {
  (void)function, (void)gy, (void)gz, (void)by, (void)bz, (void)extra;
  ++launches;
  lastGrid = gx;
  lastThreads = bx;
  lastSmem = smem;
  lastStream = (uint64_t)(uintptr_t)stream;
  for (int i = 0; i < paramCount; ++i)
    memcpy(&lastParams[i], params[i], sizeof(lastParams[i]));
  return 0;
}

int cuCtxSetCurrent(void *context) {
  current = context;
  return 0;
}

int cuGetErrorName(int error, const char **name) {
  *name = error == 201 ? "CUDA_ERROR_INVALID_CONTEXT" : "CUDA_ERROR_UNKNOWN";
  return 0;
}

uint64_t fakeCudaLaunches(void) { return launches; }
uint64_t fakeCudaEncodes(void) { return encodes; }
uint32_t fakeCudaLastGrid(void) { return lastGrid; }
uint32_t fakeCudaLastThreads(void) { return lastThreads; }
uint64_t fakeCudaLastStream(void) { return lastStream; }
uint64_t fakeCudaLastParam(int index) {
  return index >= 0 && index < MAX_PARAMS ? lastParams[index] : 0;
}
