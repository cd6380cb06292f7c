//===- block-attn-compile.cpp - kernels to PTX and launch manifests -------===//
//
//   block-attn-compile INPUT.mlir --chip=sm_90a -o DIR [--cubin]
//   block-attn-compile --kind=forward --head-dim=128 --block-size=64
//                      --dtype=bf16 --chip=sm_90a -o DIR
//                      [--rotary=half_split|interleaved [--positions]
//                       [--rotate-v] [--rotary-theta=THETA]]
//
// Runs the blockattn-to-ptx pipeline on every kernel function of the input
// (or on one kernel described by flags) and writes, per kernel,
// DIR/<kernel>.ptx and DIR/<kernel>.json: the launch manifest (threads,
// shared memory, TMEM, grid policy, the ordered parameter list with what the
// runtime must pass for each). With --cubin it also runs ptxas, writes
// DIR/<kernel>.cubin and records ptxas' resource report in the manifest.
//
//===----------------------------------------------------------------------===//

#include "blockattn/InitAllDialects.h"
#include "blockattn/InitAllPasses.h"
#include "blockattn/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/Timer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory category("block-attn-compile options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("[input.mlir]"),
                                      cl::init(""), cl::cat(category));
static cl::opt<std::string> outputDir("o", cl::desc("Output directory"),
                                      cl::value_desc("dir"), cl::init(""),
                                      cl::cat(category));
static cl::opt<std::string> chip("chip", cl::desc("sm_90a or sm_100a"),
                                 cl::init("sm_90a"), cl::cat(category));
static cl::opt<bool> emitCubin("cubin",
                               cl::desc("Also assemble with ptxas (-v)"),
                               cl::cat(category));
static cl::opt<std::string> ptxasPath("ptxas", cl::desc("ptxas to use"),
                                      cl::init(""), cl::cat(category));
static cl::opt<bool> quiet("quiet", cl::desc("Print nothing on success"),
                           cl::cat(category));
static cl::opt<bool> noHeader("no-header",
                              cl::desc("Omit the resource table's header"),
                              cl::cat(category));

// A kernel described by flags instead of an input file.
static cl::opt<std::string> kind("kind",
                                 cl::desc("forward or backward (no input)"),
                                 cl::init(""), cl::cat(category));
static cl::opt<int64_t> headDim("head-dim", cl::init(128), cl::cat(category));
static cl::opt<int64_t> blockSize("block-size", cl::init(64),
                                  cl::cat(category));
static cl::opt<std::string> dtype("dtype", cl::desc("bf16 or f16"),
                                  cl::init("bf16"), cl::cat(category));
static cl::opt<int64_t> heads("heads",
                              cl::desc("Static head count (0: run-time)"),
                              cl::init(0), cl::cat(category));
static cl::opt<std::string> rotary("rotary",
                                   cl::desc("none, half_split, interleaved"),
                                   cl::init("none"), cl::cat(category));
static cl::opt<bool> rotaryPositions(
    "positions",
    cl::desc("With --rotary: the kernel takes an i32 positions tensor [T] "
             "(default: a token's index inside its sequence)"),
    cl::cat(category));
static cl::opt<bool> rotateV("rotate-v",
                             cl::desc("With --rotary: rotate v as well"),
                             cl::cat(category));
static cl::opt<double> rotaryTheta(
    "rotary-theta",
    cl::desc("With --rotary: compute the angles in the kernel from this base "
             "(pair i of position p turns by p * theta^(-2i/head_dim)) "
             "instead of reading cos/sin tables"),
    cl::init(0.0), cl::cat(category));
static cl::opt<std::string> kernelName("name", cl::desc("Kernel name"),
                                       cl::init(""), cl::cat(category));
static cl::opt<bool> emitBlockAttn(
    "emit-blockattn",
    cl::desc("With --kind: print the verified blockattn IR of the kernel the "
             "flags describe and stop (no -o needed)"),
    cl::cat(category));
static cl::list<std::string>
    onlyKernels("kernels",
                cl::desc("Compile only these kernel functions of the input"),
                cl::CommaSeparated, cl::cat(category));

// Pipeline tuning.
static cl::opt<int64_t> numStages("num-stages", cl::init(0), cl::cat(category));
static cl::opt<int64_t>
    numConsumers("num-consumers",
                 cl::desc("Hopper consumer warpgroups (0: the recipe picks)"),
                 cl::init(0), cl::cat(category));
