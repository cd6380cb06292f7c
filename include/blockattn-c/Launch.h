/*===- blockattn-c/Launch.h - launching compiled kernels, in C ------------===*\
|*                                                                            *|
|* libblockattn_launch: the launch path of the Python package, as a plain C   *|
|* shared library over the CUDA driver API (no torch, no CPython ABI; the     *|
|* package calls it through ctypes). libcuda is opened with dlopen on first   *|
|* use ($BLOCKATTN_LIBCUDA, default libcuda.so.1), so the library loads and   *|
|* its errors can be read on a machine without a GPU.                         *|
|*                                                                            *|
|* A plan is a kernel's manifest turned, once, into an array of parameters;  *|
|* a launch gives it the call's tensors (address, shape, strides) and        *|
|* scalars. Tensor maps are encoded by the library and kept per parameter    *|
|* (BLOCKATTN_LAUNCH_CACHE_ENTRIES per parameter, oldest replaced): a call    *|
|* whose tensor has the address, shape and strides of a kept one reuses its  *|
|* descriptor.                                                               *|
|*                                                                            *|
|* A plan can also take a whole call as one record of 64-bit words            *|
|* (blockattnPlanSetRecord, blockattnLaunchRecord): the stream, each tensor's *|
|* address, rank, shape and strides, the scalars; the library checks the      *|
|* tensors against the plan's rules (ranks, equal shapes, contiguity,        *|
|* alignment), computes the grid and launches. That is one foreign call per   *|
|* launch, with no per-call structs to build.                                 *|
|*                                                                            *|
|* Every function that can fail returns a blockattn_launch_status; the        *|
|* message of the last failure on the calling thread is                      *|
|* blockattnLaunchLastError().                                               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef BLOCKATTN_C_LAUNCH_H
#define BLOCKATTN_C_LAUNCH_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a struct below or a function's signature changes; the
   Python side refuses a library of another version. */
#define BLOCKATTN_LAUNCH_ABI_VERSION 3
#define BLOCKATTN_LAUNCH_MAX_RANK 5
#define BLOCKATTN_LAUNCH_CACHE_ENTRIES 8

typedef enum {
  BLOCKATTN_LAUNCH_OK = 0,
  BLOCKATTN_LAUNCH_INVALID_ARGUMENT = 1, /* a bad plan or call */
  BLOCKATTN_LAUNCH_NO_DRIVER = 2,        /* libcuda could not be opened */
  BLOCKATTN_LAUNCH_CUDA_ERROR = 3,       /* a driver call failed */
  BLOCKATTN_LAUNCH_OUT_OF_MEMORY = 4,
} blockattn_launch_status;

/* What a kernel parameter is made of (the manifest's "kind" and "value"). */
typedef enum {
  BLOCKATTN_PARAM_TENSORMAP = 0, /* a CUtensorMap of tensor `tensor` */
  BLOCKATTN_PARAM_POINTER = 1,   /* tensor `tensor`'s address, 64-bit */
  BLOCKATTN_PARAM_SIZE_I32 = 2,  /* shape[dim] of tensor `tensor` */
  BLOCKATTN_PARAM_SIZE_I64 = 3,
  BLOCKATTN_PARAM_STRIDE_I32 = 4, /* strides[dim], in elements */
  BLOCKATTN_PARAM_STRIDE_I64 = 5,
  BLOCKATTN_PARAM_F32 = 6, /* scalars[tensor] */
} blockattn_param_kind;

/* One kernel parameter. For tensor maps, the enums are the CUDA driver's
   (CUtensorMapDataType, ...Swizzle, ...L2promotion, ...FloatOOBfill,
   ...Interleave) and `box` has the tensor's rank entries, innermost first. */
typedef struct {
  int32_t kind;
  int32_t tensor;
  int32_t dim;
  int32_t data_type;
  int32_t swizzle;
  int32_t l2_promotion;
  int32_t oob_fill;
  int32_t interleave;
  uint32_t box[BLOCKATTN_LAUNCH_MAX_RANK];
  uint32_t rank;
} blockattn_param;

/* One tensor of a call, as PyTorch describes it (outermost first; strides in
   elements). */
typedef struct {
  uint64_t data;
  int64_t shape[BLOCKATTN_LAUNCH_MAX_RANK];
  int64_t strides[BLOCKATTN_LAUNCH_MAX_RANK];
  int32_t rank;
  int32_t element_size;
} blockattn_tensor;

typedef struct blockattn_plan blockattn_plan;

/* The ABI version this library was built with. */
int32_t blockattnLaunchAbiVersion(void);

/* Whether libcuda can be opened (opens it); on failure the reason is
   blockattnLaunchLastError(). */
blockattn_launch_status blockattnLaunchDriverAvailable(void);

/* The message of the calling thread's last failure ("" if none). */
const char *blockattnLaunchLastError(void);

/* A plan for `function` (a CUfunction) of `context` (a CUcontext, made
   current on the launching thread), launched with `threads` threads per CTA
   and `smem` bytes of dynamic shared memory. `params` are checked against
   `num_tensors` and `num_scalars` and copied. */
