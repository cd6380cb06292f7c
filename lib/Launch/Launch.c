/*===- Launch.c - libblockattn_launch: plans, tensor maps, launches -------===*\
|*                                                                            *|
|* See include/blockattn-c/Launch.h. Plain C over the CUDA driver API, which  *|
|* is resolved with dlopen/dlsym at first use (the types come from cuda.h).   *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "blockattn-c/Launch.h"

#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(CUtensorMap) == 128, "CUtensorMap is 128 bytes");
_Static_assert(CUDA_SUCCESS == 0, "the driver's success is 0");

/*===----------------------------------------------------------------------===
 * Errors
 *===----------------------------------------------------------------------===*/

static _Thread_local char lastError[512];

static blockattn_launch_status fail(blockattn_launch_status status,
                                    const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(lastError, sizeof(lastError), format, args);
  va_end(args);
  return status;
}

const char *blockattnLaunchLastError(void) { return lastError; }

int32_t blockattnLaunchAbiVersion(void) { return BLOCKATTN_LAUNCH_ABI_VERSION; }

/*===----------------------------------------------------------------------===
 * The driver
 *===----------------------------------------------------------------------===*/

static pthread_mutex_t driverLock = PTHREAD_MUTEX_INITIALIZER;
static blockattn_driver driver;
static int driverLoaded;      /* driver holds libcuda's entry points */
static char driverError[400]; /* why libcuda could not be opened */
static int driverOverridden;  /* a test installed its own */

void blockattnLaunchSetDriver(const blockattn_driver *table) {
  pthread_mutex_lock(&driverLock);
  if (table) {
    driver = *table;
    driverOverridden = 1;
    driverLoaded = 1;
  } else {
    memset(&driver, 0, sizeof(driver));
    driverOverridden = 0;
    driverLoaded = 0;
    driverError[0] = 0;
  }
  pthread_mutex_unlock(&driverLock);
}

static void *symbol(void *library, const char *name, int *missing) {
  void *entry = dlsym(library, name);
  if (!entry && !*missing) {
    snprintf(driverError, sizeof(driverError), "libcuda has no %s", name);
    *missing = 1;
  }
  return entry;
}

/* Opens libcuda once per process (or uses a test's table). */
static const blockattn_driver *getDriver(void) {
  pthread_mutex_lock(&driverLock);
  if (!driverLoaded && !driverError[0]) {
    const char *path = getenv("BLOCKATTN_LIBCUDA");
    if (!path || !*path)
      path = "libcuda.so.1";
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      const char *reason = dlerror();
      snprintf(driverError, sizeof(driverError), "cannot open %s: %s", path,
               reason ? reason : "unknown error");
    } else {
      int missing = 0;
      blockattn_driver table;
      *(void **)&table.tensorMapEncodeTiled =
          symbol(library, "cuTensorMapEncodeTiled", &missing);
      *(void **)&table.launchKernel =
          symbol(library, "cuLaunchKernel", &missing);
      *(void **)&table.ctxSetCurrent =
          symbol(library, "cuCtxSetCurrent", &missing);
      *(void **)&table.getErrorName =
          symbol(library, "cuGetErrorName", &missing);
      if (missing) {
        dlclose(library);
      } else {
        driver = table;
        driverLoaded = 1;
      }
    }
  }
  const blockattn_driver *result = driverLoaded ? &driver : NULL;
  pthread_mutex_unlock(&driverLock);
  return result;
}

blockattn_launch_status blockattnLaunchDriverAvailable(void) {
  if (getDriver())
    return BLOCKATTN_LAUNCH_OK;
  return fail(BLOCKATTN_LAUNCH_NO_DRIVER, "blockattn: the CUDA driver: %s",
              driverError);
}

static blockattn_launch_status cudaFailure(const blockattn_driver *api,
                                           int error, const char *what) {
  const char *name = NULL;
  if (!api->getErrorName || api->getErrorName(error, &name) != 0 || !name)
    name = "an unknown error";
  return fail(BLOCKATTN_LAUNCH_CUDA_ERROR,
              "blockattn: CUDA driver error %s (%d) in %s", name, error, what);
}