static cl::opt<std::string> pOperand("p-operand", cl::init("registers"),
                                     cl::cat(category));
static cl::opt<std::string> oStore("o-store", cl::init("tma"),
                                   cl::cat(category));
static cl::opt<std::string>
    l2Prefetch("l2-prefetch",
               cl::desc("Prefetch each tile into L2 before waiting for a "
                        "slot: auto (the recipe picks), on or off"),
               cl::init("auto"), cl::cat(category));
static cl::opt<std::string>
    schedule("schedule",
             cl::desc("Tiles to CTAs: auto (the recipe picks), strided, "
                      "contiguous or chunked"),
             cl::init("auto"), cl::cat(category));
static cl::opt<int64_t>
    ctasPerSm("ctas-per-sm",
              cl::desc("Hopper CTAs sharing an SM (0: the recipe picks)"),
              cl::init(0), cl::cat(category));
static cl::opt<int64_t> tilesPerCta(
    "tiles-per-cta",
    cl::desc("Tiles per CTA of a chunked launch (0: the recipe picks)"),
    cl::init(0), cl::cat(category));

namespace {

/// Checks the flags that describe a kernel (--kind mode) that the op
/// verifier cannot phrase in terms of flags.
bool checkKernelFlags(std::string &error) {
  if (kind != "forward" && kind != "backward") {
    error = "--kind must be 'forward' or 'backward'";
    return false;
  }
  if (rotary != "none" && rotary != "half_split" && rotary != "interleaved") {
    error = "--rotary must be 'none', 'half_split' or 'interleaved', got '" +
            rotary + "'";
    return false;
  }
  bool theta = rotaryTheta.getNumOccurrences() > 0;
  if (rotary == "none") {
    for (auto [given, flag] :
         std::initializer_list<std::pair<bool, const char *>>{
             {rotaryPositions, "--positions"},
             {rotateV, "--rotate-v"},
             {theta, "--rotary-theta"}})
      if (given) {
        error = std::string(flag) +
                " needs --rotary=half_split or --rotary=interleaved";
        return false;
      }
  }
  double thetaValue = rotaryTheta.getValue();
  if (theta && !(std::isfinite(thetaValue) && thetaValue > 1.0)) {
    error = "--rotary-theta must be a finite number greater than 1, got " +
            std::to_string(thetaValue);
    return false;
  }
  if (rotary != "none" && (headDim <= 0 || headDim % 2)) {
    error = "--rotary needs an even --head-dim, got " +
            std::to_string(headDim.getValue());
    return false;
  }
  return true;
}

/// The default kernel name of the --kind mode:
/// blockattn_<kind>_d<D>_b<B>_<dtype>[_<rotary>][_pos][_rv][_theta].
std::string defaultKernelName() {
  std::string name = "blockattn_" + kind + "_d" + std::to_string(headDim) +
                     "_b" + std::to_string(blockSize) + "_" + dtype;
  if (rotary != "none") {
    name += "_" + rotary;
    if (rotaryPositions)
      name += "_pos";
    if (rotateV)
      name += "_rv";
    if (rotaryTheta.getNumOccurrences())
      name += "_theta";
  }
  return name;
}

/// The MLIR of one kernel described by flags: run-time tokens, heads (unless
/// --heads) and softmax scale, so that one kernel serves every call. With
/// --rotary the function also takes the f32 tables %cos and %sin
/// [max_position, head_dim/2] (unless --rotary-theta) and, with --positions,
/// the i32 %positions [T]; blockattn-warp-specialize names the kernel
/// parameters after these roles ("cos", "sin", "positions").
std::string kernelFromFlags(std::string &error) {
  if (!checkKernelFlags(error))
    return "";
  std::string h = heads > 0 ? std::to_string(heads) : "?";
  std::string act =
      "memref<?x" + h + "x" + std::to_string(headDim) + "x" + dtype + ">";
  std::string name = kernelName.empty() ? defaultKernelName() : kernelName;
  std::string table = "memref<?x" + std::to_string(headDim / 2) + "xf32>";
  bool rope = rotary != "none";
  bool theta = rope && rotaryTheta.getNumOccurrences() > 0;
  bool tables = rope && !theta;
  bool positions = rope && rotaryPositions;
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "func.func @" << name << "(";
  std::vector<std::string> tensors =
      kind == "forward"
          ? std::vector<std::string>{"q", "k", "v", "o"}
          : std::vector<std::string>{"q", "k", "v", "do", "dq", "dk", "dv"};
  for (const std::string &t : tensors)
    os << "%" << t << ": " << act << ", ";
  os << "%cu: memref<?xi32>, %scale: f32";
  if (tables)
    os << ", %cos: " << table << ", %sin: " << table;
  if (positions)
    os << ", %positions: memref<?xi32>";
  os << ") {\n  blockattn." << kind;
  for (const std::string &t : tensors)
    os << " " << t << "(%" << t << " : " << act << ")";
  os << " cu_seqlens(%cu : memref<?xi32>) scale(%scale : f32)";
  if (tables)
    os << " rotary(%cos, %sin : " << table << ", " << table << ")";
  if (positions)
    os << " positions(%positions : memref<?xi32>)";
  os << " {block_size = " << blockSize << " : i64, head_dim = " << headDim
     << " : i64, element_type = " << dtype;
  if (rope)
    os << ", rotary = #blockattn.rotary<" << rotary << ">";
  if (theta)
    // An exponent makes it a float literal, 9 digits make it exact in f32.
    os << ", rotary_theta = "
       << llvm::format("%.9e", static_cast<double>(
                                   static_cast<float>(rotaryTheta.getValue())))
       << " : f32";
  if (rope && rotateV)
    os << ", rotate_v";
  os << "}\n  return\n}\n";
  return s;
}

llvm::json::Value toJson(Attribute attr) {
  if (auto s = dyn_cast<StringAttr>(attr))
    return s.str();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return i.getInt();
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto b = dyn_cast<BoolAttr>(attr))
    return b.getValue();
  if (isa<UnitAttr>(attr))
    return true;
  if (auto t = dyn_cast<TypeAttr>(attr)) {
    std::string s;
    llvm::raw_string_ostream os(s);
    t.getValue().print(os);
    return s;
  }
  if (auto a = dyn_cast<ArrayAttr>(attr)) {
    llvm::json::Array array;
    for (Attribute e : a)
      array.push_back(toJson(e));
    return array;
  }
  if (auto d = dyn_cast<DictionaryAttr>(attr)) {
    llvm::json::Object object;
    for (NamedAttribute e : d)
      object[e.getName().str()] = toJson(e.getValue());
    return object;
  }
  std::string s;
  llvm::raw_string_ostream os(s);
  attr.print(os);
  return s;
}

