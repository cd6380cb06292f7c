/*===- blockattn-launch-test.c - libblockattn_launch without a GPU --------===*\
|*                                                                            *|
|* Run by test/Launch/launch.test.                                            *|
|*   blockattn-launch-test nodriver   libcuda cannot be opened: the errors    *|
|*   blockattn-launch-test fake       a recording driver stands in for        *|
|*                                    libcuda: what the plan passes to        *|
|*                                    cuTensorMapEncodeTiled and              *|
|*                                    cuLaunchKernel, the tensor-map cache,   *|
|*                                    and the errors of bad plans and calls.  *|
|*   blockattn-launch-test record     the same driver: launches from one     *|
|*                                    record of 64-bit words (the rules, the  *|
|*                                    grid, the checks, nothing launched on a *|
|*                                    failed check).                          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "blockattn-c/Launch.h"

#include <stdio.h>
#include <string.h>

static int encodes, launches, failEncode;
static uint64_t lastDims[5], lastStrides[5];
static uint32_t lastBox[5], lastRank;
static void *lastAddress;
static unsigned lastGrid, lastThreads, lastSmem;
static void *lastStream, *lastFunction;
static int32_t lastI32[3];
static int64_t lastI64;
static uint64_t lastPointer;
static float lastF32;
static unsigned char lastMapByte;
/* The calling thread's current context, as the driver keeps it: none at
   first, as on a thread PyTorch started (the autograd engine's). */
static void *currentContext;

static int fakeEncode(void *map, int dataType, uint32_t rank, void *address,
                      const uint64_t *dims, const uint64_t *strides,
                      const uint32_t *box, const uint32_t *elementStrides,
                      int interleave, int swizzle, int l2, int oob) {
  (void)elementStrides;
  (void)interleave;
  (void)oob;
  if (!currentContext)
    return 201; /* CUDA_ERROR_INVALID_CONTEXT: encoding needs a context */
  if (failEncode)
    return 1; /* CUDA_ERROR_INVALID_VALUE */
  ++encodes;
  lastRank = rank;
  lastAddress = address;
  memcpy(lastDims, dims, rank * sizeof(*dims));
  memcpy(lastStrides, strides, (rank - 1) * sizeof(*strides));
  memcpy(lastBox, box, rank * sizeof(*box));
  memset(map, 0, 128);
  ((unsigned char *)map)[0] = (unsigned char)encodes;
  ((unsigned char *)map)[1] = (unsigned char)(dataType + swizzle + l2);
  return 0;
}

/* The parameters of the test plan: map(t0), i32 size(t0, 0), i32 size(t0, 1),
   pointer(t1), i64 stride(t1, 0), i32 size(t1, 0), f32 scalar 0; with
   recordLayout, the record plan's (makeRecordPlan). */
static int recordLayout;
static int fakeLaunch(void *function, uint32_t gx, uint32_t gy, uint32_t gz,
                      uint32_t bx, uint32_t by, uint32_t bz, uint32_t smem,
                      void *stream, void **params, void **extra) {
  (void)gy;
  (void)gz;
  (void)by;
  (void)bz;
  (void)extra;
  ++launches;
  lastFunction = function;
  lastGrid = gx;
  lastThreads = bx;
  lastSmem = smem;
  lastStream = stream;
  lastMapByte = *(unsigned char *)params[0];
  if (recordLayout) {
    memcpy(&lastPointer, params[2], 8);
    memcpy(&lastI32[0], params[3], 4);
    memcpy(&lastF32, params[4], 4);
    return 0;
  }
  memcpy(&lastI32[0], params[1], 4);
  memcpy(&lastI32[1], params[2], 4);
  memcpy(&lastPointer, params[3], 8);
  memcpy(&lastI64, params[4], 8);
  memcpy(&lastI32[2], params[5], 4);
  memcpy(&lastF32, params[6], 4);
  return 0;
}

static int fakeSetCurrent(void *context) {
  if (!context)
    return 201;
  currentContext = context;
  return 0;
}

static int fakeErrorName(int error, const char **name) {
  *name = error == 1 ? "CUDA_ERROR_INVALID_VALUE" : "CUDA_ERROR_OTHER";
  return 0;
}

