//===- block-attn-emulate.cpp - Run a compiled kernel on the CPU ----------===//
//
//   block-attn-emulate KERNEL.ptx --manifest=KERNEL.json --grid=N
//       --tensor=q=q.npy ... --scalar=softmax_scale=0.125 --out-dir=DIR
//
// Emulates every CTA of the grid (docs/emulator.md) and writes every tensor,
// after the run, to DIR/<name>.npy. Exit status 1 with a report on stderr for
// a deadlock, a race the checks see, a bad access or an unknown instruction.
//
//===----------------------------------------------------------------------===//

#include "blockattn/Emulator/Emulator.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>

using namespace llvm;
using namespace blockattn::emu;

static cl::opt<std::string> ptxFile(cl::Positional, cl::desc("<kernel.ptx>"));
static cl::opt<std::string> manifestFile("manifest",
                                         cl::desc("the kernel's manifest"),
                                         cl::value_desc("file"));
static cl::opt<std::string> decodeFile(
    "decode-descriptors",
    cl::desc("decode `label = value` descriptor lines (wgmma, `tcgen05 ...`, "
             "`idesc ...`, `swizzle(r, c)`) with the emulator's decoders and "
             "exit"),
    cl::value_desc("file"));
static cl::list<std::string>
    tensorArgs("tensor", cl::desc("a tensor of the manifest: NAME=FILE.npy"),
               cl::value_desc("name=file"));
static cl::list<std::string>
    scalarArgs("scalar", cl::desc("a scalar of the manifest: NAME=VALUE"),
               cl::value_desc("name=value"));
static cl::opt<unsigned> grid("grid", cl::desc("CTAs in the grid"),
                              cl::init(1));
static cl::opt<uint64_t> seed("seed",
                              cl::desc("seed of the warp order and of the "
                                       "asynchronous completion points"),
                              cl::init(1));
static cl::opt<unsigned>
    sharedBase("shared-base",
               cl::desc("shared-window address of the dynamic shared memory"),
               cl::init(1024));
static cl::opt<unsigned> quantum("quantum",
                                 cl::desc("most instructions a lane runs "
                                          "before the scheduler picks again"),
                                 cl::init(64));
static cl::opt<bool> holdBulkStores(
    "hold-bulk-stores",
    cl::desc("complete bulk (TMA) stores only where their thread waits for "
             "them or the CTA exits, so that a buffer reused too early is "
             "reported"),
    cl::init(false));
static cl::opt<uint64_t> maxInstructions(
    "max-instructions",
    cl::desc("instructions per CTA after which the run is reported as a "
             "livelock"),
    cl::init(400000000));
static cl::opt<std::string> outDir("out-dir",
                                   cl::desc("where to write the tensors"),
                                   cl::value_desc("dir"));
static cl::opt<bool> quiet("quiet", cl::desc("no summary line"));

static int fail(const Twine &msg) {
  WithColor::error(errs(), "block-attn-emulate") << msg << "\n";
  return 1;
}

static const char *typeName(unsigned t) {
  return t == 0 ? "f16" : t == 1 ? "bf16" : "other";
}