bool writeFile(StringRef path, StringRef contents) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    llvm::errs() << "error: cannot write " << path << ": " << ec.message()
                 << "\n";
    return false;
  }
  os << contents;
  return true;
}

std::string findPtxas() {
  if (!ptxasPath.empty())
    return ptxasPath;
  if (auto p = llvm::sys::findProgramByName("ptxas"))
    return *p;
  if (auto p = llvm::sys::findProgramByName("ptxas", {"/usr/local/cuda/bin"}))
    return *p;
  return "";
}

/// Runs ptxas -v; returns its resource report (registers, spills, shared
/// memory), or an error string.
std::optional<llvm::json::Object> runPtxas(StringRef ptx, StringRef cubin,
                                           StringRef arch, std::string &log) {
  std::string ptxas = findPtxas();
  if (ptxas.empty()) {
    log = "ptxas not found (pass --ptxas or put it on PATH)";
    return std::nullopt;
  }
  llvm::SmallString<128> logPath;
  llvm::sys::fs::createTemporaryFile("ptxas", "log", logPath);
  std::string archFlag = ("-arch=" + arch).str();
  StringRef args[] = {ptxas, archFlag, "-v", ptx, "-o", cubin};
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logPath),
                                          StringRef(logPath)};
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects);
  auto buffer = llvm::MemoryBuffer::getFile(logPath);
  log = buffer ? (*buffer)->getBuffer().str() : "";
  llvm::sys::fs::remove(logPath);
  if (rc != 0)
    return std::nullopt;
  llvm::json::Object report;
  llvm::SmallVector<StringRef> m;
  if (llvm::Regex("Used ([0-9]+) registers").match(log, &m))
    report["registers"] = std::stoll(m[1].str());
  if (llvm::Regex("([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads")
          .match(log, &m)) {
    report["spill_stores"] = std::stoll(m[1].str());
    report["spill_loads"] = std::stoll(m[2].str());
  }
  if (llvm::Regex("([0-9]+) bytes stack frame").match(log, &m))
    report["stack_frame"] = std::stoll(m[1].str());
  if (llvm::Regex("([0-9]+) bytes smem").match(log, &m))
    report["static_smem"] = std::stoll(m[1].str());
  // ptxas serializes wgmma pipelines silently except for these warnings.
  report["wgmma_serialized"] = llvm::Regex("C75[0-9][0-9]").match(log);
  return report;
}