static blockattn_param params[7];

static void makeParams(void) {
  memset(params, 0, sizeof(params));
  params[0].kind = BLOCKATTN_PARAM_TENSORMAP;
  params[0].tensor = 0;
  params[0].data_type = 9; /* CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 */
  params[0].swizzle = 3;   /* 128B */
  params[0].l2_promotion = 2;
  params[0].rank = 3;
  params[0].box[0] = 64;
  params[0].box[1] = 1;
  params[0].box[2] = 64;
  params[1].kind = BLOCKATTN_PARAM_SIZE_I32;
  params[2].kind = BLOCKATTN_PARAM_SIZE_I32;
  params[2].dim = 1;
  params[3].kind = BLOCKATTN_PARAM_POINTER;
  params[3].tensor = 1;
  params[4].kind = BLOCKATTN_PARAM_STRIDE_I64;
  params[4].tensor = 1;
  params[5].kind = BLOCKATTN_PARAM_SIZE_I32;
  params[5].tensor = 1;
  params[6].kind = BLOCKATTN_PARAM_F32;
}

static blockattn_tensor activation(uint64_t data, int64_t tokens, int64_t heads,
                                   int64_t headStride) {
  blockattn_tensor t;
  memset(&t, 0, sizeof(t));
  t.data = data;
  t.rank = 3;
  t.element_size = 2;
  t.shape[0] = tokens;
  t.shape[1] = heads;
  t.shape[2] = 128;
  t.strides[0] = heads * headStride;
  t.strides[1] = headStride;
  t.strides[2] = 1;
  return t;
}

static void report(const char *what, blockattn_launch_status status) {
  printf("%s: status %d: %s\n", what, (int)status,
         status ? blockattnLaunchLastError() : "ok");
}

static int noDriver(void) {
  report("driver", blockattnLaunchDriverAvailable());
  makeParams();
  blockattn_plan *plan = NULL;
  report("plan", blockattnPlanCreate(0x1234, 0x5678, 256, 1024, params, 7, 2, 1,
                                     &plan));
  blockattn_tensor tensors[2] = {activation(0x10000, 512, 4, 128),
                                 activation(0x20000, 9, 1, 16)};
  tensors[1].rank = 1;
  tensors[1].strides[0] = 1;
  float scale = 0.125f;
  report("launch", blockattnLaunch(plan, 1, 0, tensors, &scale));
  blockattnPlanDestroy(plan);
  return 0;
}