/*===----------------------------------------------------------------------===
 * Plans
 *===----------------------------------------------------------------------===*/

/* A tensor map as encoded for one (address, shape, strides). */
typedef struct {
  CUtensorMap map; /* aligned as the driver asks (cuda.h) */
  uint64_t data;
  uint64_t dims[BLOCKATTN_LAUNCH_MAX_RANK];
  uint64_t strides[BLOCKATTN_LAUNCH_MAX_RANK];
  int valid;
} TensorMapEntry;

typedef struct {
  TensorMapEntry entries[BLOCKATTN_LAUNCH_CACHE_ENTRIES];
  unsigned next; /* the entry the next miss replaces */
} TensorMapCache;

/* A parameter's value for one launch: a tensor map is passed by pointer to
   its cache entry, everything else from here. */
typedef union {
  uint64_t u64;
  int64_t i64;
  int32_t i32;
  float f32;
} Scalar;

struct blockattn_plan {
  void *function;
  void *context;
  uint32_t threads;
  uint32_t smem;
  int32_t numParams;
  int32_t numTensors;
  int32_t numScalars;
  blockattn_param *params;
  TensorMapCache *caches; /* per parameter (unused for non-tensor-maps) */
  Scalar *values;
  void **pointers;
  uint64_t encodes;
  /* Record launches (blockattnPlanSetRecord): the rules, the grid, and the
     tensors and scalars a record is read into (under the lock). */
  blockattn_tensor_rule *rules;
  blockattn_grid grid;
  int32_t recordWords;
  blockattn_tensor *recordTensors;
  float *recordScalars;
  uint32_t lastGrid;
  pthread_mutex_t lock;
};

blockattn_launch_status
blockattnPlanCreate(uint64_t function, uint64_t context, uint32_t threads,
                    uint32_t smem, const blockattn_param *params,
                    int32_t numParams, int32_t numTensors, int32_t numScalars,
                    blockattn_plan **result) {
  if (!result)
    return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT, "plan: NULL");
  *result = NULL;
  if (!function)
    return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT, "function: NULL");
  if (threads == 0 || threads > 1024)
    return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                "threads: %u is not in [1, 1024]", threads);
  if (numParams < 0 || (numParams && !params))
    return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT, "params: %d of them, at %p",
                numParams, (const void *)params);
  if (numTensors < 0 || numScalars < 0)
    return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                "num_tensors/num_scalars: negative (%d, %d)", numTensors,
                numScalars);
  for (int32_t i = 0; i < numParams; ++i) {
    const blockattn_param *p = &params[i];
    if (p->kind < BLOCKATTN_PARAM_TENSORMAP || p->kind > BLOCKATTN_PARAM_F32)
      return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                  "params[%d]: unknown kind %d", i, p->kind);
    int32_t count = p->kind == BLOCKATTN_PARAM_F32 ? numScalars : numTensors;
    if (p->tensor < 0 || p->tensor >= count)
      return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                  "params[%d]: %s %d out of range (%d of them)", i,
                  p->kind == BLOCKATTN_PARAM_F32 ? "scalar" : "tensor",
                  p->tensor, count);
    if (p->kind >= BLOCKATTN_PARAM_SIZE_I32 &&
        p->kind <= BLOCKATTN_PARAM_STRIDE_I64 &&
        (p->dim < 0 || p->dim >= BLOCKATTN_LAUNCH_MAX_RANK))
      return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                  "params[%d]: dim %d out of range", i, p->dim);
    if (p->kind == BLOCKATTN_PARAM_TENSORMAP) {
      if (p->rank < 1 || p->rank > BLOCKATTN_LAUNCH_MAX_RANK)
        return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                    "params[%d]: tensor map rank %u is not in [1, %d]", i,
                    p->rank, BLOCKATTN_LAUNCH_MAX_RANK);
      for (uint32_t d = 0; d < p->rank; ++d)
        if (p->box[d] < 1 || p->box[d] > 256)
          return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                      "params[%d]: box[%u] = %u is not in [1, 256]", i, d,
                      p->box[d]);
    }
  }
  blockattn_plan *plan = calloc(1, sizeof(*plan));
  size_t n = numParams ? (size_t)numParams : 1;
  if (plan) {
    plan->params = malloc(n * sizeof(*plan->params));
    plan->values = calloc(n, sizeof(*plan->values));
    plan->pointers = calloc(n, sizeof(*plan->pointers));
    plan->caches =
        aligned_alloc(_Alignof(TensorMapCache), n * sizeof(TensorMapCache));
  }
  if (!plan || !plan->params || !plan->values || !plan->pointers ||
      !plan->caches) {
    blockattnPlanDestroy(plan);
    return fail(BLOCKATTN_LAUNCH_OUT_OF_MEMORY, "plan: out of memory");
  }
  memset(plan->caches, 0, n * sizeof(TensorMapCache));
  if (numParams)
    memcpy(plan->params, params, n * sizeof(*params));
  plan->function = (void *)(uintptr_t)function;
  plan->context = (void *)(uintptr_t)context;
  plan->threads = threads;
  plan->smem = smem;
  plan->numParams = numParams;
  plan->numTensors = numTensors;
  plan->numScalars = numScalars;
  pthread_mutex_init(&plan->lock, NULL);
  *result = plan;
  return BLOCKATTN_LAUNCH_OK;
}