std::string partitionSummary(const llvm::json::Object &manifest) {
  std::string s;
  if (const llvm::json::Array *parts = manifest.getArray("partitions"))
    for (const llvm::json::Value &p : *parts) {
      const llvm::json::Object *o = p.getAsObject();
      if (!s.empty())
        s += " ";
      s += o->getString("name").value_or("").str() + ":" +
           std::to_string(o->getInteger("warps").value_or(0) *
                          o->getInteger("replicas").value_or(1)) +
           "w/" + std::to_string(o->getInteger("registers").value_or(0)) + "r";
    }
  return s;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "block-attn-compile: compile blockattn kernels to PTX + manifests\n");
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();

  DialectRegistry registry;
  blockattn::registerBlockAttnToolDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  auto start = std::chrono::steady_clock::now();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module;
  if (!kind.empty()) {
    if (!inputFile.empty()) {
      llvm::errs() << "error: give an input file or --kind, not both\n";
      return 1;
    }
    std::string error;
    std::string text = kernelFromFlags(error);
    if (text.empty()) {
      llvm::errs() << "error: " << error << "\n";
      return 1;
    }
    module = parseSourceString<ModuleOp>(text, &context, "<flags>");
    if (module && emitBlockAttn) {
      module->print(llvm::outs());
      return 0;
    }
  } else {
    if (emitBlockAttn) {
      llvm::errs() << "error: --emit-blockattn needs --kind\n";
      return 1;
    }
    for (const cl::Option *flag : std::initializer_list<const cl::Option *>{
             &rotary, &rotaryPositions, &rotateV, &rotaryTheta})
      if (flag->getNumOccurrences()) {
        llvm::errs() << "error: --" << flag->ArgStr
                     << " describes a kernel: it needs --kind (an input file "
                        "states rotary embeddings in its blockattn ops)\n";
        return 1;
      }
    if (inputFile.empty()) {
      llvm::errs() << "error: no input file (or --kind) given\n";
      return 1;
    }
    std::string error;
    auto file = openInputFile(inputFile, &error);
    if (!file) {
      llvm::errs() << "error: " << error << "\n";
      return 1;
    }
    sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  }
  if (!module)
    return 1;
  if (outputDir.empty()) {
    llvm::errs() << "error: no output directory (-o DIR) given\n";
    return 1;
  }
  if (!onlyKernels.empty()) {
    llvm::StringSet<> wanted;
    for (const std::string &name : onlyKernels)
      wanted.insert(name);
    for (func::FuncOp func :
         llvm::make_early_inc_range(module->getOps<func::FuncOp>())) {
      if (!wanted.erase(func.getSymName()))
        func.erase();
    }
    for (const auto &missing : wanted) {
      llvm::errs() << "error: no kernel function @" << missing.getKey()
                   << " in the input\n";
      return 1;
    }
  }

  PassManager pm(&context);
  blockattn::BlockAttnToPtxOptions options;
  options.chip = chip;
  options.format = "none";
  options.numStages = numStages;
  options.numConsumers = numConsumers;
  options.pOperand = pOperand;
  options.oStore = oStore;
  options.schedule = schedule;
  options.ctasPerSm = ctasPerSm;
  options.tilesPerCta = tilesPerCta;
  options.l2Prefetch = l2Prefetch;
  blockattn::buildBlockAttnToPtxPipeline(pm, options);
  if (failed(pm.run(*module)))
    return 1;
  double pipelineSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();

  if (auto ec = llvm::sys::fs::create_directories(outputDir)) {
    llvm::errs() << "error: cannot create " << outputDir << ": " << ec.message()
                 << "\n";
    return 1;
  }

  SmallVector<gpu::GPUModuleOp> gpuModules(
      module->getBody()->getOps<gpu::GPUModuleOp>());
  if (gpuModules.empty()) {
    llvm::errs() << "error: the input has no blockattn kernel\n";
    return 1;
  }
  bool ok = true;
  if (!quiet && !noHeader)
    llvm::outs() << llvm::format("%-28s %-8s %-34s %5s %8s %5s %9s %8s\n",
                                 "kernel", "chip", "warps/registers per role",
                                 "regs", "smem", "tmem", "ptx", "compile");
  for (gpu::GPUModuleOp gpuModule : gpuModules) {
    auto kernelStart = std::chrono::steady_clock::now();
    std::string name = gpuModule.getName().str();
    LLVM::LLVMFuncOp func = gpuModule.lookupSymbol<LLVM::LLVMFuncOp>(name);
    auto manifestAttr =
        func ? func->getAttrOfType<DictionaryAttr>("blockattn.manifest")
             : DictionaryAttr();
    if (!manifestAttr) {
      gpuModule.emitError() << "kernel has no blockattn.manifest";
      return 1;
    }
    auto target = cast<gpu::TargetAttrInterface>(gpuModule.getTargetsAttr()[0]);
    gpu::TargetOptions targetOptions(
        /*toolkitPath=*/"", /*librariesToLink=*/{}, /*cmdOptions=*/"",
        /*elfSection=*/"", gpu::CompilationTarget::Assembly);
    std::optional<SmallVector<char, 0>> ptx =
        target.serializeToObject(gpuModule, targetOptions);
    if (!ptx) {
      gpuModule.emitError() << "PTX generation failed";
      return 1;
    }
    // The object is NUL-terminated PTX text.
    StringRef ptxText(ptx->data(), ptx->size());
    ptxText = ptxText.rtrim(StringRef("\0", 1));
    double seconds = pipelineSeconds / gpuModules.size() +
                     std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - kernelStart)
                         .count();

    llvm::SmallString<256> ptxPath(outputDir), jsonPath(outputDir),
        cubinPath(outputDir);
    llvm::sys::path::append(ptxPath, name + ".ptx");
    llvm::sys::path::append(jsonPath, name + ".json");
    llvm::sys::path::append(cubinPath, name + ".cubin");
    if (!writeFile(ptxPath, ptxText))
      return 1;

    llvm::json::Object manifest = *toJson(manifestAttr).getAsObject();
    manifest["ptx"] = name + ".ptx";
    manifest["ptx_bytes"] = static_cast<int64_t>(ptxText.size());
    manifest["compile_seconds"] = seconds;
    std::string registers = "-";
    if (emitCubin) {
      std::string log;
      std::optional<llvm::json::Object> report = runPtxas(
          ptxPath, cubinPath, manifest.getString("chip").value_or(chip), log);
      if (!report) {
        llvm::errs() << "error: ptxas failed for " << name << ":\n" << log;
        ok = false;
        continue;
      }
      if (report->getBoolean("wgmma_serialized").value_or(false))
        llvm::errs() << "warning: ptxas serialized wgmma in " << name << ":\n"
                     << log;
      if (report->getInteger("spill_stores").value_or(0) ||
          report->getInteger("spill_loads").value_or(0))
        llvm::errs() << "warning: " << name << " spills registers:\n" << log;
      registers = std::to_string(report->getInteger("registers").value_or(0));
      manifest["cubin"] = name + ".cubin";
      manifest["ptxas"] = std::move(*report);
    }
    if (!quiet)
      llvm::outs() << llvm::format(
          "%-28s %-8s %-34s %5s %8lld %5lld %8.1fK %7.3fs\n", name.c_str(),
          manifest.getString("chip").value_or("").str().c_str(),
          partitionSummary(manifest).c_str(), registers.c_str(),
          static_cast<long long>(manifest.getInteger("smem_bytes").value_or(0)),
          static_cast<long long>(
              manifest.getInteger("tmem_columns").value_or(0)),
          ptxText.size() / 1024.0, seconds);
    std::string json;
    llvm::raw_string_ostream os(json);
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest)))
       << "\n";
    if (!writeFile(jsonPath, json))
      return 1;
  }
  return ok ? 0 : 1;
}