static int fake(void) {
  blockattn_driver table = {fakeEncode, fakeLaunch, fakeSetCurrent,
                            fakeErrorName};
  blockattnLaunchSetDriver(&table);
  printf("abi %d\n", blockattnLaunchAbiVersion());
  report("driver", blockattnLaunchDriverAvailable());
  makeParams();
  blockattn_plan *plan = NULL;
  report("plan", blockattnPlanCreate(0x1234, 0x5678, 256, 115696, params, 7, 2,
                                     1, &plan));
  blockattn_tensor tensors[2] = {activation(0x10000, 512, 4, 128),
                                 activation(0x20000, 9, 1, 16)};
  tensors[1].rank = 1;
  tensors[1].strides[0] = 1;
  float scale = 0.125f;
  report("launch 1", blockattnLaunch(plan, 132, 0xabc, tensors, &scale));
  printf("encode: rank %u address %p dims %llu %llu %llu strides %llu %llu "
         "box %u %u %u\n",
         lastRank, lastAddress, (unsigned long long)lastDims[0],
         (unsigned long long)lastDims[1], (unsigned long long)lastDims[2],
         (unsigned long long)lastStrides[0], (unsigned long long)lastStrides[1],
         lastBox[0], lastBox[1], lastBox[2]);
  printf("launch: function %p grid %u threads %u smem %u stream %p map %u "
         "sizes %d %d pointer %#llx stride %lld size %d scale %g\n",
         lastFunction, lastGrid, lastThreads, lastSmem, lastStream, lastMapByte,
         lastI32[0], lastI32[1], (unsigned long long)lastPointer,
         (long long)lastI64, lastI32[2], lastF32);
  /* The same tensor again: no encode. Another address: an encode. Back to
     the first: kept. Another stride: an encode. */
  blockattnLaunch(plan, 132, 0xabc, tensors, &scale);
  printf("same tensor: encodes %llu map %u\n",
         (unsigned long long)blockattnPlanEncodeCount(plan), lastMapByte);
  blockattn_tensor other[2] = {activation(0x30000, 512, 4, 128), tensors[1]};
  blockattnLaunch(plan, 132, 0xabc, other, &scale);
  printf("other address: encodes %llu map %u\n",
         (unsigned long long)blockattnPlanEncodeCount(plan), lastMapByte);
  blockattnLaunch(plan, 132, 0xabc, tensors, &scale);
  printf("first again: encodes %llu map %u\n",
         (unsigned long long)blockattnPlanEncodeCount(plan), lastMapByte);
  blockattn_tensor strided[2] = {activation(0x10000, 512, 4, 192), tensors[1]};
  blockattnLaunch(plan, 132, 0xabc, strided, &scale);
  printf("other stride: encodes %llu strides %llu %llu\n",
         (unsigned long long)blockattnPlanEncodeCount(plan),
         (unsigned long long)lastStrides[0],
         (unsigned long long)lastStrides[1]);
  /* More distinct tensors than the cache keeps: the oldest is replaced. */
  for (int i = 0; i < BLOCKATTN_LAUNCH_CACHE_ENTRIES; ++i) {
    blockattn_tensor t[2] = {activation(0x100000 + 0x1000 * i, 512, 4, 128),
                             tensors[1]};
    blockattnLaunch(plan, 132, 0xabc, t, &scale);
  }
  uint64_t before = blockattnPlanEncodeCount(plan);
  blockattnLaunch(plan, 132, 0xabc, tensors, &scale);
  printf("after %d others: first re-encoded %llu\n",
         BLOCKATTN_LAUNCH_CACHE_ENTRIES,
         (unsigned long long)(blockattnPlanEncodeCount(plan) - before));
  printf("launches %d\n", launches);

  /* Bad calls. */
  blockattn_tensor bad[2];
  memcpy(bad, tensors, sizeof(bad));
  bad[0].strides[2] = 2;
  report("innermost stride", blockattnLaunch(plan, 1, 0, bad, &scale));
  memcpy(bad, tensors, sizeof(bad));
  bad[0].data = 0x10008;
  report("misaligned", blockattnLaunch(plan, 1, 0, bad, &scale));
  memcpy(bad, tensors, sizeof(bad));
  bad[0].strides[1] = 100;
  report("stride", blockattnLaunch(plan, 1, 0, bad, &scale));
  memcpy(bad, tensors, sizeof(bad));
  /* Rank 2 would be split (a map one rank above its tensor splits the
     innermost dimension in halves): two ranks below the map. */
  bad[0].rank = 1;
  report("rank", blockattnLaunch(plan, 1, 0, bad, &scale));
  memcpy(bad, tensors, sizeof(bad));
  bad[0].shape[0] = 0;
  report("empty", blockattnLaunch(plan, 1, 0, bad, &scale));
  memcpy(bad, tensors, sizeof(bad));
  bad[1].shape[0] = (int64_t)1 << 40;
  report("i32 overflow", blockattnLaunch(plan, 1, 0, bad, &scale));
  report("grid", blockattnLaunch(plan, 0, 0, tensors, &scale));
  report("no tensors", blockattnLaunch(plan, 1, 0, NULL, &scale));
  report("no plan", blockattnLaunch(NULL, 1, 0, tensors, &scale));
  failEncode = 1;
  blockattn_tensor fresh[2] = {activation(0x40000, 512, 4, 128), tensors[1]};
  report("encode fails", blockattnLaunch(plan, 1, 0, fresh, &scale));
  failEncode = 0;
  blockattnPlanDestroy(plan);
  report("no context",
         blockattnPlanCreate(0x1234, 0, 256, 0, params, 7, 2, 1, &plan));
  blockattnPlanDestroy(plan);

  /* Bad plans. */
  report("null function",
         blockattnPlanCreate(0, 1, 256, 0, params, 7, 2, 1, &plan));
  report("threads", blockattnPlanCreate(1, 1, 2048, 0, params, 7, 2, 1, &plan));
  report("tensor range",
         blockattnPlanCreate(1, 1, 256, 0, params, 7, 1, 1, &plan));
  report("scalar range",
         blockattnPlanCreate(1, 1, 256, 0, params, 7, 2, 0, &plan));
  params[0].box[1] = 0;
  report("box", blockattnPlanCreate(1, 1, 256, 0, params, 7, 2, 1, &plan));
  params[0].box[1] = 1;
  params[0].rank = 6;
  report("map rank", blockattnPlanCreate(1, 1, 256, 0, params, 7, 2, 1, &plan));
  params[0].rank = 3;
  params[1].kind = 42;
  report("kind", blockattnPlanCreate(1, 1, 256, 0, params, 7, 2, 1, &plan));
  params[1].kind = BLOCKATTN_PARAM_SIZE_I32;
  params[1].dim = 7;
  report("dim", blockattnPlanCreate(1, 1, 256, 0, params, 7, 2, 1, &plan));
  blockattnLaunchSetDriver(NULL);
  return 0;
}