void blockattnPlanDestroy(blockattn_plan *plan) {
  if (!plan)
    return;
  if (plan->params)
    pthread_mutex_destroy(&plan->lock);
  free(plan->params);
  free(plan->values);
  free(plan->pointers);
  free(plan->caches);
  free(plan->rules);
  free(plan->recordTensors);
  free(plan->recordScalars);
  free(plan);
}

uint64_t blockattnPlanEncodeCount(const blockattn_plan *plan) {
  return plan ? plan->encodes : 0;
}

uint32_t blockattnPlanLastGrid(const blockattn_plan *plan) {
  return plan ? plan->lastGrid : 0;
}

int32_t blockattnPlanRecordWords(const blockattn_plan *plan) {
  return plan && plan->rules ? plan->recordWords : 0;
}

blockattn_launch_status
blockattnPlanSetRecord(blockattn_plan *plan, const blockattn_tensor_rule *rules,
                       const blockattn_grid *grid) {
  if (!plan)
    return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT, "plan: NULL");
  if ((plan->numTensors && !rules) || !grid)
    return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT, "rules/grid: NULL");
  if (plan->rules)
    return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                "plan: its record rules are set already");
  int32_t words = 1 + plan->numScalars;
  for (int32_t i = 0; i < plan->numTensors; ++i) {
    const blockattn_tensor_rule *r = &rules[i];
    if (r->rank < 1 || r->rank > BLOCKATTN_LAUNCH_MAX_RANK)
      return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                  "rules[%d]: rank %d is not in [1, %d]", i, r->rank,
                  BLOCKATTN_LAUNCH_MAX_RANK);
    if (r->shape_of < -1 || r->shape_of >= plan->numTensors ||
        r->shape_of == i ||
        (r->shape_of >= 0 && rules[r->shape_of].rank != r->rank))
      return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                  "rules[%d]: shape_of %d is not another tensor of rank %d", i,
                  r->shape_of, r->rank);
    if (r->group < 0)
      return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                  "rules[%d]: group %d is negative (0 or 1: no group)", i,
                  r->group);
    if (r->group > 1 && (r->shape_of < 0 || r->rank < 2))
      return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                  "rules[%d]: group %d needs a shape_of tensor of rank 2 or "
                  "more (0 or 1: no group)",
                  i, r->group);
    if (r->element_size != 1 && r->element_size != 2 && r->element_size != 4 &&
        r->element_size != 8)
      return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                  "rules[%d]: element size %d is not 1, 2, 4 or 8", i,
                  r->element_size);
    if (r->flags &
        ~(uint32_t)(BLOCKATTN_TENSOR_CONTIGUOUS | BLOCKATTN_TENSOR_ALIGNED |
                    BLOCKATTN_TENSOR_NONEMPTY))
      return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                  "rules[%d]: unknown flags %#x", i, r->flags);
    words += 2 + 2 * r->rank;
  }
  /* A tensor map's rank is fixed by its box: a rule that disagrees would
     fail every launch, so it is an error here. */
  for (int32_t i = 0; i < plan->numParams; ++i) {
    const blockattn_param *p = &plan->params[i];
    if (p->kind == BLOCKATTN_PARAM_TENSORMAP &&
        (uint32_t)rules[p->tensor].rank != p->rank)
      return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                  "rules[%d]: rank %d, but params[%d] is a rank-%u tensor map",
                  p->tensor, rules[p->tensor].rank, i, p->rank);
  }
  if (grid->num_sms < 1 || grid->ctas_per_sm < 1)
    return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                "grid: num_sms %d and ctas_per_sm %d must be at least 1",
                grid->num_sms, grid->ctas_per_sm);
  if (grid->chunked) {
    if (grid->block_size < 1 || grid->tiles_per_cta < 1)
      return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                  "grid: block_size %d and tiles_per_cta %d must be at least 1",
                  grid->block_size, grid->tiles_per_cta);
    if (grid->blocks_per_tile < 0)
      return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                  "grid: blocks_per_tile %d must not be negative",
                  grid->blocks_per_tile);
    if (grid->tokens < 0 || grid->tokens >= plan->numTensors ||
        rules[grid->tokens].rank < 2)
      return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                  "grid: tokens %d is not a tensor of rank 2 or more",
                  grid->tokens);
    if (grid->offsets < 0 || grid->offsets >= plan->numTensors ||
        rules[grid->offsets].rank != 1)
      return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                  "grid: offsets %d is not a tensor of rank 1", grid->offsets);
  }
  size_t n = plan->numTensors ? (size_t)plan->numTensors : 1;
  size_t m = plan->numScalars ? (size_t)plan->numScalars : 1;
  blockattn_tensor_rule *copy = malloc(n * sizeof(*copy));
  blockattn_tensor *tensors = calloc(n, sizeof(*tensors));
  float *scalars = calloc(m, sizeof(*scalars));
  if (!copy || !tensors || !scalars) {
    free(copy);
    free(tensors);
    free(scalars);
    return fail(BLOCKATTN_LAUNCH_OUT_OF_MEMORY, "plan: out of memory");
  }
  if (plan->numTensors)
    memcpy(copy, rules, n * sizeof(*copy));
  pthread_mutex_lock(&plan->lock);
  plan->rules = copy;
  plan->grid = *grid;
  plan->recordWords = words;
  plan->recordTensors = tensors;
  plan->recordScalars = scalars;
  pthread_mutex_unlock(&plan->lock);
  return BLOCKATTN_LAUNCH_OK;
}