blockattn_launch_status
blockattnPlanCreate(uint64_t function, uint64_t context, uint32_t threads,
                    uint32_t smem, const blockattn_param *params,
                    int32_t num_params, int32_t num_tensors,
                    int32_t num_scalars, blockattn_plan **plan);

void blockattnPlanDestroy(blockattn_plan *plan);

/* Launches `grid` CTAs on `stream` (a CUstream) with `tensors`
   (num_tensors of them) and `scalars` (num_scalars). Thread-safe. */
blockattn_launch_status blockattnLaunch(blockattn_plan *plan, uint32_t grid,
                                        uint64_t stream,
                                        const blockattn_tensor *tensors,
                                        const float *scalars);

/* What a record launch checks of each tensor, beyond what its parameters
   need (a tensor map: innermost stride 1, 16-byte aligned address and
   strides, no empty dimension). */
enum {
  BLOCKATTN_TENSOR_CONTIGUOUS =
      1,                         /* row-major contiguous (sizes-1 dims free) */
  BLOCKATTN_TENSOR_ALIGNED = 2,  /* address a multiple of 16 bytes */
  BLOCKATTN_TENSOR_NONEMPTY = 4, /* no dimension of size 0 */
};

typedef struct {
  int32_t rank;         /* the rank a launch must give it, 1 to MAX_RANK */
  int32_t shape_of;     /* -1, or a tensor whose shape it must have */
  int32_t element_size; /* bytes (a tensor map's strides are in bytes) */
  uint32_t flags;       /* BLOCKATTN_TENSOR_* */
  /* With shape_of, grouped-query attention's k and v: dimension 1 (heads)
     is shape_of's divided by `group` (0 or 1: the same shape). */
  int32_t group;
} blockattn_tensor_rule;

/* The grid of a record launch (what blockattn.launch_grid computes): a
   persistent kernel runs ctas_per_sm * num_sms CTAs; a chunked one a CTA
   per tiles_per_cta work items, (shape[0] / block_size + B) * shape[1] of
   tensor `tokens` ([T, H, ...]), B = shape[0] - 1 of tensor `offsets`
   (cu_seqlens); with blocks_per_tile k above 1 (packed tiles: the manifest's
   blocks_per_tile), ceil((shape[0] / block_size + B) / k) * shape[1]. */
typedef struct {
  int32_t chunked;
  int32_t ctas_per_sm;
  int32_t block_size;
  int32_t tiles_per_cta;
  int32_t num_sms;
  int32_t tokens;
  int32_t offsets;
  int32_t blocks_per_tile; /* 0 or 1: a work item is one virtual block */
} blockattn_grid;

/* Makes `plan` launchable by blockattnLaunchRecord: one rule per tensor
   (num_tensors of them, copied) and the grid. */
blockattn_launch_status
blockattnPlanSetRecord(blockattn_plan *plan, const blockattn_tensor_rule *rules,
                       const blockattn_grid *grid);

/* The 64-bit words of the plan's record: 1 + sum(2 + 2 * rank) over its
   tensors + num_scalars (0 before blockattnPlanSetRecord). */
int32_t blockattnPlanRecordWords(const blockattn_plan *plan);

/* Checks and launches one call given as `record`, blockattnPlanRecordWords
   64-bit words: the CUstream; then for each tensor, in the plan's order, its
   address, its rank r (which must be its rule's: the rest of the record is
   read by the rules' ranks), r sizes and r strides (in elements, outermost
   first); then each scalar as an IEEE double. Nothing is launched if any
   check fails (status BLOCKATTN_LAUNCH_INVALID_ARGUMENT, the message names
   tensors[i]). Thread-safe. */
blockattn_launch_status blockattnLaunchRecord(blockattn_plan *plan,
                                              const int64_t *record);

/* The grid the last successful launch of the plan used (0 if none). */
uint32_t blockattnPlanLastGrid(const blockattn_plan *plan);

/* How many tensor maps the plan has encoded so far (the launches that missed
   the cache, per tensor-map parameter). */
uint64_t blockattnPlanEncodeCount(const blockattn_plan *plan);

/* The driver entry points the library calls. Tests install their own with
   blockattnLaunchSetDriver (NULL returns to libcuda); the signatures are
   the driver's, with handles as void pointers. */
typedef struct {
  int (*tensorMapEncodeTiled)(void *tensorMap, int dataType, uint32_t rank,
                              void *globalAddress, const uint64_t *globalDim,
                              const uint64_t *globalStrides,
                              const uint32_t *boxDim,
                              const uint32_t *elementStrides, int interleave,
                              int swizzle, int l2Promotion, int oobFill);
  int (*launchKernel)(void *function, uint32_t gridX, uint32_t gridY,
                      uint32_t gridZ, uint32_t blockX, uint32_t blockY,
                      uint32_t blockZ, uint32_t smem, void *stream,
                      void **params, void **extra);
  int (*ctxSetCurrent)(void *context);
  int (*getErrorName)(int error, const char **name);
} blockattn_driver;

void blockattnLaunchSetDriver(const blockattn_driver *driver);

#ifdef __cplusplus
}
#endif

#endif /* BLOCKATTN_C_LAUNCH_H */