/* A record launch's plan: map(t0), map(t2), pointer(t1), i32 size(t1, 0),
   f32 scalar 0; t0 and t2 are [T, H, 128] bf16 activations (t2 must have
   t0's shape), t1 is cu_seqlens (int32, contiguous, not empty, aligned). */
static blockattn_param recordParams[5];
static blockattn_tensor_rule rules[3];

static void makeRecordPlan(void) {
  memset(recordParams, 0, sizeof(recordParams));
  for (int i = 0; i < 2; ++i) {
    blockattn_param *p = &recordParams[i];
    p->kind = BLOCKATTN_PARAM_TENSORMAP;
    p->tensor = i ? 2 : 0;
    p->data_type = 9;
    p->swizzle = 3;
    p->rank = 3;
    p->box[0] = 64;
    p->box[1] = 1;
    p->box[2] = 64;
  }
  recordParams[2].kind = BLOCKATTN_PARAM_POINTER;
  recordParams[2].tensor = 1;
  recordParams[3].kind = BLOCKATTN_PARAM_SIZE_I32;
  recordParams[3].tensor = 1;
  recordParams[4].kind = BLOCKATTN_PARAM_F32;
  blockattn_tensor_rule activationRule = {3, -1, 2, BLOCKATTN_TENSOR_NONEMPTY};
  blockattn_tensor_rule offsetsRule = {1, -1, 4,
                                       BLOCKATTN_TENSOR_CONTIGUOUS |
                                           BLOCKATTN_TENSOR_ALIGNED |
                                           BLOCKATTN_TENSOR_NONEMPTY};
  rules[0] = activationRule;
  rules[1] = offsetsRule;
  rules[2] = activationRule;
  rules[2].shape_of = 0;
}

/* A record: stream, then (address, rank, sizes, strides) per tensor, then the
   scale as a double. */
typedef struct {
  int64_t words[64];
  int count;
} Record;

static void push(Record *r, int64_t word) { r->words[r->count++] = word; }

static void pushActivation(Record *r, int64_t address, int64_t tokens,
                           int64_t heads, int64_t headStride) {
  push(r, address);
  push(r, 3);
  push(r, tokens);
  push(r, heads);
  push(r, 128);
  push(r, heads * headStride);
  push(r, headStride);
  push(r, 1);
}

static Record makeRecord(int64_t tokens, int64_t sequences, int64_t cuStride) {
  Record r = {{0}, 0};
  push(&r, 0xabc);
  pushActivation(&r, 0x10000, tokens, 4, 128);
  push(&r, 0x20000);
  push(&r, 1);
  push(&r, sequences + 1);
  push(&r, cuStride);
  pushActivation(&r, 0x30000, tokens, 4, 128);
  double scale = 0.125;
  int64_t bits;
  memcpy(&bits, &scale, sizeof(bits));
  push(&r, bits);
  return r;
}