/*===----------------------------------------------------------------------===
 * Launches
 *===----------------------------------------------------------------------===*/

/* The tensor map of parameter `index` for `t`: a kept one, or encoded. */
static blockattn_launch_status
tensorMap(blockattn_plan *plan, const blockattn_driver *api, int32_t index,
          const blockattn_tensor *t, void **out) {
  const blockattn_param *p = &plan->params[index];
  uint32_t rank = (uint32_t)t->rank;
  if (rank != p->rank)
    return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                "params[%d]: a rank-%u tensor map of a rank-%d tensor", index,
                p->rank, t->rank);
  if (t->strides[rank - 1] != 1)
    return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                "params[%d]: the innermost dimension has stride %lld, not 1",
                index, (long long)t->strides[rank - 1]);
  if (t->data % 16)
    return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                "params[%d]: address %#llx is not 16-byte aligned", index,
                (unsigned long long)t->data);
  /* The driver's order is innermost first; its strides are in bytes and
     skip the innermost dimension. */
  uint64_t dims[BLOCKATTN_LAUNCH_MAX_RANK] = {0};
  uint64_t strides[BLOCKATTN_LAUNCH_MAX_RANK] = {0};
  for (uint32_t d = 0; d < rank; ++d) {
    if (t->shape[rank - 1 - d] < 1)
      return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                  "params[%d]: dimension %u has size %lld", index, rank - 1 - d,
                  (long long)t->shape[rank - 1 - d]);
    dims[d] = (uint64_t)t->shape[rank - 1 - d];
  }
  for (uint32_t d = 0; d + 1 < rank; ++d) {
    int64_t stride = t->strides[rank - 2 - d] * t->element_size;
    if (stride <= 0 || stride % 16)
      return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                  "params[%d]: stride of dimension %u is %lld bytes, not a "
                  "positive multiple of 16",
                  index, rank - 2 - d, (long long)stride);
    strides[d] = (uint64_t)stride;
  }
  TensorMapCache *cache = &plan->caches[index];
  for (unsigned e = 0; e < BLOCKATTN_LAUNCH_CACHE_ENTRIES; ++e) {
    TensorMapEntry *entry = &cache->entries[e];
    if (entry->valid && entry->data == t->data &&
        !memcmp(entry->dims, dims, sizeof(dims)) &&
        !memcmp(entry->strides, strides, sizeof(strides))) {
      *out = &entry->map;
      return BLOCKATTN_LAUNCH_OK;
    }
  }
  TensorMapEntry *entry = &cache->entries[cache->next];
  static const uint32_t elementStrides[BLOCKATTN_LAUNCH_MAX_RANK] = {1, 1, 1, 1,
                                                                     1};
  entry->valid = 0;
  int error = api->tensorMapEncodeTiled(
      &entry->map, p->data_type, p->rank, (void *)(uintptr_t)t->data, dims,
      strides, p->box, elementStrides, p->interleave, p->swizzle,
      p->l2_promotion, p->oob_fill);
  if (error)
    return cudaFailure(api, error, "cuTensorMapEncodeTiled");
  entry->data = t->data;
  memcpy(entry->dims, dims, sizeof(dims));
  memcpy(entry->strides, strides, sizeof(strides));
  entry->valid = 1;
  cache->next = (cache->next + 1) % BLOCKATTN_LAUNCH_CACHE_ENTRIES;
  ++plan->encodes;
  *out = &entry->map;
  return BLOCKATTN_LAUNCH_OK;
}