// Prints what the emulator reads out of each descriptor; the cutlass-oracle
// test feeds it descriptors CUTLASS built and checks the decoding.
static int decodeDescriptors() {
  auto buf = MemoryBuffer::getFile(decodeFile);
  if (!buf)
    return fail(decodeFile + ": " + buf.getError().message());
  SmallVector<StringRef> lines;
  (*buf)->getBuffer().split(lines, '\n', -1, false);
  for (StringRef line : lines) {
    auto [label, text] = line.split(" = ");
    label = label.trim();
    text = text.trim();
    uint64_t v;
    if (text.getAsInteger(0, v))
      return fail("bad line '" + line + "'");
    if (label.starts_with("swizzle64B(")) {
      // Element (r, c) of a 64-byte-swizzled K-major tile at address 0 (c <
      // 32: one row of the swizzle atom; the next 32 columns are the next
      // chunk).
      unsigned r, c;
      if (sscanf(label.str().c_str(), "swizzle64B(%u, %u)", &r, &c) != 2)
        return fail("bad label '" + label + "'");
      if (c >= 32)
        continue;
      SmemDescriptor d;
      d.sbo = 512;
      d.swizzleBytes = 64;
      uint32_t a = smemElementAddress(d, false, r, c);
      outs() << label << ": emulator " << a << ", CUTLASS " << v
             << (a == v ? "" : " MISMATCH") << "\n";
      continue;
    }
    if (label.starts_with("swizzle(")) {
      // Element (r, c) of a K-major tile at address 0 (c < 64: one row of
      // the swizzle atom; the tile's next 64 columns are the next atom).
      unsigned r, c;
      if (sscanf(label.str().c_str(), "swizzle(%u, %u)", &r, &c) != 2)
        return fail("bad label '" + label + "'");
      if (c >= 64)
        continue;
      SmemDescriptor d;
      d.sbo = 1024;
      d.swizzleBytes = 128;
      uint32_t a = smemElementAddress(d, false, r, c);
      outs() << label << ": emulator " << a << ", CUTLASS " << v
             << (a == v ? "" : " MISMATCH") << "\n";
      continue;
    }
    if (label.starts_with("idesc ")) {
      InstrDescriptor d = decodeInstrDescriptor(uint32_t(v));
      outs() << label << ": M=" << d.m << " N=" << d.n
             << " D=" << (d.dType == 1 ? "f32" : "other")
             << " A=" << typeName(d.aType) << " B=" << typeName(d.bType)
             << " A-major=" << (d.transposeA ? "MN" : "K")
             << " B-major=" << (d.transposeB ? "MN" : "K")
             << " negate=" << d.negateA << d.negateB << " sparse=" << d.sparse
             << "\n";
      continue;
    }
    bool tcgen05 = label.starts_with("tcgen05 ");
    SmemDescriptor d = decodeSmemDescriptor(v, tcgen05);
    outs() << label << ": start=" << format_hex(d.start, 0) << " lbo=" << d.lbo
           << " sbo=" << d.sbo << " base=" << d.baseOffset
           << " swizzle=" << d.swizzleBytes << "B"
           << (d.swizzle32BAtom ? "-atom32B" : "");
    if (tcgen05)
      outs() << " version=" << d.version << " lbo-mode=" << d.lboAbsolute;
    outs() << "\n";
  }
  return 0;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv,
                              "block-attn-emulate: run a compiled block-attn "
                              "kernel on the CPU\n");
  if (!decodeFile.empty())
    return decodeDescriptors();
  if (ptxFile.empty() || manifestFile.empty())
    return fail("a PTX file and --manifest are required");
  auto ptx = MemoryBuffer::getFile(ptxFile);
  if (!ptx)
    return fail(ptxFile + ": " + ptx.getError().message());
  auto kernel = parsePTX((*ptx)->getBuffer());
  if (!kernel)
    return fail(ptxFile + ": " + toString(kernel.takeError()));
  auto mbuf = MemoryBuffer::getFile(manifestFile);
  if (!mbuf)
    return fail(manifestFile + ": " + mbuf.getError().message());
  auto manifest = json::parse((*mbuf)->getBuffer());
  if (!manifest)
    return fail(manifestFile + ": " + toString(manifest.takeError()));
  const json::Object *obj = manifest->getAsObject();
  if (!obj)
    return fail(manifestFile + ": not a JSON object");
  if (auto chip = obj->getString("chip"); chip && *chip != kernel->target)
    return fail("the manifest is for " + *chip + ", the PTX for " +
                kernel->target);
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> descrs;
  for (const std::string &arg : tensorArgs) {
    auto [name, path] = StringRef(arg).split('=');
    if (name.empty() || path.empty())
      return fail("--tensor: expected NAME=FILE.npy, got '" + arg + "'");
    std::string descr;
    auto t = readNpy(path, descr);
    if (!t)
      return fail(toString(t.takeError()));
    t->name = name.str();
    descrs[name.str()] = descr;
    tensors[name.str()] = std::move(*t);
  }
  std::map<std::string, double> scalars;
  for (const std::string &arg : scalarArgs) {
    auto [name, text] = StringRef(arg).split('=');
    double v;
    if (name.empty() || text.getAsDouble(v))
      return fail("--scalar: expected NAME=NUMBER, got '" + arg + "'");
    scalars[name.str()] = v;
  }
  if (grid == 0)
    return fail("--grid: must be at least 1");
  if (quantum == 0)
    return fail("--quantum: must be at least 1");
  Options opt;
  opt.grid = grid;
  opt.seed = seed;
  opt.sharedBase = sharedBase;
  opt.quantum = quantum;
  opt.holdBulkStores = holdBulkStores;
  opt.maxInstructions = maxInstructions;
  Statistics stats;
  if (Error e = emulate(*kernel, *obj, tensors, scalars, opt, stats)) {
    errs() << toString(std::move(e)) << "\n";
    return 1;
  }
  if (!outDir.empty()) {
    if (std::error_code ec = sys::fs::create_directories(outDir))
      return fail(outDir + ": " + ec.message());
    for (auto &[name, t] : tensors) {
      SmallString<256> path(outDir);
      sys::path::append(path, name + ".npy");
      if (Error e = writeNpy(path, t, descrs[name]))
        return fail(toString(std::move(e)));
    }
  }
  if (!quiet) {
    outs() << kernel->name << ": " << stats.ctas << " CTAs, "
           << stats.instructions << " instructions, " << stats.tmaLoads
           << " TMA loads, " << stats.tmaStores << " TMA stores, " << stats.mmas
           << " MMAs; registers per warpgroup at exit:";
    for (unsigned r : stats.finalRegisters)
      outs() << " " << r;
    outs() << "\n";
  }
  return 0;
}