static int record(void) {
  blockattn_driver table = {fakeEncode, fakeLaunch, fakeSetCurrent,
                            fakeErrorName};
  blockattnLaunchSetDriver(&table);
  recordLayout = 1;
  makeRecordPlan();
  blockattn_plan *plan = NULL;
  report("plan", blockattnPlanCreate(0x1234, 0x5678, 384, 1000, recordParams, 5,
                                     3, 1, &plan));
  Record r = makeRecord(512, 8, 1);
  report("before rules", blockattnLaunchRecord(plan, r.words));
  blockattn_grid chunked = {1, 1, 64, 4, 132, 0, 1};
  report("rules", blockattnPlanSetRecord(plan, rules, &chunked));
  printf("words %d (record %d)\n", blockattnPlanRecordWords(plan), r.count);
  report("again", blockattnPlanSetRecord(plan, rules, &chunked));
  report("record", blockattnLaunchRecord(plan, r.words));
  /* (512 / 64 + 8 sequences) * 4 heads = 64 work items, 4 per CTA. */
  printf("launch: grid %u (plan says %u) threads %u stream %p maps %llu "
         "pointer %#llx size %d scale %g\n",
         lastGrid, blockattnPlanLastGrid(plan), lastThreads, lastStream,
         (unsigned long long)blockattnPlanEncodeCount(plan),
         (unsigned long long)lastPointer, lastI32[0], lastF32);
  printf("encode: address %p dims %llu %llu %llu strides %llu %llu\n",
         lastAddress, (unsigned long long)lastDims[0],
         (unsigned long long)lastDims[1], (unsigned long long)lastDims[2],
         (unsigned long long)lastStrides[0],
         (unsigned long long)lastStrides[1]);
  blockattnLaunchRecord(plan, r.words);
  printf("same record: encodes %llu\n",
         (unsigned long long)blockattnPlanEncodeCount(plan));
  Record one = makeRecord(100, 1, 1);
  blockattnLaunchRecord(plan, one.words);
  printf("one sequence of 100: grid %u\n", lastGrid); /* (1 + 1) * 4 / 4 */
  Record none = makeRecord(512, 0, 1);
  blockattnLaunchRecord(plan, none.words);
  printf("no sequence: grid %u\n", lastGrid); /* 8 * 4 / 4 */
  /* cu_seqlens of one element: a stride other than 1 is still contiguous. */
  Record single = makeRecord(512, 0, 7);
  report("size-1 offsets, stride 7", blockattnLaunchRecord(plan, single.words));
  int before = launches;

  /* Bad records: refused before anything is launched. */
  Record bad = makeRecord(512, 8, 1);
  bad.words[2] = 2; /* t0's rank */
  report("rank", blockattnLaunchRecord(plan, bad.words));
  bad = makeRecord(512, 8, 1);
  bad.words[1 + 8 + 4 + 3] = 5; /* t2's heads */
  report("shape", blockattnLaunchRecord(plan, bad.words));
  bad = makeRecord(512, 8, 2);
  report("offsets stride", blockattnLaunchRecord(plan, bad.words));
  bad = makeRecord(512, -1, 1);
  report("no offsets", blockattnLaunchRecord(plan, bad.words));
  bad = makeRecord(512, 8, 1);
  bad.words[1 + 8] = 0x20004; /* t1's address */
  report("offsets misaligned", blockattnLaunchRecord(plan, bad.words));
  bad = makeRecord(512, 8, 1);
  bad.words[1 + 8 + 4] = 0x30008; /* t2's address: its tensor map says */
  report("map misaligned", blockattnLaunchRecord(plan, bad.words));
  bad = makeRecord(0, 8, 1);
  report("no tokens", blockattnLaunchRecord(plan, bad.words));
  bad = makeRecord((int64_t)1 << 38, 8, 1);
  report("grid too large", blockattnLaunchRecord(plan, bad.words));
  report("null record", blockattnLaunchRecord(plan, NULL));
  report("null plan", blockattnLaunchRecord(NULL, r.words));
  printf("launched after bad records: %d\n", launches - before);
  blockattnPlanDestroy(plan);

  /* A persistent grid: ctas_per_sm CTAs per SM, whatever the shapes. */
  blockattnPlanCreate(0x1234, 0x5678, 384, 1000, recordParams, 5, 3, 1, &plan);
  blockattn_grid persistent = {0, 2, 0, 0, 132, -1, -1};
  blockattnPlanSetRecord(plan, rules, &persistent);
  report("persistent", blockattnLaunchRecord(plan, one.words));
  printf("persistent grid %u\n", lastGrid);
  blockattnPlanDestroy(plan);

  /* Packed tiles (blocks of 16, 4 virtual blocks a work item):
     ceil((512 / 16 + 8) / 4) * 4 heads = 40 work items, 4 per CTA. */
  blockattnPlanCreate(0x1234, 0x5678, 384, 1000, recordParams, 5, 3, 1, &plan);
  blockattn_grid packed = {1, 1, 16, 4, 132, 0, 1, 4};
  report("packed", blockattnPlanSetRecord(plan, rules, &packed));
  blockattnLaunchRecord(plan, r.words);
  printf("packed grid %u\n", lastGrid);
  blockattnPlanDestroy(plan);

  /* Grouped-query attention: t2 (k) has a group-th of t0's (q's) heads. */
  blockattnPlanCreate(0x1234, 0x5678, 384, 1000, recordParams, 5, 3, 1, &plan);
  blockattn_tensor_rule grouped[3];
  memcpy(grouped, rules, sizeof(grouped));
  grouped[2].group = 2;
  report("group rules", blockattnPlanSetRecord(plan, grouped, &chunked));
  Record kv = makeRecord(512, 8, 1);
  kv.words[1 + 8 + 4 + 3] = 2; /* t2's heads: 4 / 2 */
  kv.words[1 + 8 + 4 + 5] = 2 * 128;
  report("grouped record", blockattnLaunchRecord(plan, kv.words));
  printf("grouped: grid %u encode dims %llu %llu %llu\n", lastGrid,
         (unsigned long long)lastDims[0], (unsigned long long)lastDims[1],
         (unsigned long long)lastDims[2]);
  report("ungrouped k", blockattnLaunchRecord(plan, r.words));
  blockattnPlanDestroy(plan);

  /* Bad rules and grids. */
  struct {
    const char *what;
    int rule;
    blockattn_tensor_rule value;
  } badRules[] = {
      {"rule rank", 1, {0, -1, 4, 0}},    {"shape_of itself", 2, {3, 2, 2, 0}},
      {"shape_of rank", 2, {3, 1, 2, 0}}, {"element size", 1, {1, -1, 3, 0}},
      {"flags", 1, {1, -1, 4, 64}},       {"map rank", 2, {1, -1, 2, 0}},
      {"group", 1, {1, -1, 4, 0, 2}},     {"group sign", 2, {3, 0, 2, 0, -1}},
  };
  for (unsigned i = 0; i < sizeof(badRules) / sizeof(badRules[0]); ++i) {
    blockattnPlanCreate(0x1234, 0x5678, 384, 1000, recordParams, 5, 3, 1,
                        &plan);
    blockattn_tensor_rule copy[3];
    memcpy(copy, rules, sizeof(copy));
    copy[badRules[i].rule] = badRules[i].value;
    report(badRules[i].what, blockattnPlanSetRecord(plan, copy, &chunked));
    blockattnPlanDestroy(plan);
  }
  blockattn_grid badGrids[] = {
      {1, 1, 64, 4, 0, 0, 1},   {1, 1, 64, 0, 132, 0, 1},
      {1, 1, 64, 4, 132, 1, 1}, {1, 1, 64, 4, 132, 0, 2},
      {1, 1, 16, 4, 132, 0, 1, -4},
  };
  const char *gridNames[] = {"num_sms", "tiles_per_cta", "tokens", "offsets",
                             "blocks_per_tile"};
  for (int i = 0; i < 5; ++i) {
    blockattnPlanCreate(0x1234, 0x5678, 384, 1000, recordParams, 5, 3, 1,
                        &plan);
    report(gridNames[i], blockattnPlanSetRecord(plan, rules, &badGrids[i]));
    printf("  words %d\n", blockattnPlanRecordWords(plan));
    blockattnPlanDestroy(plan);
  }
  blockattnLaunchSetDriver(NULL);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "nodriver"))
    return noDriver();
  if (argc == 2 && !strcmp(argv[1], "fake"))
    return fake();
  if (argc == 2 && !strcmp(argv[1], "record"))
    return record();
  fprintf(stderr, "usage: %s nodriver|fake|record\n", argv[0]);
  return 2;
}