static blockattn_launch_status launchLocked(blockattn_plan *plan,
                                            const blockattn_driver *api,
                                            uint32_t grid, uint64_t stream,
                                            const blockattn_tensor *tensors,
                                            const float *scalars) {
  // The context first: cuTensorMapEncodeTiled needs a current context too,
  // and a thread PyTorch starts (the autograd engine's) may have none yet.
  int error;
  if (plan->context && (error = api->ctxSetCurrent(plan->context)))
    return cudaFailure(api, error, "cuCtxSetCurrent");
  for (int32_t i = 0; i < plan->numParams; ++i) {
    const blockattn_param *p = &plan->params[i];
    Scalar *value = &plan->values[i];
    plan->pointers[i] = value;
    if (p->kind == BLOCKATTN_PARAM_F32) {
      value->f32 = scalars[p->tensor];
      continue;
    }
    const blockattn_tensor *t = &tensors[p->tensor];
    if (t->rank < 0 || t->rank > BLOCKATTN_LAUNCH_MAX_RANK)
      return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                  "tensors[%d]: rank %d is not in [0, %d]", p->tensor, t->rank,
                  BLOCKATTN_LAUNCH_MAX_RANK);
    switch (p->kind) {
    case BLOCKATTN_PARAM_TENSORMAP: {
      blockattn_launch_status status =
          tensorMap(plan, api, i, t, &plan->pointers[i]);
      if (status != BLOCKATTN_LAUNCH_OK)
        return status;
      break;
    }
    case BLOCKATTN_PARAM_POINTER:
      value->u64 = t->data;
      break;
    default: {
      if (p->dim >= t->rank)
        return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                    "params[%d]: dim %d of a rank-%d tensor", i, p->dim,
                    t->rank);
      int isSize = p->kind == BLOCKATTN_PARAM_SIZE_I32 ||
                   p->kind == BLOCKATTN_PARAM_SIZE_I64;
      int64_t v = isSize ? t->shape[p->dim] : t->strides[p->dim];
      if (p->kind == BLOCKATTN_PARAM_SIZE_I32 ||
          p->kind == BLOCKATTN_PARAM_STRIDE_I32) {
        if (v < INT32_MIN || v > INT32_MAX)
          return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                      "params[%d]: %lld does not fit an i32", i, (long long)v);
        value->i32 = (int32_t)v;
      } else {
        value->i64 = v;
      }
    }
    }
  }
  error = api->launchKernel(plan->function, grid, 1, 1, plan->threads, 1, 1,
                            plan->smem, (void *)(uintptr_t)stream,
                            plan->pointers, NULL);
  if (error)
    return cudaFailure(api, error, "cuLaunchKernel");
  return BLOCKATTN_LAUNCH_OK;
}

