/*===- blockattn-capi-test.c - the C API, from C --------------------------===*\
|*                                                                            *|
|* Run by test/CAPI/capi.test on examples/seed.mlir: registers the dialects   *|
|* through the C API, parses the file, compiles it with mlirBlockAttnCompile  *|
|* and prints what came back; then runs blockattn-to-ptx through a textual    *|
|* pass pipeline and through the pipeline builder, and shows that bad options *|
|* are errors, not crashes.                                                   *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "blockattn-c/Compiler.h"
#include "blockattn-c/Dialects.h"
#include "blockattn-c/Passes.h"

#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#include <stdio.h>
#include <string.h>

static void printToStdout(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stdout);
}

static MlirLogicalResult printDiagnostic(MlirDiagnostic diagnostic,
                                         void *userData) {
  (void)userData;
  printf("diagnostic: ");
  mlirDiagnosticPrint(diagnostic, printToStdout, NULL);
  printf("\n");
  return mlirLogicalResultSuccess();
}

static MlirModule parseFile(MlirContext context, const char *path) {
  return mlirModuleCreateParseFromFile(context,
                                       mlirStringRefCreateFromCString(path));
}

/* Counts occurrences of `needle` in `text`. */
static int count(MlirStringRef text, const char *needle) {
  size_t n = strlen(needle);
  int found = 0;
  for (size_t i = 0; i + n <= text.length; ++i)
    if (memcmp(text.data + i, needle, n) == 0)
      ++found;
  return found;
}

static int compileSeed(MlirContext context, const char *path) {
  MlirModule module = parseFile(context, path);
  if (mlirModuleIsNull(module))
    return 1;
  MlirBlockAttnCompileResult result = mlirBlockAttnCompile(
      module, mlirStringRefCreateFromCString("chip=sm_90a"), false,
      mlirStringRefCreateFromCString(""));
  mlirModuleDestroy(module);
  if (mlirBlockAttnCompileResultIsNull(result))
    return 1;
  intptr_t n = mlirBlockAttnCompileResultGetNumKernels(result);
  printf("kernels: %ld\n", (long)n);
  for (intptr_t i = 0; i < n; ++i) {
    MlirStringRef name = mlirBlockAttnCompileResultGetKernelName(result, i);
    MlirStringRef ptx = mlirBlockAttnCompileResultGetPtx(result, i);
    MlirStringRef cubin = mlirBlockAttnCompileResultGetCubin(result, i);
    MlirStringRef manifest = mlirBlockAttnCompileResultGetManifest(result, i);
    printf("%.*s: .entry %d, .target sm_90a %d, cubin %ld bytes, manifest "
           "schema_version %d\n",
           (int)name.length, name.data, count(ptx, ".entry"),
           count(ptx, ".target sm_90a"), (long)cubin.length,
           count(manifest, "\"schema_version\": 1"));
  }
  mlirBlockAttnCompileResultDestroy(result);
  return 0;
}

static int runPipeline(MlirContext context, const char *path,
                       const char *pipeline) {
  MlirModule module = parseFile(context, path);
  if (mlirModuleIsNull(module))
    return 1;
  MlirPassManager pm = mlirPassManagerCreate(context);
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  MlirLogicalResult parsed = mlirParsePassPipeline(
      opm, mlirStringRefCreateFromCString(pipeline), printToStdout, NULL);
  int rc = 1;
  if (mlirLogicalResultIsSuccess(parsed)) {
    MlirLogicalResult ran =
        mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module));
    rc = mlirLogicalResultIsSuccess(ran) ? 0 : 1;
  } else {
    printf("\n");
  }
  printf("pipeline %s: %s\n", pipeline, rc ? "failed" : "ran");
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);
  return rc;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: blockattn-capi-test examples/seed.mlir\n");
    return 2;
  }
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirDialectHandleInsertDialect(mlirGetDialectHandle__blockattn__(), registry);
  mlirDialectHandleInsertDialect(mlirGetDialectHandle__warpspec__(), registry);
  mlirRegisterAllBlockAttnDialects(registry);
  MlirContext context = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  mlirContextAttachDiagnosticHandler(context, printDiagnostic, NULL, NULL);
  mlirRegisterAllBlockAttnPasses();
  /* Idempotent: a second call registers nothing twice. */
  mlirRegisterAllBlockAttnPipelines();

  MlirDialectHandle handle = mlirGetDialectHandle__blockattn__();
  MlirStringRef ns = mlirDialectHandleGetNamespace(handle);
  printf("dialect: %.*s\n", (int)ns.length, ns.data);

  int rc = compileSeed(context, argv[1]);
  rc |= runPipeline(context, argv[1],
                    "builtin.module(blockattn-to-ptx{chip=sm_90a format=isa})");
  /* Errors, not crashes: a PTX ISA too old for the chip, a bad format. */
  if (!runPipeline(context, argv[1],
                   "builtin.module(blockattn-to-ptx{ptx-features=+ptx60})"))
    rc = 1;

  MlirPassManager pm = mlirPassManagerCreate(context);
  MlirLogicalResult built = mlirBlockAttnBuildBlockAttnToPtxPipeline(
      mlirPassManagerGetAsOpPassManager(pm),
      mlirStringRefCreateFromCString("chip=sm_100a format=bogus"),
      printToStdout, NULL);
  printf("\nbuild with format=bogus: %s\n",
         mlirLogicalResultIsSuccess(built) ? "built" : "failed");
  if (mlirLogicalResultIsSuccess(built))
    rc = 1;
  mlirPassManagerDestroy(pm);

  MlirModule empty = mlirModuleCreateEmpty(mlirLocationUnknownGet(context));
  MlirBlockAttnCompileResult none =
      mlirBlockAttnCompile(empty, mlirStringRefCreateFromCString("chip=sm_90a"),
                           false, mlirStringRefCreateFromCString(""));
  printf("compile of an empty module: %s\n",
         mlirBlockAttnCompileResultIsNull(none) ? "failed" : "compiled");
  if (!mlirBlockAttnCompileResultIsNull(none))
    rc = 1;
  mlirModuleDestroy(empty);

  mlirContextDestroy(context);
  printf("capi: %s\n", rc ? "FAILED" : "ok");
  return rc;
}