blockattn_launch_status blockattnLaunch(blockattn_plan *plan, uint32_t grid,
                                        uint64_t stream,
                                        const blockattn_tensor *tensors,
                                        const float *scalars) {
  if (!plan)
    return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT, "plan: NULL");
  if (grid == 0)
    return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT, "grid: 0 CTAs");
  if ((plan->numTensors && !tensors) || (plan->numScalars && !scalars))
    return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                "tensors/scalars: NULL, but the plan takes %d and %d",
                plan->numTensors, plan->numScalars);
  const blockattn_driver *api = getDriver();
  if (!api)
    return fail(BLOCKATTN_LAUNCH_NO_DRIVER, "blockattn: the CUDA driver: %s",
                driverError);
  pthread_mutex_lock(&plan->lock);
  /* cuLaunchKernel copies the parameters, so the values and tensor maps may
     change as soon as it returns. */
  blockattn_launch_status status =
      launchLocked(plan, api, grid, stream, tensors, scalars);
  if (status == BLOCKATTN_LAUNCH_OK)
    plan->lastGrid = grid;
  pthread_mutex_unlock(&plan->lock);
  return status;
}

/* Reads `record` into the plan's record tensors and scalars and checks them
   against the rules; returns the stream through `stream`. */
static blockattn_launch_status
readRecord(blockattn_plan *plan, const int64_t *record, uint64_t *stream) {
  const int64_t *word = record;
  *stream = (uint64_t)*word++;
  for (int32_t i = 0; i < plan->numTensors; ++i) {
    const blockattn_tensor_rule *rule = &plan->rules[i];
    blockattn_tensor *t = &plan->recordTensors[i];
    t->data = (uint64_t)*word++;
    int64_t rank = *word++;
    /* The rule's rank, not the record's, says where the next tensor starts:
       a record of other ranks is refused before it is read further. */
    if (rank != rule->rank)
      return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                  "tensors[%d]: rank %lld, expected %d", i, (long long)rank,
                  rule->rank);
    for (int32_t d = 0; d < rule->rank; ++d)
      t->shape[d] = *word++;
    for (int32_t d = 0; d < rule->rank; ++d)
      t->strides[d] = *word++;
    t->rank = rule->rank;
    t->element_size = rule->element_size;
  }
  for (int32_t s = 0; s < plan->numScalars; ++s) {
    double value;
    memcpy(&value, word++, sizeof(value));
    plan->recordScalars[s] = (float)value;
  }
  for (int32_t i = 0; i < plan->numTensors; ++i) {
    const blockattn_tensor_rule *rule = &plan->rules[i];
    const blockattn_tensor *t = &plan->recordTensors[i];
    if (rule->shape_of >= 0) {
      const blockattn_tensor *other = &plan->recordTensors[rule->shape_of];
      for (int32_t d = 0; d < rule->rank; ++d) {
        /* Grouped-query attention: `group` of the other's heads per head. */
        int64_t group = d == 1 && rule->group > 1 ? rule->group : 1;
        if (t->shape[d] * group == other->shape[d])
          continue;
        if (group > 1)
          return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                      "tensors[%d]: %lld heads, but tensors[%d] has %lld "
                      "and the kernel's group is %lld",
                      i, (long long)t->shape[d], rule->shape_of,
                      (long long)other->shape[d], (long long)group);
        return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                    "tensors[%d]: size %lld in dimension %d, but "
                    "tensors[%d] has %lld",
                    i, (long long)t->shape[d], d, rule->shape_of,
                    (long long)other->shape[d]);
      }
    }
    for (int32_t d = 0; d < rule->rank; ++d)
      if (t->shape[d] < 0 ||
          (t->shape[d] == 0 && (rule->flags & BLOCKATTN_TENSOR_NONEMPTY)))
        return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                    "tensors[%d]: dimension %d has size %lld", i, d,
                    (long long)t->shape[d]);
    if (rule->flags & BLOCKATTN_TENSOR_CONTIGUOUS) {
      /* As torch's is_contiguous: dimensions of size 1 may have any stride. */
      int64_t expected = 1;
      for (int32_t d = rule->rank - 1; d >= 0; --d) {
        if (t->shape[d] != 1 && t->strides[d] != expected)
          return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                      "tensors[%d]: not contiguous (stride %lld in dimension "
                      "%d, expected %lld)",
                      i, (long long)t->strides[d], d, (long long)expected);
        expected *= t->shape[d];
      }
    }
    if ((rule->flags & BLOCKATTN_TENSOR_ALIGNED) && t->data % 16)
      return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                  "tensors[%d]: address %#llx is not 16-byte aligned", i,
                  (unsigned long long)t->data);
  }
  return BLOCKATTN_LAUNCH_OK;
}

/* The grid of the plan's record launch (see blockattn_grid). */
static blockattn_launch_status recordGrid(const blockattn_plan *plan,
                                          uint32_t *grid) {
  const blockattn_grid *g = &plan->grid;
  int64_t ctas;
  if (!g->chunked) {
    ctas = (int64_t)g->num_sms * g->ctas_per_sm;
  } else {
    const blockattn_tensor *tokens = &plan->recordTensors[g->tokens];
    int64_t sequences = plan->recordTensors[g->offsets].shape[0] - 1;
    int64_t virtualBlocks =
        tokens->shape[0] / g->block_size + (sequences > 0 ? sequences : 0);
    /* Packed tiles: a work item is blocks_per_tile virtual blocks. */
    if (g->blocks_per_tile > 1)
      virtualBlocks =
          (virtualBlocks + g->blocks_per_tile - 1) / g->blocks_per_tile;
    int64_t items = virtualBlocks * tokens->shape[1];
    ctas = (items + g->tiles_per_cta - 1) / g->tiles_per_cta;
    if (ctas < 1)
      ctas = 1;
  }
  if (ctas > 0x7fffffff)
    return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                "grid: %lld CTAs, more than a launch takes", (long long)ctas);
  *grid = (uint32_t)ctas;
  return BLOCKATTN_LAUNCH_OK;
}

blockattn_launch_status blockattnLaunchRecord(blockattn_plan *plan,
                                              const int64_t *record) {
  if (!plan)
    return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT, "plan: NULL");
  if (!plan->rules)
    return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT,
                "plan: no record rules (blockattnPlanSetRecord)");
  if (!record)
    return fail(BLOCKATTN_LAUNCH_INVALID_ARGUMENT, "record: NULL");
  const blockattn_driver *api = getDriver();
  if (!api)
    return fail(BLOCKATTN_LAUNCH_NO_DRIVER, "blockattn: the CUDA driver: %s",
                driverError);
  pthread_mutex_lock(&plan->lock);
  uint64_t stream;
  uint32_t grid = 0;
  blockattn_launch_status status = readRecord(plan, record, &stream);
  if (status == BLOCKATTN_LAUNCH_OK)
    status = recordGrid(plan, &grid);
  if (status == BLOCKATTN_LAUNCH_OK)
    status = launchLocked(plan, api, grid, stream, plan->recordTensors,
                          plan->recordScalars);
  if (status == BLOCKATTN_LAUNCH_OK)
    plan->lastGrid = grid;
  pthread_mutex_unlock(&plan->lock);
  return status;
}
