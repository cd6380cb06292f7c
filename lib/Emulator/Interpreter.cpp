//===- Interpreter.cpp - Executing the PTX block-attn emits ---------------===//
//
// Semantics are taken from the PTX ISA (version 8.7, the sections are named at
// each instruction family) and decoded here independently of the compiler's
// own encoders (lib/Conversion/WarpSpecToNVVM/Descriptors.cpp is not used).
//
// Execution model. Every lane is a thread with its own program counter (the
// independent thread scheduling of sm_70 and later, PTX ISA "Thread
// Execution"). Instructions with `.sync.aligned` semantics, `bar.sync`,
// `shfl.sync` and the warpgroup instructions are rendezvous points: each
// participating thread stops there, and the instruction executes once for the
// whole warp or warpgroup when all of its live threads have arrived at the
// same instruction (arriving at a different one is reported as divergence).
// A seeded random generator picks which warp runs next and for how long, and
// when each asynchronous operation (TMA copy, wgmma, tcgen05.mma) completes:
// anywhere between its issue and the wait that forces it.
//
//===----------------------------------------------------------------------===//

#include "blockattn/Emulator/Emulator.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <random>

using namespace blockattn::emu;
using llvm::StringRef;

namespace {

//===----------------------------------------------------------------------===//
// Number formats
//===----------------------------------------------------------------------===//

float bitsToFloat(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
uint32_t floatToBits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
float bf16ToFloat(uint16_t h) { return bitsToFloat(uint32_t(h) << 16); }
// Exact, by bits (every half is a float): the MMA operands convert millions
// of them a kernel, and std::ldexp is a libm call.
float f16ToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h >> 15) << 31, exp = (h >> 10) & 0x1f,
           man = h & 0x3ff;
  // Zero or subnormal (man units of 2^-24), or not finite.
  if (exp == 0 || exp == 31) {
    float v = exp ? (man ? NAN : INFINITY) : float(man) * 0x1p-24f;
    return sign ? -v : v;
  }
  return bitsToFloat(sign | ((exp + 127 - 15) << 23) | (man << 13));
}
// PTX ISA "cvt": .rn rounds to nearest even; a NaN input gives a canonical
// NaN.
uint16_t floatToBf16(float f) {
  uint32_t u = floatToBits(f);
  if (std::isnan(f))
    return 0x7fff;
  u += 0x7fff + ((u >> 16) & 1);
  return uint16_t(u >> 16);
}
uint16_t floatToF16(float f) {
  uint32_t u = floatToBits(f);
  uint32_t sign = (u >> 16) & 0x8000;
  if (std::isnan(f))
    return 0x7fff;
  float a = std::fabs(f);
  if (a >= 65520.0f) // rounds to infinity
    return uint16_t(sign | 0x7c00);
  if (a < 0x1p-14f) {
    // Subnormal: units of 2^-24, round to nearest even.
    float scaled = a * 0x1p24f;
    float r = std::nearbyint(scaled); // default rounding: nearest even
    return uint16_t(sign | uint32_t(r));
  }
  uint32_t au = floatToBits(a);
  uint32_t exp = ((au >> 23) & 0xff) - 127 + 15;
  uint32_t man = au & 0x7fffff;
  uint32_t half = (exp << 10) | (man >> 13);
  uint32_t rest = man & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half;
  return uint16_t(sign | half);
}

//===----------------------------------------------------------------------===//
// Decoded opcodes
//===----------------------------------------------------------------------===//

enum Op : uint16_t {
  OpUnknown,
  OpAdd,
  OpSub,
  OpMulLo,
  OpMulHi,
  OpMulWide,
  OpMad,
  OpDiv,
  OpAnd,
  OpOr,
  OpXor,
  OpNot,
  OpNeg,
  OpShl,
  OpShr,
  OpMin,
  OpMax,
  OpMinRelu,
  OpBfe,
  OpFAdd,
  OpFSub,
  OpFMul,
  OpFFma,
  OpFMax,
  OpFMin,
  OpFNeg,
  OpEx2,
  OpLg2,
  OpSin,
  OpCos,
  OpRcp,
  OpFMul2,
  OpFFma2,
  OpFAdd2,
  OpFSub2,
  OpSelp,
  OpSetp,
  OpMov,
  OpCvtInt,
  OpCvtF32From16,
  OpCvtPack16,
  OpCvt16FromF32,
  OpCvtF32FromInt,
  OpCvtRni,
  OpCvtaParam,
  OpCvtaShared,
  OpCvtaToShared,
  OpLd,
  OpSt,
  OpAtomAdd,
  OpBra,
  OpRet,
  OpBarSync,
  OpShflBfly,
  OpStmatrix,
  OpMbarInit,
  OpMbarArrive,
  OpMbarExpectTx,
  OpMbarTryWait,
  OpFenceNop,
  OpFenceProxyAsync,
  OpTmaLoad,
  OpTmaStore,
  OpTmaPrefetch,
  OpCpAsync,
  OpCpAsyncArrive,
  OpBulkCommit,
  OpBulkWait,
  OpWgmmaFence,
  OpWgmmaCommit,
  OpWgmmaWait,
  OpWgmmaMma,
  OpSetmaxnreg,
  OpTcAlloc,
  OpTcDealloc,
  OpTcRelinquish,
  OpTcFence,
  OpTcMma,
  OpTcCommit,
  OpTcLd,
  OpTcSt,
  OpTcWaitLd,
  OpTcWaitSt,
};

enum Ty : uint8_t { TyB, TyU, TyS, TyF, TyPred };

struct TypeInfo {
  Ty ty = TyB;
  unsigned bits = 32;
};

bool parseType(StringRef s, TypeInfo &t) {
  if (s == "pred") {
    t = {TyPred, 1};
    return true;
  }
  if (s.size() < 2)
    return false;
  Ty ty;
  switch (s[0]) {
  case 'b':
    ty = TyB;
    break;
  case 'u':
    ty = TyU;
    break;
  case 's':
    ty = TyS;
    break;
  case 'f':
    ty = TyF;
    break;
  default:
    return false;
  }
  unsigned bits;
  if (s.drop_front().getAsInteger(10, bits))
    return false;
  if (bits != 8 && bits != 16 && bits != 32 && bits != 64)
    return false;
  t = {ty, bits};
  return true;
}

uint64_t mask(unsigned bits) {
  return bits >= 64 ? ~0ull : ((1ull << bits) - 1);
}
int64_t sext(uint64_t v, unsigned bits) {
  if (bits >= 64)
    return int64_t(v);
  uint64_t m = 1ull << (bits - 1);
  v &= mask(bits);
  return int64_t((v ^ m) - m);
}

//===----------------------------------------------------------------------===//
// Machine state
//===----------------------------------------------------------------------===//

constexpr uint64_t kParamSpace = 0x1000;            // param state space
constexpr uint64_t kParamGeneric = 0x7f0000000000;  // generic window of params
constexpr uint64_t kSharedGeneric = 0x7e0000000000; // generic window of smem
constexpr uint64_t kGlobalBase = 0x100000000000;    // first tensor
constexpr uint64_t kGlobalStride = 0x10000000000;   // between tensors

enum class State : uint8_t { Run, Blocked, Exited };
enum class Wait : uint8_t {
  None,
  Collective,
  MBarrier,
  NamedBarrier,
  Registers
};

struct Thread {
  unsigned tid = 0;
  unsigned pc = 0;
  State state = State::Run;
  Wait wait = Wait::None;
  uint32_t waitAddr = 0;                        // mbarrier
  uint32_t waitParity = 0;                      // mbarrier
  unsigned barrier = 0;                         // named barrier
  std::vector<unsigned> bulkOpen;               // issued, not committed
  std::deque<std::vector<unsigned>> bulkGroups; // committed bulk async-groups
  std::vector<std::pair<uint32_t, uint32_t>> genericSmemWrites;
  std::vector<unsigned> tcPending;      // tcgen05 async ops not yet committed
  std::vector<unsigned> cpAsyncPending; // cp.async copies not yet tracked
};

struct MBarrier {
  uint32_t expected = 0, pending = 0;
  int64_t tx = 0;
  uint32_t phase = 0; // completed phases
};

struct NamedBarrier {
  unsigned arrived = 0;
  unsigned expected = 0; // 0: all live threads of the CTA
  std::vector<unsigned> warps;
};

struct TensorMap {
  int tensor = -1; // index into the global buffers
  unsigned rank = 0;
  int64_t dims[5] = {0};    // innermost first, elements
  int64_t strides[5] = {0}; // bytes, strides[0] = element size
  unsigned box[5] = {0};
  unsigned esize = 0;
  unsigned swizzleBytes = 0; // 32, 64 or 128
  std::string name;
};

struct Buffer {
  std::string name;
  uint64_t base = 0;
  std::vector<uint8_t> *data = nullptr;
};

enum class AsyncKind : uint8_t {
  TmaLoad,
  TmaStore,
  Wgmma,
  TcMma,
  TcCommit,
  CpAsync,
  CpAsyncArrive
};

struct AsyncOp {
  AsyncKind kind;
  bool done = false;
  unsigned issuer = 0; // thread (TMA) or warpgroup (wgmma)
  unsigned line = 0;
  // TMA
  int tmap = -1;
  int32_t coords[5] = {0};
  uint32_t smem = 0, mbar = 0;
  // wgmma
  const Instruction *inst = nullptr;
  uint64_t descA = 0, descB = 0;
  std::vector<uint8_t> scaleD; // per thread of the warpgroup
  // Shared bytes the operation reads: [lo, hi) and [lo2, hi2) (operands B and
  // A of an MMA).
  uint32_t lo = 0, hi = 0, lo2 = 0, hi2 = 0;
  // tcgen05.mma
  uint32_t tmemD = 0, idesc = 0, tmemA = 0;
  bool aFromTmem = false, accumulate = false;
  unsigned m = 0, n = 0;      // tcgen05.mma shape
  std::vector<unsigned> deps; // tcgen05.commit, cp.async.mbarrier.arrive:
                              // the operations it tracks
  // cp.async: the bytes read from global memory at issue (the sources of
  // these kernels are read-only), written to smem at completion.
  uint8_t bytes[16] = {0};
  unsigned size = 0;
};

// The box's rows (every dimension but the innermost, dimension 1 fastest),
// in the order they land in shared memory.
static uint64_t boxRows(const TensorMap &m) {
  uint64_t n = 1;
  for (unsigned d = 1; d < m.rank; ++d)
    n *= m.box[d];
  return n;
}

// Shared-memory bytes from one box row to the next. Rows land densely when
// their inner extent fills the swizzle span; a narrower row of a swizzled
// box takes the whole span, its data in the first bytes before the address
// swizzle and the rest of the span left as it was (measured on an H100,
// 2026-12-05: a box of 64-byte rows under the 128-byte swizzle lands one
// row a 128-byte line, bench/tma_box_probe.cu; docs/head-dims.md, "The
// pair-halves layout on hardware"). The transaction count is the data's bytes.
static uint32_t boxRowPitch(const TensorMap &m) {
  return std::max<uint32_t>(m.box[0] * m.esize, m.swizzleBytes);
}

// Shared-memory bytes a box spans from its destination.
static uint32_t boxSpan(const TensorMap &m) {
  uint32_t rowBytes = m.box[0] * m.esize;
  return boxRowPitch(m) * uint32_t(boxRows(m) - 1) + rowBytes;
}

// Row `outer` of the box: whether it lies inside the tensor, and in
// `offset` its byte offset in the tensor without the innermost
// coordinate's.
static bool boxRow(const TensorMap &m, const AsyncOp &op, uint64_t outer,
                   int64_t &offset) {
  bool in = true;
  offset = 0;
  for (unsigned d = 1; d < m.rank; ++d) {
    int64_t c = int64_t(op.coords[d]) + int64_t(outer % m.box[d]);
    outer /= m.box[d];
    in = in && c >= 0 && c < m.dims[d];
    offset += c * m.strides[d];
  }
  return in;
}

struct Warpgroup {
  unsigned registers = 0;
  std::deque<unsigned> wgmma;     // issued, not completed, in order
  std::deque<unsigned> unretired; // issued, not yet covered by a wait
  std::deque<int> groups;         // committed groups not waited for (last ids)
  int lastCommitted = -1;
  bool waitingRegs = false;
  unsigned regRequest = 0;
};

class Emulator;

struct Failure {
  std::string text;
};

class Emulator {
public:
  Emulator(Kernel &k, const llvm::json::Object &m,
           std::map<std::string, Tensor> &tensors,
           const std::map<std::string, double> &scalars, const Options &o,
           Statistics &stats)
      : k(k), manifest(m), tensors(tensors), scalars(scalars), opt(o),
        stats(stats), rng(o.seed) {}

  llvm::Error run();

private:
  // Setup.
  llvm::Error decodeAll();
  llvm::Error decode(Instruction &inst);
  llvm::Error buildParams();

  // Execution.
  llvm::Error runCta(unsigned cta);
  llvm::Error step(Thread &t, unsigned budget);
  llvm::Error arriveCollective(Thread &t, const Instruction &inst);
  llvm::Error fireCollective(const Instruction &inst, unsigned first,
                             unsigned count);
  llvm::Error completeOne(unsigned id);
  llvm::Error completeSome();
  /// Queues an issued asynchronous operation; returns its id.
  unsigned issueAsync(AsyncOp op);
  /// A new asynchronous operation of `kind` that thread `t` issues at `in`.
  static AsyncOp asyncOp(AsyncKind kind, const Thread &t,
                         const Instruction &in);
  llvm::Error deadlock(const char *title);

  // Memory.
  llvm::Error sharedCheck(uint64_t addr, unsigned size, const Thread *t,
                          const Instruction *inst, bool read);
  llvm::Error globalAccess(uint64_t addr, unsigned size, bool write,
                           uint8_t *bytes, const Thread &t,
                           const Instruction &inst);
  void markGenericWrite(Thread &t, uint32_t a, uint32_t n);
  llvm::Error asyncSharedRead(uint32_t a, unsigned n, const char *what,
                              unsigned line);
  llvm::Error writeConflict(uint32_t lo, uint32_t hi, const char *writer,
                            unsigned line);
  llvm::Error pendingCopyOverlap(uint32_t lo, uint32_t hi, const Thread *t,
                                 const Instruction *inst);

  // Synchronization.
  llvm::Error mbarArrive(uint32_t addr, unsigned line, uint32_t count = 1);
  llvm::Error mbarCompleteTx(uint32_t addr, uint32_t bytes, unsigned line);
  void mbarMaybeComplete(uint32_t addr, MBarrier &b);
  MBarrier *mbar(uint32_t addr);

  // Asynchronous operations.
  llvm::Error doTmaLoad(AsyncOp &op);
  llvm::Error doTmaStore(AsyncOp &op);
  llvm::Error doWgmma(AsyncOp &op);
  void lockWgmmaRegisters(const AsyncOp &op, int delta);
  llvm::Error checkLocked(Thread &t, const Instruction &inst);
  llvm::Error doTcMma(AsyncOp &op);
  llvm::Error tcFire(const Instruction &inst, unsigned first);
  llvm::Error tcIssueMma(Thread &t, const Instruction &inst);
  llvm::Error tmemCheck(unsigned lane, unsigned col, unsigned cols,
                        const Thread *t, const Instruction *inst);
  llvm::Error tmemPendingMma(unsigned laneLo, unsigned laneHi, unsigned colLo,
                             unsigned colHi, bool write, const Thread *t,
                             const Instruction *inst);
  llvm::Error readSmemMatrix(uint64_t desc, bool mnMajor, unsigned rows,
                             unsigned cols, bool bf16, std::vector<float> &out,
                             unsigned line, bool tcgen05);
  int tensorMapAt(uint64_t generic) const;

  // Reports.
  llvm::Error fail(const Thread *t, const Instruction *inst,
                   const llvm::Twine &msg) const;
  std::string where(const Thread &t) const;

  /// Where thread `tid`'s register `slot` is in `regs` and `locked`: a
  /// warp's 32 copies of a register are adjacent. The 32 threads of a warp
  /// run the same instructions one after another, so the next thread finds
  /// the cache lines the first one loaded; a row per thread (tens of
  /// thousands of registers in a large kernel, megabytes a warpgroup) missed
  /// the caches on most register reads. (A CTA's threads are a multiple of
  /// 128: buildParams refuses other manifests.)
  size_t regIndex(unsigned tid, int slot) const {
    return (size_t(tid / 32) * nregs + size_t(slot)) * 32 + tid % 32;
  }
  LLVM_ATTRIBUTE_ALWAYS_INLINE uint64_t &reg(Thread &t, int slot) {
    if (slot < 0) // the sink `_`, or an immediate where a register belongs
      return sink;
    return regs[regIndex(t.tid, slot)];
  }
  uint64_t sink = 0;
  /// An operand's value; registers, most operands, without the call.
  LLVM_ATTRIBUTE_ALWAYS_INLINE uint64_t value(Thread &t, const Operand &o) {
    return o.kind == Operand::Reg ? reg(t, o.reg) : otherValue(t, o);
  }
  uint64_t otherValue(Thread &t, const Operand &o);
  void setReg(Thread &t, const Operand &o, uint64_t v, unsigned bits) {
    reg(t, o.reg) = v & mask(bits);
  }
  uint64_t addressOf(Thread &t, const Operand &o) {
    if (o.reg >= 0)
      return reg(t, o.reg) + uint64_t(o.imm);
    if (o.sym >= 0)
      return symbolAddress(o.sym) + uint64_t(o.imm);
    return uint64_t(o.imm);
  }
  uint64_t symbolAddress(int sym) const {
    if (sym == sharedSymbolIndex(k))
      return opt.sharedBase;
    return kParamSpace + k.params[sym].offset;
  }
  unsigned warpgroupOf(unsigned tid) const { return tid / 128; }

  Kernel &k;
  const llvm::json::Object &manifest;
  std::map<std::string, Tensor> &tensors;
  const std::map<std::string, double> &scalars;
  Options opt;
  Statistics &stats;
  std::mt19937_64 rng;

  // Launch.
  unsigned threads = 0, smemBytes = 0, launchRegisters = 0, tmemColumns = 0;
  std::vector<uint8_t> params;
  std::vector<TensorMap> tmaps;
  std::vector<int> tmapOfParam;
  std::vector<Buffer> buffers;

  // CTA state.
  unsigned cta = 0;
  size_t nregs = 0;
  std::vector<uint64_t> regs;
  // Per thread and register: how many in-flight wgmma operations use it (as
  // accumulator or A fragment).
  std::vector<uint8_t> locked;
  std::vector<Thread> thr;
  std::vector<uint8_t> smem, smemInit, smemDirty;
  std::map<uint32_t, MBarrier> mbars;
  std::map<unsigned, NamedBarrier> namedBarriers;
  std::vector<unsigned> arrivedWarp, arrivedGroup, liveInWarp, liveInGroup;
  std::vector<AsyncOp> ops;
  std::vector<unsigned> pendingOps;
  std::vector<Warpgroup> wgs;
  // Tensor memory (tcgen05): 128 lanes x columns of 32 bits.
  std::vector<uint32_t> tmem;
  std::vector<uint8_t> tmemInit;
  std::vector<std::pair<unsigned, unsigned>> tmemAllocs; // column, count
  bool relinquished = false;
};

//===----------------------------------------------------------------------===//
// Reports
//===----------------------------------------------------------------------===//

std::string Emulator::where(const Thread &t) const {
  unsigned pc = std::min<unsigned>(t.pc, k.code.size() - 1);
  const Instruction &i = k.code[pc];
  return llvm::formatv("line {0}: {1}", i.line,
                       i.line - 1 < k.lines.size() ? k.lines[i.line - 1]
                                                   : i.opcode)
      .str();
}

llvm::Error Emulator::fail(const Thread *t, const Instruction *inst,
                           const llvm::Twine &msg) const {
  std::string s = llvm::formatv("block-attn-emulate: CTA {0}", cta).str();
  if (t)
    s += llvm::formatv(", thread {0} (warp {1}, lane {2})", t->tid, t->tid / 32,
                       t->tid % 32)
             .str();
  if (inst)
    s += llvm::formatv(", line {0}: {1}", inst->line,
                       inst->line - 1 < k.lines.size() ? k.lines[inst->line - 1]
                                                       : inst->opcode)
             .str();
  s += "\n  " + msg.str();
  return llvm::createStringError(s);
}

//===----------------------------------------------------------------------===//
// Decoding
//===----------------------------------------------------------------------===//

llvm::Error Emulator::decodeAll() {
  for (Instruction &inst : k.code)
    if (auto e = decode(inst))
      return e;
  return llvm::Error::success();
}

llvm::Error Emulator::decode(Instruction &inst) {
  const auto &p = inst.parts;
  StringRef base = p[0];
  StringRef op = inst.opcode;
  TypeInfo ty;
  auto unknown = [&]() {
    return llvm::createStringError(
        llvm::formatv("block-attn-emulate: line {0}: unknown instruction "
                      "'{1}' (the emulator covers only the PTX block-attn "
                      "emits; see docs/emulator.md)",
                      inst.line, inst.opcode)
            .str());
  };
  auto lastType = [&]() { return parseType(p.back(), ty); };
  auto set = [&](Op o) {
    inst.op = o;
    inst.type = uint8_t(ty.ty);
    inst.aux = uint8_t(ty.bits);
    return llvm::Error::success();
  };
  // Integer and bit arithmetic (PTX ISA 9.7.1 "Integer Arithmetic
  // Instructions", 9.7.8 "Logic and Shift Instructions").
  if (base == "add" || base == "sub") {
    if (op == "add.rn.f32x2" || op == "sub.rn.f32x2") {
      ty = {TyF, 64};
      return set(base == "add" ? OpFAdd2 : OpFSub2);
    }
    if (!lastType())
      return unknown();
    if (ty.ty == TyF) {
      if (p.size() == 3 && p[1] != "rn")
        return unknown();
      return set(base == "add" ? OpFAdd : OpFSub);
    }
    if (p.size() == 3 && p[1] == "rn" && p[2] == "f32x2") {
      ty = {TyF, 64};
      return set(base == "add" ? OpFAdd2 : OpFSub2);
    }
    return set(base == "add" ? OpAdd : OpSub);
  }
  if (base == "mul") {
    if (op == "mul.rn.f32x2") {
      ty = {TyF, 64};
      return set(OpFMul2);
    }
    if (!lastType())
      return unknown();
    if (ty.ty == TyF)
      return set(OpFMul);
    if (p.size() != 3)
      return unknown();
    if (p[1] == "lo")
      return set(OpMulLo);
    if (p[1] == "hi")
      return set(OpMulHi);
    if (p[1] == "wide")
      return set(OpMulWide);
    return unknown();
  }
  if (base == "mad" && p.size() == 3 && p[1] == "lo" && lastType())
    return set(OpMad);
  if (base == "fma") {
    if (op == "fma.rn.f32x2") {
      ty = {TyF, 64};
      return set(OpFFma2);
    }
    if (op == "fma.rn.f32") {
      ty = {TyF, 32};
      return set(OpFFma);
    }
    return unknown();
  }
  if (base == "div" && p.size() == 2 && lastType() && ty.ty != TyF)
    return set(OpDiv);
  if ((base == "and" || base == "or" || base == "xor" || base == "not") &&
      p.size() == 2 && lastType())
    return set(base == "and"   ? OpAnd
               : base == "or"  ? OpOr
               : base == "xor" ? OpXor
                               : OpNot);
  // neg.s32 / neg.s64: LLVM's form of 0 - x (the grouped-query backward's
  // ring arithmetic, docs/pipeline.md).
  if (base == "neg" && p.size() == 2 && lastType() && ty.ty == TyS)
    return set(OpNeg);
  if ((base == "shl" || base == "shr") && p.size() == 2 && lastType())
    return set(base == "shl" ? OpShl : OpShr);
  if (base == "min" || base == "max") {
    if (op == "min.relu.s32") {
      ty = {TyS, 32};
      return set(OpMinRelu);
    }
    if (p.size() != 2 || !lastType())
      return unknown();
    if (ty.ty == TyF)
      return set(base == "min" ? OpFMin : OpFMax);
    return set(base == "min" ? OpMin : OpMax);
  }
  if (base == "bfe" && p.size() == 2 && lastType())
    return set(OpBfe);
  // Floating point (9.7.3 "Floating-Point Instructions").
  if (op == "neg.f32") {
    ty = {TyF, 32};
    return set(OpFNeg);
  }
  if (op == "ex2.approx.f32" || op == "ex2.approx.ftz.f32") {
    ty = {TyF, 32};
    inst.aux2 = op.contains("ftz");
    inst.op = OpEx2;
    inst.aux = 32;
    return llvm::Error::success();
  }
  if (op == "lg2.approx.f32" || op == "lg2.approx.ftz.f32") {
    ty = {TyF, 32};
    inst.aux2 = op.contains("ftz");
    inst.op = OpLg2;
    inst.aux = 32;
    return llvm::Error::success();
  }
  // sin/cos (9.7.3.18, 9.7.3.19): the in-kernel rotary angles (rotary_theta),
  // reduced into [-pi, pi] by the kernel.
  if (op == "sin.approx.f32" || op == "sin.approx.ftz.f32" ||
      op == "cos.approx.f32" || op == "cos.approx.ftz.f32") {
    ty = {TyF, 32};
    inst.aux2 = op.contains("ftz");
    inst.op = base == "sin" ? OpSin : OpCos;
    inst.aux = 32;
    return llvm::Error::success();
  }
  if (op == "rcp.rn.f32") {
    ty = {TyF, 32};
    return set(OpRcp);
  }
  // Comparison and selection (9.7.5).
  if (base == "selp" && p.size() == 2 && lastType())
    return set(OpSelp);
  if (base == "setp" && p.size() == 3 && lastType()) {
    static const char *cmps[] = {"eq", "ne", "lt", "le", "gt", "ge"};
    for (unsigned i = 0; i < 6; ++i)
      if (p[1] == cmps[i]) {
        inst.aux2 = int32_t(i);
        inst.op = OpSetp;
        inst.type = uint8_t(ty.ty);
        inst.aux = uint8_t(ty.bits);
        return llvm::Error::success();
      }
    return unknown();
  }
  // Data movement (9.7.9).
  if (base == "mov" && p.size() == 2 && lastType())
    return set(OpMov);
  if (base == "cvt") {
    if (op == "cvt.u64.u32" || op == "cvt.u32.u64" || op == "cvt.s64.s32" ||
        op == "cvt.u32.u16" || op == "cvt.u16.u32") {
      TypeInfo src;
      parseType(p[1], ty);
      parseType(p[2], src);
      inst.aux2 = int32_t(src.bits) | (src.ty == TyS ? 0x100 : 0);
      return set(OpCvtInt);
    }
    if (op == "cvt.f32.bf16" || op == "cvt.f32.f16") {
      inst.aux2 = p[2] == "bf16";
      ty = {TyF, 32};
      return set(OpCvtF32From16);
    }
    if (op == "cvt.rn.bf16x2.f32" || op == "cvt.rn.f16x2.f32") {
      inst.aux2 = p[2] == "bf16x2";
      ty = {TyB, 32};
      return set(OpCvtPack16);
    }
    // An integer to f32, rounded to nearest even (the rotary position).
    if (op == "cvt.rn.f32.u32" || op == "cvt.rn.f32.s32") {
      inst.aux2 = p[3] == "s32";
      ty = {TyF, 32};
      return set(OpCvtF32FromInt);
    }
    // f32 rounded to the nearest even integer, in f32 (the turns of 2 pi
    // taken out of a rotary angle).
    if (op == "cvt.rni.f32.f32") {
      ty = {TyF, 32};
      return set(OpCvtRni);
    }
    // One element (LLVM emits it when both halves of a pair are one value,
    // then packs it with mov.b32 {%rs, %rs}).
    if (op == "cvt.rn.bf16.f32" || op == "cvt.rn.f16.f32") {
      inst.aux2 = p[2] == "bf16";
      ty = {TyB, 16};
      return set(OpCvt16FromF32);
    }
    return unknown();
  }
  if (op == "cvta.param.u64")
    return set(OpCvtaParam);
  if (op == "cvta.shared.u64")
    return set(OpCvtaShared);
  if (op == "cvta.to.shared::cluster.u64" || op == "cvta.to.shared.u64")
    return set(OpCvtaToShared);
  if ((base == "ld" || base == "st") && p.size() >= 3) {
    // ld.space[.vN].type; space in {param, global, shared}.
    StringRef space = p[1];
    unsigned vec = 1;
    size_t ti = 2;
    if (p[2] == "v2" || p[2] == "v4") {
      vec = p[2] == "v2" ? 2 : 4;
      ti = 3;
    }
    if (ti + 1 != p.size() || !parseType(p[ti], ty))
      return unknown();
    int spaceId = space == "param"    ? 0
                  : space == "global" ? 1
                  : space == "shared" ? 2
                                      : -1;
    if (spaceId < 0 || (base == "st" && spaceId == 0))
      return unknown();
    inst.aux2 = spaceId | (vec << 4);
    return set(base == "ld" ? OpLd : OpSt);
  }
  if (op == "bra" || op == "bra.uni")
    return set(OpBra);
  if (op == "ret" || op == "exit")
    return set(OpRet);
  // Parallel synchronization (9.7.13).
  if (op == "bar.sync" || op == "barrier.sync.aligned")
    return set(OpBarSync);
  if (op == "shfl.sync.bfly.b32")
    return set(OpShflBfly);
  // stmatrix.sync.aligned.m8n8.xN.shared.b16 (no .trans): N matrices.
  if (base == "stmatrix" && p.size() == 7 && p[1] == "sync" &&
      p[2] == "aligned" && p[3] == "m8n8" &&
      (p[5] == "shared" || p[5] == "shared::cta") && p[6] == "b16") {
    int n = p[4] == "x1" ? 1 : p[4] == "x2" ? 2 : p[4] == "x4" ? 4 : 0;
    if (!n)
      return unknown();
    inst.aux2 = n;
    return set(OpStmatrix);
  }
  if (op == "mbarrier.init.shared.b64" || op == "mbarrier.init.shared::cta.b64")
    return set(OpMbarInit);
  if (op == "mbarrier.arrive.shared.b64" ||
      op == "mbarrier.arrive.shared::cta.b64")
    return set(OpMbarArrive);
  if (op == "mbarrier.expect_tx.relaxed.cta.shared.b64" ||
      op == "mbarrier.expect_tx.shared.b64")
    return set(OpMbarExpectTx);
  if (op == "mbarrier.try_wait.parity.shared.b64" ||
      op == "mbarrier.try_wait.parity.shared::cta.b64")
    return set(OpMbarTryWait);
  // The emulator runs one instruction at a time, in one order that every
  // thread sees: the memory fences of a dynamic tile schedule (release
  // before its count of finished CTAs, acquire after) order nothing more.
  if (op == "fence.mbarrier_init.release.cluster" ||
      op == "fence.release.gpu" || op == "fence.acquire.gpu")
    return set(OpFenceNop);
  // atom.global.add.u32 d, [a], b: a dynamic tile schedule's claims and
  // count (9.7.13.5); relaxed, at the GPU scope.
  if (op == "atom.global.add.u32" || op == "atom.relaxed.gpu.global.add.u32") {
    ty = {TyU, 32};
    return set(OpAtomAdd);
  }
  if (op == "fence.proxy.async.shared::cta" || op == "fence.proxy.async")
    return set(OpFenceProxyAsync);
  // Bulk tensor copies (9.7.9.25 "Data Movement and Conversion Instructions:
  // cp.async.bulk.tensor").
  if (op == "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::"
            "complete_tx::bytes" ||
      op == "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::"
            "complete_tx::bytes")
    return set(OpTmaLoad);
  if (op == "cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group")
    return set(OpTmaStore);
  if (op == "cp.async.bulk.prefetch.tensor.3d.L2.global.tile")
    return set(OpTmaPrefetch);
  // Non-bulk asynchronous copies (9.7.9.25.3 "cp.async") and their
  // mbarrier tracking (9.7.9.25.3.3 "cp.async.mbarrier.arrive").
  if (op == "cp.async.ca.shared.global" || op == "cp.async.cg.shared.global")
    return set(OpCpAsync);
  if (op == "cp.async.mbarrier.arrive.shared.b64" ||
      op == "cp.async.mbarrier.arrive.noinc.shared.b64") {
    inst.aux2 = op.contains(".noinc");
    return set(OpCpAsyncArrive);
  }
  if (op == "cp.async.bulk.commit_group")
    return set(OpBulkCommit);
  if (op == "cp.async.bulk.wait_group" || op == "cp.async.bulk.wait_group.read")
    return set(OpBulkWait);
  // Warpgroup MMA (9.7.15 "Asynchronous Warpgroup Level Matrix Multiply-
  // Accumulate Instructions").
  if (op == "wgmma.fence.sync.aligned")
    return set(OpWgmmaFence);
  if (op == "wgmma.commit_group.sync.aligned")
    return set(OpWgmmaCommit);
  if (op == "wgmma.wait_group.sync.aligned")
    return set(OpWgmmaWait);
  if (base == "wgmma" && p.size() == 8 && p[1] == "mma_async" &&
      p[2] == "sync" && p[3] == "aligned" && p[5] == "f32" && p[6] == p[7] &&
      (p[6] == "bf16" || p[6] == "f16")) {
    // m64nNk16
    StringRef shape = p[4];
    unsigned n;
    if (!shape.consume_front("m64n") || !shape.consume_back("k16") ||
        shape.getAsInteger(10, n) || n % 8 || n < 8 || n > 256)
      return unknown();
    inst.aux2 = int32_t(n) | (p[6] == "bf16" ? 0x1000 : 0);
    return set(OpWgmmaMma);
  }
  // setmaxnreg (9.7.17.1 "Miscellaneous Instructions: setmaxnreg").
  if (op == "setmaxnreg.inc.sync.aligned.u32" ||
      op == "setmaxnreg.dec.sync.aligned.u32") {
    inst.aux2 = p[1] == "inc";
    return set(OpSetmaxnreg);
  }
  // tcgen05 (9.7.16 "TensorCore 5th Generation Family Instructions").
  if (op == "tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32")
    return set(OpTcAlloc);
  if (op == "tcgen05.dealloc.cta_group::1.sync.aligned.b32")
    return set(OpTcDealloc);
  if (op == "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned")
    return set(OpTcRelinquish);
  if (op == "tcgen05.fence::before_thread_sync" ||
      op == "tcgen05.fence::after_thread_sync")
    return set(OpTcFence);
  if (op == "tcgen05.mma.cta_group::1.kind::f16" ||
      op == "tcgen05.mma.cta_group::1.kind::f16.collector::a::discard")
    return set(OpTcMma);
  if (op == "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::"
            "cluster.b64" ||
      op == "tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64")
    return set(OpTcCommit);
  if (base == "tcgen05" && p.size() == 6 && (p[1] == "ld" || p[1] == "st") &&
      p[2] == "sync" && p[3] == "aligned" && p.back() == "b32") {
    // tcgen05.ld.sync.aligned.16x256b.x8.b32: shape and repeat count.
    return unknown();
  }
  if (base == "tcgen05" && p.size() == 7 && (p[1] == "ld" || p[1] == "st") &&
      p[2] == "sync" && p[3] == "aligned" && p[6] == "b32") {
    StringRef shape = p[4], rep = p[5];
    unsigned nrep;
    if (!rep.consume_front("x") || rep.getAsInteger(10, nrep))
      return unknown();
    int s = shape == "16x256b"   ? 1
            : shape == "16x128b" ? 2
            : shape == "32x32b"  ? 3
                                 : 0;
    if (!s)
      return unknown();
    inst.aux2 = s | int32_t(nrep << 4);
    return set(p[1] == "ld" ? OpTcLd : OpTcSt);
  }
  if (op == "tcgen05.wait::ld.sync.aligned")
    return set(OpTcWaitLd);
  if (op == "tcgen05.wait::st.sync.aligned")
    return set(OpTcWaitSt);
  return unknown();
}

//===----------------------------------------------------------------------===//
// Parameters and tensor maps (from the manifest, as python/blockattn/_driver.py
// builds them for cuLaunchKernel)
//===----------------------------------------------------------------------===//

llvm::Error Emulator::buildParams() {
  auto err = [](const llvm::Twine &m) -> llvm::Error {
    return llvm::createStringError("block-attn-emulate: manifest: " + m);
  };
  threads = unsigned(manifest.getInteger("threads").value_or(0));
  smemBytes = unsigned(manifest.getInteger("smem_bytes").value_or(0));
  launchRegisters = unsigned(manifest.getInteger("max_registers").value_or(0));
  tmemColumns = unsigned(manifest.getInteger("tmem_columns").value_or(0));
  if (!threads || threads % 128)
    return err("'threads' must be a positive multiple of 128");
  if (k.reqntid && k.reqntid != threads)
    return err(llvm::formatv("'threads' is {0} but the PTX has .reqntid {1}",
                             threads, k.reqntid));
  const llvm::json::Array *ps = manifest.getArray("params");
  if (!ps)
    return err("no 'params'");
  if (ps->size() != k.params.size())
    return err(llvm::formatv("{0} params, the PTX entry has {1}", ps->size(),
                             k.params.size()));
  // Global buffers, one per tensor.
  unsigned index = 0;
  std::map<std::string, int> bufferOf;
  for (auto &[name, t] : tensors) {
    Buffer b;
    b.name = name;
    b.base = kGlobalBase + kGlobalStride * index++;
    b.data = &t.data;
    bufferOf[name] = int(buffers.size());
    buffers.push_back(b);
  }
  params.assign(k.paramBytes, 0);
  tmapOfParam.assign(k.params.size(), -1);
  for (size_t i = 0; i < ps->size(); ++i) {
    const llvm::json::Object *p = (*ps)[i].getAsObject();
    if (!p)
      return err("param is not an object");
    std::string kind = p->getString("kind").value_or("").str();
    std::string tname = p->getString("tensor").value_or("").str();
    const Param &decl = k.params[i];
    auto put = [&](uint64_t v, unsigned n) -> llvm::Error {
      if (n != decl.size)
        return err(llvm::formatv("param {0} ({1}) is {2} bytes in the PTX", i,
                                 kind, decl.size));
      std::memcpy(&params[decl.offset], &v, n);
      return llvm::Error::success();
    };
    if (kind == "f32") {
      auto it = scalars.find(tname);
      if (it == scalars.end())
        return err("no value for scalar '" + tname + "' (--scalar)");
      if (auto e = put(floatToBits(float(it->second)), 4))
        return e;
      continue;
    }
    auto tit = tensors.find(tname);
    if (tit == tensors.end())
      return err("no tensor '" + tname + "' (--tensor)");
    const Tensor &t = tit->second;
    std::vector<int64_t> strides(t.shape.size());
    int64_t s = 1;
    for (size_t d = t.shape.size(); d-- > 0;) {
      strides[d] = s;
      s *= t.shape[d];
    }
    if (kind == "tensormap") {
      TensorMap m;
      m.name = tname;
      m.tensor = bufferOf[tname];
      m.esize = t.elementBytes;
      m.rank = unsigned(t.shape.size());
      if (m.rank != 3)
        return err("tensor maps of rank other than 3");
      // dims [D, H, T] innermost first, as _driver._tensor_map encodes them.
      for (unsigned d = 0; d < m.rank; ++d) {
        m.dims[d] = t.shape[m.rank - 1 - d];
        m.strides[d] = strides[m.rank - 1 - d] * t.elementBytes;
      }
      const llvm::json::Array *box = p->getArray("box");
      if (!box || box->size() != m.rank)
        return err("tensormap '" + tname + "' has no box of rank 3");
      for (unsigned d = 0; d < m.rank; ++d)
        m.box[d] = unsigned((*box)[d].getAsInteger().value_or(0));
      std::string sw = p->getString("swizzle").value_or("").str();
      if (sw == "128B")
        m.swizzleBytes = 128;
      else if (sw == "64B")
        m.swizzleBytes = 64;
      else if (sw == "32B")
        m.swizzleBytes = 32;
      else
        return err("swizzle '" + sw + "' is not emulated");
      // cuTensorMapEncodeTiled: the inner box extent is at most the swizzle
      // span.
      if (m.box[0] * m.esize > m.swizzleBytes)
        return err("a " + sw + "-swizzled box's inner extent exceeds " +
                   std::to_string(m.swizzleBytes) + " bytes");
      if (p->getString("oob_fill").value_or("zero") != "zero")
        return err("only zero out-of-bounds fill is emulated");
      tmapOfParam[i] = int(tmaps.size());
      tmaps.push_back(m);
      if (decl.size != 128 || decl.align < 64)
        return err("tensormap param is not .align 64 .b8 [128] in the PTX");
      // The 128 opaque bytes: the emulator never reads them, it finds the map
      // by the parameter's address.
      std::memset(&params[decl.offset], 0xA5, 128);
      continue;
    }
    if (kind == "pointer") {
      if (auto e = put(buffers[bufferOf[tname]].base, 8))
        return e;
      continue;
    }
    std::string value = p->getString("value").value_or("").str();
    int64_t dim = p->getInteger("dim").value_or(-1);
    if (dim < 0 || size_t(dim) >= t.shape.size())
      return err("param " + std::to_string(i) + " has a bad 'dim'");
    int64_t v = value == "size" ? t.shape[dim] : strides[dim];
    if (value != "size" && value != "stride")
      return err("unknown param value '" + value + "'");
    if (kind == "i32") {
      if (auto e = put(uint64_t(uint32_t(v)), 4))
        return e;
    } else if (kind == "i64") {
      if (auto e = put(uint64_t(v), 8))
        return e;
    } else {
      return err("unknown param kind '" + kind + "'");
    }
  }
  return llvm::Error::success();
}

int Emulator::tensorMapAt(uint64_t generic) const {
  if (generic < kParamGeneric)
    return -1;
  uint64_t off = generic - kParamGeneric;
  for (size_t i = 0; i < k.params.size(); ++i)
    if (tmapOfParam[i] >= 0 && k.params[i].offset == off)
      return tmapOfParam[i];
  return -1;
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

llvm::Error Emulator::sharedCheck(uint64_t addr, unsigned size, const Thread *t,
                                  const Instruction *inst, bool read) {
  if (addr < opt.sharedBase || addr + size > opt.sharedBase + smemBytes)
    return fail(t, inst,
                llvm::formatv("shared-memory access [{0:x}, +{1}) outside the "
                              "{2} bytes of dynamic shared memory at {3:x}",
                              addr, size, smemBytes, opt.sharedBase));
  if (read)
    for (unsigned i = 0; i < size; ++i)
      if (!smemInit[addr + i])
        return fail(t, inst,
                    llvm::formatv("read of shared memory at {0:x} that no "
                                  "completed write or copy produced",
                                  addr + i));
  return llvm::Error::success();
}

llvm::Error Emulator::globalAccess(uint64_t addr, unsigned size, bool write,
                                   uint8_t *bytes, const Thread &t,
                                   const Instruction &inst) {
  for (Buffer &b : buffers) {
    if (addr >= b.base && addr + size <= b.base + b.data->size()) {
      uint8_t *p = b.data->data() + (addr - b.base);
      if (write)
        std::memcpy(p, bytes, size);
      else
        std::memcpy(bytes, p, size);
      return llvm::Error::success();
    }
  }
  std::string near;
  for (Buffer &b : buffers)
    if (addr >= b.base && addr < b.base + kGlobalStride)
      near = llvm::formatv(" ('{0}' has {1} bytes; this is byte {2})", b.name,
                           b.data->size(), addr - b.base)
                 .str();
  return fail(&t, &inst,
              llvm::formatv("out-of-bounds global {0} of {1} bytes at {2:x}{3}",
                            write ? "store" : "load", size, addr, near));
}

void Emulator::markGenericWrite(Thread &t, uint32_t a, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i)
    smemDirty[a + i] = 1;
  if (!t.genericSmemWrites.empty() &&
      t.genericSmemWrites.back().first + t.genericSmemWrites.back().second == a)
    t.genericSmemWrites.back().second += n;
  else
    t.genericSmemWrites.push_back({a, n});
}

// PTX ISA 8.7, "Memory Consistency Model: Proxies": generic-proxy writes to
// shared memory are seen by the async proxy (TMA, wgmma, tcgen05.mma) only
// after a fence.proxy.async.
llvm::Error Emulator::asyncSharedRead(uint32_t a, unsigned n, const char *what,
                                      unsigned line) {
  if (a < opt.sharedBase || a + n > opt.sharedBase + smemBytes)
    return fail(nullptr, nullptr,
                llvm::formatv("{0} (issued at line {1}) reads shared memory "
                              "[{2:x}, +{3}) outside the dynamic shared memory",
                              what, line, a, n));
  for (unsigned i = 0; i < n; ++i) {
    if (!smemInit[a + i])
      return fail(nullptr, nullptr,
                  llvm::formatv("{0} (issued at line {1}) reads shared memory "
                                "at {2:x} that no completed write or copy "
                                "produced",
                                what, line, a + i));
    if (smemDirty[a + i])
      return fail(nullptr, nullptr,
                  llvm::formatv("{0} (issued at line {1}) reads shared memory "
                                "at {2:x} written by st.shared with no "
                                "fence.proxy.async since (missing fence)",
                                what, line, a + i));
  }
  return llvm::Error::success();
}

// A write into shared memory that an issued, not yet completed, asynchronous
// operation still reads: the ring slot or staging buffer is reused before its
// release.
llvm::Error Emulator::writeConflict(uint32_t lo, uint32_t hi,
                                    const char *writer, unsigned line) {
  for (unsigned id : pendingOps) {
    const AsyncOp &op = ops[id];
    if (op.done || op.kind == AsyncKind::TmaLoad ||
        op.kind == AsyncKind::CpAsync || op.kind == AsyncKind::CpAsyncArrive)
      continue;
    bool first = lo < op.hi && op.lo < hi;
    if (first || (lo < op.hi2 && op.lo2 < hi)) {
      uint32_t olo = first ? op.lo : op.lo2, ohi = first ? op.hi : op.hi2;
      return fail(
          nullptr, nullptr,
          llvm::formatv("{0} at line {1} overwrites shared memory "
                        "[{2:x}, {3:x}) that the {4} issued at line "
                        "{5} has not finished reading (it reads [{6:x}, "
                        "{7:x}); a ring slot or staging buffer reused "
                        "before its release)",
                        writer, line, std::max(lo, olo), std::min(hi, ohi),
                        op.kind == AsyncKind::TmaStore ? "TMA store"
                        : op.kind == AsyncKind::Wgmma  ? "wgmma"
                                                       : "tcgen05.mma",
                        op.line, olo, ohi));
    }
  }
  return llvm::Error::success();
}

// A read of shared memory that an issued TMA load has not finished writing:
// its mbarrier was not waited for (or not for the right phase).
llvm::Error Emulator::pendingCopyOverlap(uint32_t lo, uint32_t hi,
                                         const Thread *t,
                                         const Instruction *inst) {
  for (unsigned id : pendingOps) {
    const AsyncOp &op = ops[id];
    if (op.done ||
        (op.kind != AsyncKind::TmaLoad && op.kind != AsyncKind::CpAsync))
      continue;
    uint32_t bytes =
        op.kind == AsyncKind::CpAsync ? op.size : boxSpan(tmaps[op.tmap]);
    if (lo < op.smem + bytes && op.smem < hi)
      return fail(t, inst,
                  llvm::formatv("reads shared memory [{0:x}, {1:x}) that the "
                                "{3} issued at line {2} is still writing "
                                "(its mbarrier phase was not waited for)",
                                std::max(lo, op.smem),
                                std::min(hi, op.smem + bytes), op.line,
                                op.kind == AsyncKind::CpAsync ? "cp.async"
                                                              : "TMA load"));
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// mbarrier (PTX ISA 9.7.13.15 "Parallel Synchronization and Communication
// Instructions: mbarrier"): an object with an expected arrival count, a
// pending arrival count, a transaction count and a phase. A phase completes
// when both the pending arrivals and the pending transactions reach zero;
// then the phase number advances and the pending count is reset to the
// expected count. try_wait.parity P succeeds once the phase of parity P has
// completed, i.e. while the current phase's parity differs from P.
//===----------------------------------------------------------------------===//

MBarrier *Emulator::mbar(uint32_t addr) {
  auto it = mbars.find(addr);
  return it == mbars.end() ? nullptr : &it->second;
}

void Emulator::mbarMaybeComplete(uint32_t addr, MBarrier &b) {
  if (b.pending == 0 && b.tx == 0) {
    ++b.phase;
    b.pending = b.expected;
    for (Thread &t : thr)
      if (t.state == State::Blocked && t.wait == Wait::MBarrier &&
          t.waitAddr == addr) {
        t.state = State::Run;
        t.wait = Wait::None;
      }
  }
}

llvm::Error Emulator::mbarArrive(uint32_t addr, unsigned line, uint32_t count) {
  MBarrier *b = mbar(addr);
  if (!b)
    return fail(nullptr, nullptr,
                llvm::formatv("arrive (line {0}) on {1:x}, which is no "
                              "initialized mbarrier",
                              line, addr));
  if (b->pending < count)
    return fail(nullptr, nullptr,
                llvm::formatv("arrive (line {0}) with count {1} on mbarrier "
                              "{2:x} whose phase has {3} pending arrivals "
                              "left",
                              line, count, addr, b->pending));
  b->pending -= count;
  mbarMaybeComplete(addr, *b);
  return llvm::Error::success();
}

llvm::Error Emulator::mbarCompleteTx(uint32_t addr, uint32_t bytes,
                                     unsigned line) {
  MBarrier *b = mbar(addr);
  if (!b)
    return fail(nullptr, nullptr,
                llvm::formatv("complete_tx of the copy issued at line {0} on "
                              "{1:x}, which is no initialized mbarrier",
                              line, addr));
  b->tx -= bytes;
  mbarMaybeComplete(addr, *b);
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Asynchronous operations
//===----------------------------------------------------------------------===//

// 128-byte swizzle (PTX ISA 5.5.6 "Tensor Access Modes: Swizzling Modes", and
// cuTensorMapEncodeTiled's CU_TENSOR_MAP_SWIZZLE_128B): within each 1024-byte
// span of shared memory the 16-byte chunk index (address bits [4,7)) is XORed
// with the 128-byte row index (address bits [7,10)). The pattern is a
// function of the absolute shared address.
static uint32_t swizzle128(uint32_t a) { return a ^ (((a >> 7) & 7) << 4); }

// 64-byte swizzle (the same section; CU_TENSOR_MAP_SWIZZLE_64B, CuTe's
// Swizzle<2,4,3>): within each 512-byte span the 16-byte chunk index inside a
// 64-byte row (address bits [4,6)) is XORed with address bits [7,9), i.e.
// with (64-byte row index / 2) % 4.
static uint32_t swizzle64(uint32_t a) { return a ^ (((a >> 7) & 3) << 4); }

// 32-byte swizzle (the same section; CU_TENSOR_MAP_SWIZZLE_32B, CuTe's
// Swizzle<1,4,3>, the PTX ISA's canonical 32B layouts): within each 256-byte
// span the 16-byte chunk index inside a 32-byte row (address bit 4) is XORed
// with address bit 7, i.e. with (32-byte row index / 4) % 2.
static uint32_t swizzle32(uint32_t a) { return a ^ (((a >> 7) & 1) << 4); }

static uint32_t swizzleAddress(uint32_t a, unsigned swizzleBytes) {
  switch (swizzleBytes) {
  case 128:
    return swizzle128(a);
  case 64:
    return swizzle64(a);
  case 32:
    return swizzle32(a);
  default:
    return a;
  }
}

// The row width W of a descriptor's layout: its swizzle span (128, 64 or 32
// bytes; 128 for the modes readSmemMatrix refuses).
static unsigned swizzleWidth(const SmemDescriptor &d) {
  return d.swizzleBytes == 64 || d.swizzleBytes == 32 ? d.swizzleBytes : 128;
}

// cp.async.bulk.tensor, tile mode (PTX ISA 9.7.9.25.5.1 and 5.5 "Tensors"):
// the box at the given coordinates, innermost dimension contiguous in shared
// memory, one row every boxRowPitch bytes; elements outside the tensor read as
// zero (OOB fill none = zeros); the transaction count is the box's data bytes.
llvm::Error Emulator::doTmaLoad(AsyncOp &op) {
  const TensorMap &m = tmaps[op.tmap];
  std::vector<uint8_t> &g = *buffers[m.tensor].data;
  uint32_t bytes = m.esize;
  for (unsigned d = 0; d < m.rank; ++d)
    bytes *= m.box[d];
  if (op.smem % 128)
    return fail(nullptr, nullptr,
                llvm::formatv("TMA load (line {0}) into {1:x}: the shared "
                              "destination must be 128-byte aligned",
                              op.line, op.smem));
  if (auto e = sharedCheck(op.smem, boxSpan(m), nullptr, nullptr, false))
    return e;
  if (auto e =
          writeConflict(op.smem, op.smem + boxSpan(m), "TMA load", op.line))
    return e;
  for (uint64_t outer = 0, n = boxRows(m); outer < n; ++outer) {
    int64_t rowOffset;
    bool rowIn = boxRow(m, op, outer, rowOffset);
    uint32_t off = uint32_t(outer) * boxRowPitch(m);
    for (unsigned i0 = 0; i0 < m.box[0]; ++i0, off += m.esize) {
      int64_t c0 = int64_t(op.coords[0]) + i0;
      uint32_t a = op.smem + off;
      a = swizzleAddress(a, m.swizzleBytes);
      if (rowIn && c0 >= 0 && c0 < m.dims[0]) {
        std::memcpy(&smem[a], &g[size_t(c0 * m.strides[0] + rowOffset)],
                    m.esize);
      } else {
        std::memset(&smem[a], 0, m.esize);
      }
      for (unsigned b = 0; b < m.esize; ++b) {
        smemInit[a + b] = 1;
        smemDirty[a + b] = 0;
      }
    }
  }
  ++stats.tmaLoads;
  return mbarCompleteTx(op.mbar, bytes, op.line);
}

// The store direction: only the elements inside the tensor are written; its
// rows are read at the load's pitch (assumed: only loads were measured).
llvm::Error Emulator::doTmaStore(AsyncOp &op) {
  const TensorMap &m = tmaps[op.tmap];
  std::vector<uint8_t> &g = *buffers[m.tensor].data;
  for (uint64_t outer = 0, n = boxRows(m); outer < n; ++outer) {
    int64_t rowOffset;
    bool rowIn = boxRow(m, op, outer, rowOffset);
    uint32_t off = uint32_t(outer) * boxRowPitch(m);
    for (unsigned i0 = 0; i0 < m.box[0]; ++i0, off += m.esize) {
      int64_t c0 = int64_t(op.coords[0]) + i0;
      if (!rowIn || c0 < 0 || c0 >= m.dims[0])
        continue;
      uint32_t a = op.smem + off;
      a = swizzleAddress(a, m.swizzleBytes);
      if (auto e = asyncSharedRead(a, m.esize, "TMA store", op.line))
        return e;
      std::memcpy(&g[size_t(c0 * m.strides[0] + rowOffset)], &smem[a], m.esize);
    }
  }
  ++stats.tmaStores;
  return llvm::Error::success();
}

// Shared-memory matrix descriptors.
//
// wgmma (PTX ISA 9.7.15.5.1 "Matrix Descriptor Format"): bits [0,14) start
// address >> 4, [16,30) leading-dimension byte offset >> 4, [32,46) stride-
// dimension byte offset >> 4, [49,52) base offset, [62,64) swizzle (0 none,
// 1 128B, 2 64B, 3 32B).
// tcgen05 (9.7.16.4.1 "Shared Memory Descriptor"): the same three address
// fields, bits [46,48) the fixed constant 0b01, [49,52) base offset, bit 52
// the leading-dimension stride mode, [61,64) swizzle (0 none, 1 128B with
// 32B atomic, 2 128B, 4 64B, 6 32B).
//
// Canonical layouts with 128-byte swizzle (9.7.15.5.1 "Shared Memory Matrix
// Layout", in units of elements, T = 16 bytes / element size):
//   K-major:  Swizzle<3,4,3> o ((8,m),(T,2k)) : ((8T,SBO),(1,T))
//   MN-major: Swizzle<3,4,3> o ((T,8,m),(8,k)) : ((1,T,LBO),(8T,SBO))
// with 64-byte swizzle:
//   K-major:  Swizzle<2,4,3> o ((8,m),(T,2k)) : ((4T,SBO),(1,T))
//   MN-major: Swizzle<2,4,3> o ((T,4,m),(8,k)) : ((1,T,LBO),(4T,SBO))
// and with 32-byte swizzle:
//   K-major:  Swizzle<1,4,3> o ((8,m),(T,2k)) : ((2T,SBO),(1,T))
//   MN-major: Swizzle<1,4,3> o ((T,2,m),(8,k)) : ((1,T,LBO),(2T,SBO))
// so for element (mn, k), with W the swizzle width in bytes (128, 64 or 32):
// K-major at start + (mn%8)*W + (mn/8)*SBO + k*es; MN-major at
// start + (mn%(W/es))*es + (mn/(W/es))*LBO + (k%8)*W + (k/8)*SBO, then the
// address swizzle. `rows` x `cols` are (mn extent) x (k extent).
llvm::Error Emulator::readSmemMatrix(uint64_t desc, bool mnMajor, unsigned rows,
                                     unsigned cols, bool bf16,
                                     std::vector<float> &out, unsigned line,
                                     bool tcgen05) {
  SmemDescriptor d = decodeSmemDescriptor(desc, tcgen05);
  const char *what = tcgen05 ? "tcgen05.mma" : "wgmma";
  if (tcgen05 && d.version != 1)
    return fail(nullptr, nullptr,
                llvm::formatv("{0} (line {1}): shared-memory descriptor {2:x} "
                              "lacks the fixed 0b001 at bits 46-48",
                              what, line, desc));
  if (tcgen05 && d.lboAbsolute)
    return fail(nullptr, nullptr,
                llvm::formatv("{0} (line {1}): descriptor {2:x}: absolute "
                              "leading-dimension mode is not emulated",
                              what, line, desc));
  if ((d.swizzleBytes != 128 && d.swizzleBytes != 64 && d.swizzleBytes != 32) ||
      d.swizzle32BAtom)
    return fail(nullptr, nullptr,
                llvm::formatv("{0} (line {1}): descriptor {2:x} is not "
                              "128-, 64- or 32-byte swizzled; only those "
                              "layouts are emulated",
                              what, line, desc));
  if (d.baseOffset != 0)
    return fail(nullptr, nullptr,
                llvm::formatv("{0} (line {1}): descriptor {2:x} has base "
                              "offset {3}; only 0 is emulated",
                              what, line, desc, d.baseOffset));
  out.assign(size_t(rows) * cols, 0.0f);
  for (unsigned mn = 0; mn < rows; ++mn)
    for (unsigned kk = 0; kk < cols; ++kk) {
      uint32_t a = smemElementAddress(d, mnMajor, mn, kk);
      if (auto e = asyncSharedRead(a, 2, what, line))
        return e;
      uint16_t h;
      std::memcpy(&h, &smem[a], 2);
      out[size_t(mn) * cols + kk] = bf16 ? bf16ToFloat(h) : f16ToFloat(h);
    }
  return llvm::Error::success();
}

// Shared bytes [lo, hi) an MMA operand of `rows` (M or N) x 16 (K) elements
// reads, for the reuse and pending-copy checks: the layout formula of
// readSmemMatrix is monotonic in (mn, k) before the swizzle, which permutes
// bytes only inside one swizzle row (W = 128, 64 or 32 bytes, from the
// descriptor).
static void operandExtent(uint64_t desc, bool tcgen05, bool mnMajor,
                          unsigned rows, uint32_t &lo, uint32_t &hi) {
  SmemDescriptor d = decodeSmemDescriptor(desc, tcgen05);
  const uint32_t w = swizzleWidth(d);
  unsigned mn = rows - 1, kk = 15;
  uint32_t last = mnMajor
                      ? d.start + (mn % (w / 2)) * 2 + (mn / (w / 2)) * d.lbo +
                            (kk % 8) * w + (kk / 8) * d.sbo
                      : d.start + (mn % 8) * w + (mn / 8) * d.sbo + kk * 2;
  lo = d.start & ~(w - 1);
  hi = (last | (w - 1)) + 1;
}

// Accumulator and A-operand register fragments of wgmma .m64nNk16 (PTX ISA
// 9.7.15.5.1 "Register Fragments", figures "WGMMA .m64nNk16 register
// fragment layout for accumulator matrix D" and "... for matrix A"): thread
// t = 32 w + l of the warpgroup holds, for its register (or 16-bit element)
// i, row 16 w + l/4 + 8 ((i/2) % 2) and column 8 (i/4) + 2 (l%4) + i%2.
static void fragment(unsigned t, unsigned i, unsigned &row, unsigned &col) {
  unsigned w = t / 32, l = t % 32;
  row = 16 * w + l / 4 + 8 * ((i / 2) % 2);
  col = 8 * (i / 4) + 2 * (l % 4) + (i % 2);
}

// prod[r * n + c] = sum over k of a[r * 16 + k] * b[c * 16 + k], in double,
// each sum in k's order (an MMA's K = 16 step). Row by row, so that the
// innermost loop, over the columns, vectorizes without reordering any sum.
static void productK16(const std::vector<float> &a, unsigned m,
                       const std::vector<float> &b, unsigned n,
                       std::vector<double> &prod) {
  std::vector<double> bt(16 * size_t(n));
  for (unsigned c = 0; c < n; ++c)
    for (unsigned kk = 0; kk < 16; ++kk)
      bt[kk * n + c] = b[c * 16 + kk];
  prod.assign(size_t(m) * n, 0.0);
  for (unsigned r = 0; r < m; ++r) {
    double *row = &prod[size_t(r) * n];
    for (unsigned kk = 0; kk < 16; ++kk) {
      const double x = a[r * 16 + kk], *col = &bt[kk * n];
      for (unsigned c = 0; c < n; ++c)
        row[c] += x * col[c];
    }
  }
}

// wgmma.mma_async (9.7.15.5.2): D = A x B (+ D when scale-d), A 64x16 from
// registers or a descriptor, B 16xN from a descriptor; imm-trans-a/b = 1
// selects the MN-major layout of that operand; imm-scale-a/b = -1 negates it.
llvm::Error Emulator::doWgmma(AsyncOp &op) {
  const Instruction &inst = *op.inst;
  unsigned n = unsigned(inst.aux2 & 0xfff);
  bool bf16 = inst.aux2 & 0x1000;
  bool rs = inst.operands[1].kind == Operand::Vec;
  auto imm = [&](size_t i) { return inst.operands[i].imm; };
  int64_t scaleA = imm(4), scaleB = imm(5);
  bool transA = rs ? false : imm(6) != 0;
  bool transB = rs ? imm(6) != 0 : imm(7) != 0;
  std::vector<float> a(64 * 16), b; // a[m*16+k], b[n*16+k]
  unsigned first = op.issuer * 128;
  if (rs) {
    const Operand &av = inst.operands[1];
    for (unsigned t = 0; t < 128; ++t)
      for (unsigned e = 0; e < 8; ++e) {
        uint32_t word = uint32_t(reg(thr[first + t], av.elems[e / 2].reg));
        uint16_t h = uint16_t(e % 2 ? word >> 16 : word & 0xffff);
        unsigned r, c;
        fragment(t, e, r, c);
        a[r * 16 + c] = bf16 ? bf16ToFloat(h) : f16ToFloat(h);
      }
  } else if (auto e = readSmemMatrix(op.descA, transA, 64, 16, bf16, a, op.line,
                                     false)) {
    return e;
  }
  if (auto e = readSmemMatrix(op.descB, transB, n, 16, bf16, b, op.line, false))
    return e;
  const Operand &dv = inst.operands[0];
  if (dv.elems.size() != n / 2)
    return fail(nullptr, &inst, "wrong number of accumulator registers");
  std::vector<double> prod;
  productK16(a, 64, b, n, prod);
  for (unsigned t = 0; t < 128; ++t) {
    Thread &th = thr[first + t];
    for (unsigned i = 0; i < n / 2; ++i) {
      unsigned r, c;
      fragment(t, i, r, c);
      double dot = prod[size_t(r) * n + c] * double(scaleA * scaleB);
      uint64_t &d = reg(th, dv.elems[i].reg);
      double acc = op.scaleD[t] ? double(bitsToFloat(uint32_t(d))) : 0.0;
      d = floatToBits(float(acc + dot));
    }
  }
  ++stats.mmas;
  return llvm::Error::success();
}

// PTX ISA 9.7.15.6 (wgmma.mma_async): accessing the accumulator registers or
// the registers holding the A fragment of an in-flight wgmma.mma_async
// before the wgmma.wait_group that covers it is undefined behaviour.
void Emulator::lockWgmmaRegisters(const AsyncOp &op, int delta) {
  const Instruction &inst = *op.inst;
  unsigned first = op.issuer * 128;
  auto lock = [&](unsigned tid, const Operand &r) {
    if (r.reg >= 0)
      locked[regIndex(tid, r.reg)] += uint8_t(delta);
  };
  for (unsigned t = 0; t < 128; ++t) {
    for (const Operand &d : inst.operands[0].elems)
      lock(first + t, d);
    if (inst.operands[1].kind == Operand::Vec)
      for (const Operand &a : inst.operands[1].elems)
        lock(first + t, a);
  }
}

llvm::Error Emulator::checkLocked(Thread &t, const Instruction &inst) {
  auto check = [&](const Operand &o) -> bool {
    return o.reg >= 0 && (o.kind == Operand::Reg || o.kind == Operand::Addr) &&
           locked[regIndex(t.tid, o.reg)];
  };
  for (const Operand &o : inst.operands) {
    bool hit = check(o);
    for (const Operand &e : o.elems)
      hit |= check(e);
    if (hit)
      return fail(&t, &inst,
                  "uses a register of an in-flight wgmma.mma_async (its "
                  "accumulator or A fragment) before the wgmma.wait_group "
                  "that covers it");
  }
  if (inst.guard >= 0 && locked[regIndex(t.tid, inst.guard)])
    return fail(&t, &inst, "guard predicate is an in-flight wgmma register");
  return llvm::Error::success();
}

llvm::Error Emulator::completeOne(unsigned id) {
  AsyncOp &op = ops[id];
  if (op.done) {
    llvm::erase(pendingOps, id);
    return llvm::Error::success();
  }
  op.done = true;
  llvm::Error e = llvm::Error::success();
  switch (op.kind) {
  case AsyncKind::TmaLoad:
    e = doTmaLoad(op);
    break;
  case AsyncKind::TmaStore:
    e = doTmaStore(op);
    break;
  case AsyncKind::Wgmma: {
    Warpgroup &wg = wgs[op.issuer];
    // wgmma operations of a warpgroup complete in issue order (they may
    // chain through the same accumulators).
    while (!wg.wgmma.empty() && wg.wgmma.front() != id) {
      unsigned earlier = wg.wgmma.front();
      wg.wgmma.pop_front();
      ops[earlier].done = true;
      llvm::erase(pendingOps, earlier);
      if (auto e2 = doWgmma(ops[earlier]))
        return e2;
    }
    if (!wg.wgmma.empty())
      wg.wgmma.pop_front();
    e = doWgmma(op);
    break;
  }
  case AsyncKind::TcMma: {
    // MMAs into the same accumulator complete in issue order (PTX ISA
    // 9.7.16.6.2 "Pipelined tcgen05 instructions": mma -> mma with the same
    // accumulator and shape is ordered); others in any order.
    for (unsigned earlier : std::vector<unsigned>(pendingOps)) {
      if (earlier >= id)
        break;
      const AsyncOp &x = ops[earlier];
      if (!x.done && x.kind == AsyncKind::TcMma && x.issuer == op.issuer &&
          x.tmemD == op.tmemD) {
        ops[earlier].done = true;
        if (auto e2 = doTcMma(ops[earlier]))
          return e2;
        llvm::erase(pendingOps, earlier);
      }
    }
    e = doTcMma(op);
    break;
  }
  case AsyncKind::CpAsync:
    std::memcpy(&smem[op.smem], op.bytes, op.size);
    for (unsigned i = 0; i < op.size; ++i) {
      smemInit[op.smem + i] = 1;
      smemDirty[op.smem + i] = 1; // a generic-proxy write
    }
    break;
  case AsyncKind::CpAsyncArrive:
  case AsyncKind::TcCommit: {
    // The mbarrier arrive happens once every operation it tracks has
    // completed: for tcgen05.commit every tcgen05 async operation the thread
    // issued before it (9.7.16.12.1), for cp.async.mbarrier.arrive every
    // earlier cp.async of the thread (whose pending-count increment happened
    // at issue).
    for (unsigned dep : op.deps)
      if (!ops[dep].done)
        if (auto e2 = completeOne(dep))
          return e2;
    e = mbarArrive(op.mbar, op.line);
    break;
  }
  }
  llvm::erase(pendingOps, id);
  return e;
}

AsyncOp Emulator::asyncOp(AsyncKind kind, const Thread &t,
                          const Instruction &in) {
  AsyncOp op;
  op.kind = kind;
  op.issuer = t.tid;
  op.line = in.line;
  return op;
}

unsigned Emulator::issueAsync(AsyncOp op) {
  unsigned id = unsigned(ops.size());
  ops.push_back(std::move(op));
  pendingOps.push_back(id);
  return id;
}

// Completes a random subset of the pending asynchronous operations: each
// completes with probability 1/2 at each scheduling point.
llvm::Error Emulator::completeSome() {
  if (pendingOps.empty())
    return llvm::Error::success();
  std::vector<unsigned> pick;
  for (unsigned id : pendingOps)
    if ((rng() & 1) &&
        !(opt.holdBulkStores && ops[id].kind == AsyncKind::TmaStore))
      pick.push_back(id);
  for (unsigned id : pick)
    if (auto e = completeOne(id))
      return e;
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Execution
//===----------------------------------------------------------------------===//

uint64_t Emulator::otherValue(Thread &t, const Operand &o) {
  switch (o.kind) {
  case Operand::Reg:
    return reg(t, o.reg);
  case Operand::Imm:
    return uint64_t(o.imm);
  case Operand::Spec:
    switch (o.spec) {
    case Special::TidX:
      return t.tid;
    case Special::NtidX:
      return threads;
    case Special::CtaidX:
      return cta;
    case Special::NctaidX:
      return opt.grid;
    case Special::LaneId:
      return t.tid % 32;
    // The emulator has no time: both clocks count the instructions run so
    // far (all CTAs, which run one after the other), the SM's at two cycles
    // per "nanosecond" of the global timer, so that a trace's clocks are
    // monotonic and map onto the timer by a line, as on a GPU. Each CTA has
    // an SM of its own.
    case Special::Clock64:
      return 2 * stats.instructions + 1;
    case Special::GlobalTimer:
      return stats.instructions + 1;
    case Special::SmId:
      return cta;
    }
    return 0;
  case Operand::Symbol:
    return symbolAddress(o.sym);
  default:
    return 0;
  }
}

static bool isCollective(uint16_t op) {
  switch (op) {
  case OpBarSync:
  case OpShflBfly:
  case OpStmatrix:
  case OpWgmmaFence:
  case OpWgmmaCommit:
  case OpWgmmaWait:
  case OpWgmmaMma:
  case OpSetmaxnreg:
  case OpTcAlloc:
  case OpTcDealloc:
  case OpTcRelinquish:
  case OpTcLd:
  case OpTcSt:
  case OpTcWaitLd:
  case OpTcWaitSt:
    return true;
  default:
    return false;
  }
}

// Warpgroup-wide instructions: all four warps of the warpgroup execute them
// together (wgmma: PTX ISA 9.7.15.1 "Warpgroup"; setmaxnreg: "all warps in
// the warpgroup must execute the same setmaxnreg").
static bool isWarpgroupWide(uint16_t op) {
  return op == OpWgmmaFence || op == OpWgmmaCommit || op == OpWgmmaWait ||
         op == OpWgmmaMma || op == OpSetmaxnreg;
}

llvm::Error Emulator::arriveCollective(Thread &t, const Instruction &inst) {
  bool group = isWarpgroupWide(inst.op);
  unsigned first = group ? t.tid / 128 * 128 : t.tid / 32 * 32;
  unsigned count = group ? 128 : 32;
  unsigned &arrived =
      group ? arrivedGroup[t.tid / 128] : arrivedWarp[t.tid / 32];
  unsigned live = group ? liveInGroup[t.tid / 128] : liveInWarp[t.tid / 32];
  t.state = State::Blocked;
  t.wait = Wait::Collective;
  ++arrived;
  if (arrived < live)
    return llvm::Error::success();
  // All live threads are here: they must all be at this instruction, and for
  // .aligned instructions none may have exited.
  for (unsigned i = first; i < first + count; ++i) {
    Thread &o = thr[i];
    if (o.state == State::Exited) {
      if (inst.op == OpBarSync)
        continue;
      return fail(&t, &inst,
                  llvm::formatv("thread {0} of this {1} has exited; all must "
                                "execute a .sync.aligned instruction",
                                i, group ? "warpgroup" : "warp"));
    }
    if (o.pc != t.pc)
      return fail(&t, &inst,
                  llvm::formatv("divergence: thread {0} of this {1} waits at "
                                "{2}",
                                i, group ? "warpgroup" : "warp", where(o)));
  }
  arrived = 0;
  return fireCollective(inst, first, count);
}

llvm::Error Emulator::fireCollective(const Instruction &inst, unsigned first,
                                     unsigned count) {
  auto release = [&]() {
    for (unsigned i = first; i < first + count; ++i)
      if (thr[i].state != State::Exited) {
        thr[i].state = State::Run;
        thr[i].wait = Wait::None;
        ++thr[i].pc;
      }
  };
  Thread &lead = thr[first];
  switch (inst.op) {
  case OpShflBfly: {
    // shfl.sync.bfly.b32 d, a, b, c, membermask (PTX ISA 9.7.9.6 "shfl.sync"):
    // source lane j = lane ^ b, kept only if inside the clamp/segment bounds
    // given by c; otherwise the lane reads its own value.
    if (uint32_t(value(lead, inst.operands[4])) != 0xffffffffu)
      return fail(&lead, &inst, "only a full membermask is emulated");
    uint32_t src[32];
    for (unsigned l = 0; l < 32; ++l)
      src[l] = uint32_t(value(thr[first + l], inst.operands[1]));
    for (unsigned l = 0; l < 32; ++l) {
      Thread &th = thr[first + l];
      uint32_t b = uint32_t(value(th, inst.operands[2])) & 31;
      uint32_t c = uint32_t(value(th, inst.operands[3]));
      uint32_t clamp = c & 31, segmask = (c >> 8) & 31;
      uint32_t maxLane = (l & segmask) | (clamp & ~segmask);
      uint32_t j = l ^ b;
      reg(th, inst.operands[0].reg) = j <= maxLane ? src[j] : src[l];
    }
    release();
    return llvm::Error::success();
  }
  case OpStmatrix: {
    // stmatrix.sync.aligned.m8n8.xN.shared.b16 [p], {r0, ..}: PTX ISA,
    // "Warp-level matrix store instruction: stmatrix". Row r of matrix i
    // goes to the 16 bytes at the address lane 8i + r gives; its four 32-bit
    // pieces (two adjacent b16 each) are register i of lanes 4r..4r+3.
    const Operand &data = inst.operands[1];
    unsigned matrices = unsigned(inst.aux2);
    if (data.kind != Operand::Vec || data.elems.size() != matrices)
      return fail(&lead, &inst,
                  llvm::formatv("stmatrix.x{0} takes {0} registers", matrices));
    for (unsigned i = 0; i < matrices; ++i)
      for (unsigned r = 0; r < 8; ++r) {
        Thread &owner = thr[first + 8 * i + r];
        uint64_t addr = addressOf(owner, inst.operands[0]);
        if (addr & 15)
          return fail(&owner, &inst,
                      llvm::formatv("misaligned stmatrix row at {0:x}", addr));
        if (auto e = sharedCheck(addr, 16, &owner, &inst, /*read=*/false))
          return e;
        if (auto e = writeConflict(uint32_t(addr), uint32_t(addr + 16),
                                   "stmatrix", inst.line))
          return e;
        for (unsigned c = 0; c < 4; ++c) {
          uint32_t piece =
              uint32_t(value(thr[first + 4 * r + c], data.elems[i]));
          std::memcpy(&smem[addr + 4 * c], &piece, 4);
        }
        for (unsigned b = 0; b < 16; ++b)
          smemInit[addr + b] = 1;
        markGenericWrite(owner, uint32_t(addr), 16);
      }
    release();
    return llvm::Error::success();
  }
  case OpBarSync: {
    // bar.sync a{, b} (9.7.13.4 "bar"): the warp arrives with all its
    // threads; the barrier completes when b threads (all of the CTA's
    // threads without b) have arrived.
    unsigned id = unsigned(value(lead, inst.operands[0]));
    unsigned expected =
        inst.operands.size() > 1 ? unsigned(value(lead, inst.operands[1])) : 0;
    if (id > 15)
      return fail(&lead, &inst, "named barrier id above 15");
    NamedBarrier &nb = namedBarriers[id];
    if (nb.arrived && nb.expected != expected)
      return fail(&lead, &inst,
                  llvm::formatv("barrier {0} used with thread counts {1} and "
                                "{2} at once",
                                id, nb.expected, expected));
    nb.expected = expected;
    nb.warps.push_back(first / 32);
    for (unsigned i = first; i < first + count; ++i)
      if (thr[i].state != State::Exited) {
        ++nb.arrived;
        thr[i].wait = Wait::NamedBarrier;
        thr[i].barrier = id;
      }
    unsigned live = 0;
    for (Thread &t : thr)
      live += t.state != State::Exited;
    unsigned need = expected ? expected : live;
    if (nb.arrived > need)
      return fail(&lead, &inst,
                  llvm::formatv("barrier {0}: {1} threads arrived, {2} "
                                "expected",
                                id, nb.arrived, need));
    if (nb.arrived == need) {
      for (unsigned w : nb.warps)
        for (unsigned i = w * 32; i < w * 32 + 32; ++i)
          if (thr[i].state != State::Exited) {
            thr[i].state = State::Run;
            thr[i].wait = Wait::None;
            ++thr[i].pc;
          }
      nb = NamedBarrier();
    }
    return llvm::Error::success();
  }
  case OpWgmmaFence:
    // wgmma.fence orders register accesses before wgmma (9.7.15.6.1); the
    // emulator reads and writes the registers when the operation completes.
    release();
    return llvm::Error::success();
  case OpWgmmaCommit: {
    // wgmma.commit_group: all prior uncommitted wgmma.mma_async of the
    // warpgroup form one wgmma-group (9.7.15.6.2).
    Warpgroup &wg = wgs[first / 128];
    int last = wg.unretired.empty() ? -1 : int(wg.unretired.back());
    if (last > wg.lastCommitted) {
      wg.groups.push_back(last);
      wg.lastCommitted = last;
    }
    release();
    return llvm::Error::success();
  }
  case OpWgmmaWait: {
    // wgmma.wait_group N: waits until at most N of the warpgroup's committed
    // groups are pending (9.7.15.6.3).
    Warpgroup &wg = wgs[first / 128];
    unsigned keep = unsigned(value(lead, inst.operands[0]));
    while (wg.groups.size() > keep) {
      int end = wg.groups.front();
      wg.groups.pop_front();
      if (auto e = completeOne(unsigned(end)))
        return e;
      // The group's registers are the program's again.
      while (!wg.unretired.empty() && int(wg.unretired.front()) <= end) {
        lockWgmmaRegisters(ops[wg.unretired.front()], -1);
        wg.unretired.pop_front();
      }
    }
    release();
    return llvm::Error::success();
  }
  case OpWgmmaMma: {
    AsyncOp op;
    op.kind = AsyncKind::Wgmma;
    op.issuer = first / 128;
    op.inst = &inst;
    op.line = inst.line;
    bool rs = inst.operands[1].kind == Operand::Vec;
    const Operand &pd = inst.operands[rs ? 3 : 3];
    op.descB = value(lead, inst.operands[2]);
    if (!rs)
      op.descA = value(lead, inst.operands[1]);
    op.scaleD.resize(128);
    for (unsigned t = 0; t < 128; ++t) {
      Thread &th = thr[first + t];
      if (value(th, inst.operands[2]) != op.descB ||
          (!rs && value(th, inst.operands[1]) != op.descA))
        return fail(&th, &inst,
                    "the descriptors differ across the warpgroup (they must "
                    "be the same in all its warps)");
      op.scaleD[t] = value(th, pd) != 0;
    }
    // Shared bytes the operation reads (for the reuse checks): the layout
    // formula of readSmemMatrix is monotonic in (mn, k) before the swizzle,
    // which permutes bytes only inside a 128-byte row.
    unsigned n = unsigned(inst.aux2 & 0xfff);
    auto extent = [&](uint64_t d, bool mnMajor, unsigned rows, uint32_t &lo,
                      uint32_t &hi) {
      operandExtent(d, /*tcgen05=*/false, mnMajor, rows, lo, hi);
    };
    auto imm = [&](size_t i) { return inst.operands[i].imm != 0; };
    extent(op.descB, rs ? imm(6) : imm(7), n, op.lo, op.hi);
    if (!rs)
      extent(op.descA, imm(6), 64, op.lo2, op.hi2);
    if (auto e = pendingCopyOverlap(op.lo2, op.hi2, &lead, &inst))
      return e;
    if (auto e = pendingCopyOverlap(op.lo, op.hi, &lead, &inst))
      return e;
    lockWgmmaRegisters(op, +1);
    unsigned id = issueAsync(std::move(op));
    wgs[first / 128].wgmma.push_back(id);
    wgs[first / 128].unretired.push_back(id);
    release();
    return llvm::Error::success();
  }
  case OpSetmaxnreg: {
    // setmaxnreg.{inc,dec}.sync.aligned.u32 n (PTX ISA 9.7.17.1): n in
    // [24, 256], a multiple of 8; .dec releases registers to the CTA's pool,
    // .inc waits until the pool can grant them. The pool is what the launch
    // gave: the per-thread register count times the threads.
    unsigned n = unsigned(value(lead, inst.operands[0]));
    Warpgroup &wg = wgs[first / 128];
    if (n < 24 || n > 256 || n % 8)
      return fail(&lead, &inst,
                  llvm::formatv("setmaxnreg {0}: must be a multiple of 8 in "
                                "[24, 256]",
                                n));
    bool inc = inst.aux2;
    if (inc && n < wg.registers)
      return fail(&lead, &inst,
                  llvm::formatv("setmaxnreg.inc {0} below the warpgroup's "
                                "current {1} registers",
                                n, wg.registers));
    if (!inc && n > wg.registers)
      return fail(&lead, &inst,
                  llvm::formatv("setmaxnreg.dec {0} above the warpgroup's "
                                "current {1} registers",
                                n, wg.registers));
    unsigned pool = launchRegisters * threads;
    unsigned used = 0;
    for (const Warpgroup &g : wgs)
      used += g.registers * 128;
    if (inc && used - wg.registers * 128 + n * 128 > pool) {
      // Wait for other warpgroups to release registers.
      wg.waitingRegs = true;
      wg.regRequest = n;
      for (unsigned i = first; i < first + count; ++i)
        thr[i].wait = Wait::Registers;
      return llvm::Error::success();
    }
    wg.registers = n;
    release();
    // A release may let a waiting warpgroup proceed.
    for (unsigned g = 0; g < wgs.size(); ++g) {
      Warpgroup &w = wgs[g];
      if (!w.waitingRegs)
        continue;
      unsigned used2 = 0;
      for (const Warpgroup &x : wgs)
        used2 += x.registers * 128;
      if (used2 - w.registers * 128 + w.regRequest * 128 <= pool) {
        w.waitingRegs = false;
        w.registers = w.regRequest;
        for (unsigned i = g * 128; i < g * 128 + 128; ++i)
          if (thr[i].state != State::Exited) {
            thr[i].state = State::Run;
            thr[i].wait = Wait::None;
            ++thr[i].pc;
          }
      }
    }
    return llvm::Error::success();
  }
  default:
    if (auto e = tcFire(inst, first))
      return e;
    release();
    return llvm::Error::success();
  }
}

//===----------------------------------------------------------------------===//
// tcgen05 (PTX ISA 9.7.16 "TensorCore 5th Generation Family Instructions")
//
// Tensor memory is 128 lanes x 512 columns of 32-bit cells per CTA; an
// address is lane << 16 | column (9.7.16.1.1). Warp w of a warpgroup may
// access lanes [32 (w%4), 32 (w%4) + 32) only (9.7.16.8.1).
//===----------------------------------------------------------------------===//

llvm::Error Emulator::tmemCheck(unsigned lane, unsigned col, unsigned cols,
                                const Thread *t, const Instruction *inst) {
  if (lane >= 128)
    return fail(t, inst,
                llvm::formatv("tensor-memory lane {0} out of range", lane));
  for (auto [c0, n] : tmemAllocs)
    if (col >= c0 && col + cols <= c0 + n)
      return llvm::Error::success();
  return fail(t, inst,
              llvm::formatv("tensor-memory columns [{0}, {1}) outside every "
                            "allocation",
                            col, col + cols));
}

// An access to tensor memory an issued, not yet completed tcgen05.mma writes
// (its accumulator) or, for a write, reads (its A operand).
llvm::Error Emulator::tmemPendingMma(unsigned laneLo, unsigned laneHi,
                                     unsigned colLo, unsigned colHi, bool write,
                                     const Thread *t, const Instruction *inst) {
  for (unsigned id : pendingOps) {
    const AsyncOp &op = ops[id];
    if (op.done || op.kind != AsyncKind::TcMma)
      continue;
    unsigned dl = op.tmemD >> 16, dc = op.tmemD & 0xffff;
    // Layout F (M = 64) uses lanes 32q + align + [0, 16); layout D
    // (M = 128) all 128.
    auto overlapsD = [&](unsigned lane) {
      if (op.m == 128)
        return true;
      return (lane % 32) / 16 == (dl % 32) / 16;
    };
    bool hitD = false;
    for (unsigned l = laneLo; l < laneHi && !hitD; ++l)
      hitD = overlapsD(l);
    if (hitD && colLo < dc + op.n && dc < colHi)
      return fail(t, inst,
                  llvm::formatv("tensor memory (lanes [{0}, {1}), columns "
                                "[{2}, {3})) accessed while the tcgen05.mma "
                                "issued at line {4} that writes it is in "
                                "flight (wait for its commit)",
                                laneLo, laneHi, colLo, colHi, op.line));
    if (write && op.aFromTmem) {
      unsigned ac = op.tmemA & 0xffff;
      if (colLo < ac + 8 && ac < colHi)
        return fail(t, inst,
                    llvm::formatv("tensor memory columns [{0}, {1}) written "
                                  "while the tcgen05.mma issued at line {2} "
                                  "still reads its A operand there",
                                  colLo, colHi, op.line));
    }
  }
  return llvm::Error::success();
}

// Register <-> tensor-memory maps of tcgen05.ld/st (9.7.16.2.3 "Data Movement
// Shape", the shape figures; decoded as in CUTLASS's SM100_TMEM_LOAD copy
// traits): thread t of the warp, register r, relative to taddr:
//   .16x256b: r = p + 2h + 4j -> lane t/4 + 8h, column 8j + 2(t%4) + p
//   .16x128b: r = h + 2j      -> lane t/4 + 8h, column 4j + t%4
//   .32x32b:  r = j           -> lane t,        column j
static void tmemMap(int shape, unsigned t, unsigned r, unsigned &lane,
                    unsigned &col) {
  if (shape == 1) {
    unsigned p = r % 2, h = (r / 2) % 2, j = r / 4;
    lane = t / 4 + 8 * h;
    col = 8 * j + 2 * (t % 4) + p;
  } else if (shape == 2) {
    unsigned h = r % 2, j = r / 2;
    lane = t / 4 + 8 * h;
    col = 4 * j + t % 4;
  } else {
    lane = t;
    col = r;
  }
}

llvm::Error Emulator::tcFire(const Instruction &inst, unsigned first) {
  Thread &lead = thr[first];
  const auto &o = inst.operands;
  switch (inst.op) {
  case OpTcAlloc: {
    // tcgen05.alloc [dst], nCols (9.7.16.7.1): nCols a power of two in
    // [32, 512]; the address is written to shared memory at dst.
    if (relinquished)
      return fail(&lead, &inst,
                  "tcgen05.alloc after tcgen05.relinquish_alloc_permit");
    unsigned n = unsigned(value(lead, o[1]));
    if (n < 32 || n > 512 || (n & (n - 1)))
      return fail(&lead, &inst,
                  llvm::formatv("tcgen05.alloc of {0} columns: must be a "
                                "power of two in [32, 512]",
                                n));
    unsigned col = 0;
    for (auto [c0, m] : tmemAllocs)
      col = std::max(col, c0 + m);
    if (col + n > 512)
      return fail(&lead, &inst,
                  "tcgen05.alloc: tensor memory exhausted (it would block "
                  "forever: nothing else in this CTA frees columns)");
    if (tmemColumns && n > tmemColumns)
      return fail(&lead, &inst,
                  llvm::formatv("tcgen05.alloc of {0} columns, the manifest "
                                "says {1}",
                                n, tmemColumns));
    tmemAllocs.push_back({col, n});
    uint64_t dst = addressOf(lead, o[0]);
    if (auto e = sharedCheck(dst, 4, &lead, &inst, false))
      return e;
    uint32_t addr = col;
    std::memcpy(&smem[dst], &addr, 4);
    for (unsigned i = 0; i < 4; ++i)
      smemInit[dst + i] = 1;
    return llvm::Error::success();
  }
  case OpTcDealloc: {
    unsigned col = unsigned(value(lead, o[0])) & 0xffff;
    unsigned n = unsigned(value(lead, o[1]));
    for (auto it = tmemAllocs.begin(); it != tmemAllocs.end(); ++it)
      if (it->first == col && it->second == n) {
        if (auto e = tmemPendingMma(0, 128, col, col + n, true, &lead, &inst))
          return e;
        tmemAllocs.erase(it);
        return llvm::Error::success();
      }
    return fail(&lead, &inst,
                llvm::formatv("tcgen05.dealloc of columns [{0}, +{1}), which "
                              "is no allocation",
                              col, n));
  }
  case OpTcRelinquish:
    relinquished = true;
    return llvm::Error::success();
  case OpTcWaitLd:
  case OpTcWaitSt:
    // The emulator performs tcgen05.ld/st when they are issued, so their
    // waits have nothing left to wait for.
    return llvm::Error::success();
  case OpTcLd:
  case OpTcSt: {
    bool ld = inst.op == OpTcLd;
    int shape = inst.aux2 & 0xf;
    unsigned rep = unsigned(inst.aux2 >> 4);
    const Operand &regsOp = ld ? o[0] : o[1];
    const Operand &addrOp = ld ? o[1] : o[0];
    unsigned perRep = shape == 1 ? 4 : shape == 2 ? 2 : 1;
    unsigned colsPerRep = shape == 1 ? 8 : shape == 2 ? 4 : 1;
    if (regsOp.elems.size() != perRep * rep)
      return fail(&lead, &inst, "register count does not match the shape");
    auto addrOf = [&](Thread &th) {
      return uint32_t(addrOp.kind == Operand::Addr ? addressOf(th, addrOp)
                                                   : value(th, addrOp));
    };
    uint32_t taddr = addrOf(lead);
    for (unsigned i = first; i < first + 32; ++i) {
      if (addrOf(thr[i]) != taddr)
        return fail(&thr[i], &inst, "taddr differs across the warp");
    }
    unsigned lane0 = taddr >> 16, col0 = taddr & 0xffff;
    unsigned q = (first / 32) % 4;
    unsigned lanes = shape == 3 ? 32 : 16;
    if (lane0 < 32 * q || lane0 + lanes > 32 * q + 32)
      return fail(&lead, &inst,
                  llvm::formatv("warp {0} (warp {1} of its warpgroup) accesses "
                                "tensor-memory lanes [{2}, {3}); it may access "
                                "only [{4}, {5})",
                                first / 32, q, lane0, lane0 + lanes, 32 * q,
                                32 * q + 32));
    unsigned cols = colsPerRep * rep;
    if (auto e = tmemCheck(lane0 + lanes - 1, col0, cols, &lead, &inst))
      return e;
    if (auto e = tmemPendingMma(lane0, lane0 + lanes, col0, col0 + cols, !ld,
                                &lead, &inst))
      return e;
    for (unsigned t = 0; t < 32; ++t) {
      Thread &th = thr[first + t];
      for (unsigned r = 0; r < perRep * rep; ++r) {
        unsigned lane, col;
        tmemMap(shape, t, r % perRep, lane, col);
        col += (r / perRep) * colsPerRep;
        size_t cell = size_t(lane0 + lane) * 512 + col0 + col;
        if (ld) {
          if (!tmemInit[cell])
            return fail(&th, &inst,
                        llvm::formatv("tcgen05.ld of tensor memory lane {0} "
                                      "column {1} that no completed MMA or "
                                      "store wrote",
                                      lane0 + lane, col0 + col));
          reg(th, regsOp.elems[r].reg) = tmem[cell];
        } else {
          tmem[cell] = uint32_t(value(th, regsOp.elems[r]));
          tmemInit[cell] = 1;
        }
      }
    }
    return llvm::Error::success();
  }
  default:
    return fail(&lead, &inst, "instruction decoded but not executed");
  }
}

// tcgen05.mma.cta_group::1.kind::f16 [d], a, b-desc, idesc, enable-input-d
// (9.7.16.10.9): issued by a single thread. The instruction descriptor
// (9.7.16.4.2, Table "Instruction descriptor format for .kind::f16"): bits
// [4,6) D type (1 = f32), [7,10) A type and [10,13) B type (0 f16, 1 bf16),
// 13/14 negate A/B, 15/16 transpose (MN-major) A/B, [17,23) N >> 3,
// [24,29) M >> 4.
llvm::Error Emulator::tcIssueMma(Thread &t, const Instruction &inst) {
  const auto &o = inst.operands;
  AsyncOp op;
  op.kind = AsyncKind::TcMma;
  op.issuer = t.tid;
  op.line = inst.line;
  op.inst = &inst;
  op.tmemD = uint32_t(addressOf(t, o[0]));
  op.aFromTmem = o[1].kind == Operand::Addr;
  if (op.aFromTmem)
    op.tmemA = uint32_t(addressOf(t, o[1]));
  else
    op.descA = value(t, o[1]);
  op.descB = value(t, o[2]);
  op.idesc = uint32_t(value(t, o[3]));
  op.accumulate = value(t, o[4]) != 0;
  uint32_t d = op.idesc;
  InstrDescriptor idd = decodeInstrDescriptor(d);
  unsigned dtype = idd.dType, atype = idd.aType, btype = idd.bType;
  op.n = idd.n;
  op.m = idd.m;
  if (idd.sparse || idd.sparsitySelector)
    return fail(&t, &inst, "sparse tcgen05.mma is not emulated");
  if (idd.saturate || idd.maxShift)
    return fail(&t, &inst,
                "saturate / max-shift fields set in a .kind::f16 "
                "descriptor");
  if (dtype != 1)
    return fail(&t, &inst,
                llvm::formatv("idesc {0:x}: D type {1}; only f32 (1) is "
                              "emulated",
                              d, dtype));
  if (atype > 1 || btype > 1 || atype != btype)
    return fail(&t, &inst,
                llvm::formatv("idesc {0:x}: A/B types {1}/{2}; f16 (0) or "
                              "bf16 (1), equal, are emulated",
                              d, atype, btype));
  if (op.m != 64 && op.m != 128)
    return fail(&t, &inst,
                llvm::formatv("idesc {0:x}: M = {1}; cta_group::1 needs 64 or "
                              "128",
                              d, op.m));
  if (op.n < 8 || op.n > 256 || op.n % 8 || (op.m == 128 && op.n % 16))
    return fail(
        &t, &inst,
        llvm::formatv("idesc {0:x}: N = {1} is no valid shape", d, op.n));
  if (op.aFromTmem && ((d >> 15) & 1))
    return fail(&t, &inst, "A from tensor memory must be K-major (bit 15)");
  unsigned dl = op.tmemD >> 16, dc = op.tmemD & 0xffff;
  if (op.m == 64 && dl != 0 && dl != 16)
    return fail(&t, &inst,
                llvm::formatv("M = 64 accumulator at lane {0}: the lane "
                              "alignment must be 0 or 16 (layout F)",
                              dl));
  if (op.m == 128 && dl != 0)
    return fail(&t, &inst, "M = 128 accumulator must start at lane 0");
  if (auto e = tmemCheck(0, dc, op.n, &t, &inst))
    return e;
  if (op.aFromTmem) {
    unsigned al = op.tmemA >> 16, ac = op.tmemA & 0xffff;
    if (op.m == 64 && al != dl)
      return fail(&t, &inst,
                  llvm::formatv("A in tensor memory at lane alignment {0}, "
                                "D at {1}: layout F needs the same",
                                al, dl));
    if (auto e = tmemCheck(0, ac, 8, &t, &inst))
      return e;
  }
  // The new accumulator must not overwrite an operand an in-flight MMA
  // still reads.
  for (unsigned id : pendingOps) {
    const AsyncOp &x = ops[id];
    if (x.done || x.kind != AsyncKind::TcMma || !x.aFromTmem)
      continue;
    unsigned ac = x.tmemA & 0xffff;
    if (dc < ac + 8 && ac < dc + op.n &&
        (op.m == 128 || (x.tmemA >> 16) % 32 / 16 == dl % 32 / 16))
      return fail(&t, &inst,
                  llvm::formatv("tcgen05.mma writes tensor-memory columns "
                                "[{0}, {1}) that the tcgen05.mma issued at "
                                "line {2} still reads as its A operand",
                                dc, dc + op.n, x.line));
  }
  // Shared bytes read (for the reuse check).
  bool transA = (d >> 15) & 1, transB = (d >> 16) & 1;
  auto extent = [&](uint64_t desc, bool mnMajor, unsigned rows, uint32_t &lo,
                    uint32_t &hi) {
    operandExtent(desc, /*tcgen05=*/true, mnMajor, rows, lo, hi);
  };
  extent(op.descB, transB, op.n, op.lo, op.hi);
  if (!op.aFromTmem)
    extent(op.descA, transA, op.m, op.lo2, op.hi2);
  if (auto e = pendingCopyOverlap(op.lo2, op.hi2, &t, &inst))
    return e;
  if (auto e = pendingCopyOverlap(op.lo, op.hi, &t, &inst))
    return e;
  unsigned id = issueAsync(std::move(op));
  t.tcPending.push_back(id);
  return llvm::Error::success();
}

// Where accumulator row r lives (9.7.16.10.5 "Data Path Layout
// Organization"): M = 128 (layout D) row r in lane r; M = 64 without .ws
// (layout F, half the data path) row r in lane 32 (r/16) + align + r%16,
// align being the accumulator's lane offset (0 or 16). The layout F figure
// is read from the ISA and CUTLASS (tmem_frg, M = 64 atom), not measured on
// hardware: docs/emulator.md.
static unsigned accumulatorLane(unsigned m, unsigned align, unsigned r) {
  if (m == 128)
    return r;
  return 32 * (r / 16) + align + r % 16;
}

llvm::Error Emulator::doTcMma(AsyncOp &op) {
  InstrDescriptor id = decodeInstrDescriptor(op.idesc);
  bool bf16 = id.aType == 1;
  bool negA = id.negateA, negB = id.negateB;
  bool transA = id.transposeA, transB = id.transposeB;
  unsigned dl = op.tmemD >> 16, dc = op.tmemD & 0xffff;
  unsigned align = op.m == 64 ? dl : 0;
  std::vector<float> a(size_t(op.m) * 16), b;
  if (op.aFromTmem) {
    // A in tensor memory (the TS form, 9.7.16.10.9): K-major, two 16-bit
    // elements per 32-bit cell, element 2j in the low half of column j
    // (the packing follows CUTLASS's tmem_frg / FMHA, the ISA figure is not
    // textual), rows in the accumulator's lanes.
    unsigned ac = op.tmemA & 0xffff;
    for (unsigned r = 0; r < op.m; ++r)
      for (unsigned kk = 0; kk < 16; ++kk) {
        size_t cell =
            size_t(accumulatorLane(op.m, align, r)) * 512 + ac + kk / 2;
        if (!tmemInit[cell])
          return fail(nullptr, nullptr,
                      llvm::formatv("tcgen05.mma (line {0}) reads its A "
                                    "operand from tensor memory lane {1} "
                                    "column {2}, which nothing wrote",
                                    op.line, cell / 512, cell % 512));
        uint16_t h = uint16_t(kk % 2 ? tmem[cell] >> 16 : tmem[cell] & 0xffff);
        a[r * 16 + kk] = bf16 ? bf16ToFloat(h) : f16ToFloat(h);
      }
  } else if (auto e = readSmemMatrix(op.descA, transA, op.m, 16, bf16, a,
                                     op.line, true)) {
    return e;
  }
  if (auto e =
          readSmemMatrix(op.descB, transB, op.n, 16, bf16, b, op.line, true))
    return e;
  double sign = (negA ? -1.0 : 1.0) * (negB ? -1.0 : 1.0);
  std::vector<double> prod;
  productK16(a, op.m, b, op.n, prod);
  for (unsigned r = 0; r < op.m; ++r) {
    unsigned lane = accumulatorLane(op.m, align, r);
    for (unsigned c = 0; c < op.n; ++c) {
      double dot = prod[size_t(r) * op.n + c];
      size_t cell = size_t(lane) * 512 + dc + c;
      if (op.accumulate && !tmemInit[cell])
        return fail(nullptr, nullptr,
                    llvm::formatv("tcgen05.mma (line {0}) accumulates into "
                                  "tensor memory lane {1} column {2}, which "
                                  "nothing wrote (enable-input-d on the "
                                  "first MMA?)",
                                  op.line, lane, dc + c));
      double acc = op.accumulate ? double(bitsToFloat(tmem[cell])) : 0.0;
      tmem[cell] = floatToBits(float(acc + sign * dot));
      tmemInit[cell] = 1;
    }
  }
  ++stats.mmas;
  return llvm::Error::success();
}

llvm::Error Emulator::step(Thread &t, unsigned budget) {
  const unsigned ncode = unsigned(k.code.size());
  while (budget-- && t.state == State::Run) {
    if (t.pc >= ncode)
      return fail(&t, nullptr, "ran past the end of the function");
    const Instruction &in = k.code[t.pc];
    ++stats.instructions;
    if (in.guard >= 0) {
      bool p = reg(t, in.guard) != 0;
      if (p == in.guardNegated) {
        ++t.pc;
        continue;
      }
    }
    if (isCollective(in.op)) {
      if (auto e = arriveCollective(t, in))
        return e;
      return llvm::Error::success();
    }
    if (in.op != OpBra && in.op != OpRet && !wgs[t.tid / 128].unretired.empty())
      if (auto e = checkLocked(t, in))
        return e;
    const auto &o = in.operands;
    unsigned bits = in.aux;
    Ty ty = Ty(in.type);
    // Inlined: as a call (GCC keeps it out of a function this size) it took
    // a sixth of an emulation's time.
    auto v = [&](size_t i) __attribute__((always_inline)) {
      return value(t, o[i]);
    };
    auto f = [&](size_t i) { return bitsToFloat(uint32_t(v(i))); };
    auto setf = [&](float x) { reg(t, o[0].reg) = floatToBits(x); };
    auto sv = [&](size_t i) { return sext(v(i), bits); };
    auto uvv = [&](size_t i) { return v(i) & mask(bits); };
    switch (in.op) {
    case OpAdd:
      setReg(t, o[0], v(1) + v(2), bits);
      break;
    case OpSub:
      setReg(t, o[0], v(1) - v(2), bits);
      break;
    case OpMulLo:
      setReg(t, o[0], v(1) * v(2), bits);
      break;
    case OpMulHi: {
      // mul.hi: the upper half of the 2n-bit product.
      if (bits == 32) {
        uint64_t r = ty == TyS ? uint64_t(sv(1) * sv(2)) : uvv(1) * uvv(2);
        setReg(t, o[0], r >> 32, 32);
      } else {
        unsigned __int128 r = ty == TyS
                                  ? (unsigned __int128)((__int128)sv(1) * sv(2))
                                  : (unsigned __int128)uvv(1) * uvv(2);
        setReg(t, o[0], uint64_t(r >> 64), 64);
      }
      break;
    }
    case OpMulWide: {
      uint64_t r = ty == TyS ? uint64_t(sv(1) * sv(2)) : uvv(1) * uvv(2);
      setReg(t, o[0], r, 2 * bits);
      break;
    }
    case OpMad:
      setReg(t, o[0], v(1) * v(2) + v(3), bits);
      break;
    case OpDiv: {
      if (uvv(2) == 0)
        return fail(&t, &in, "integer division by zero");
      uint64_t r = ty == TyS ? uint64_t(sv(1) / sv(2)) : uvv(1) / uvv(2);
      setReg(t, o[0], r, bits);
      break;
    }
    case OpAnd:
      setReg(t, o[0], v(1) & v(2), bits);
      break;
    case OpOr:
      setReg(t, o[0], v(1) | v(2), bits);
      break;
    case OpXor:
      setReg(t, o[0], v(1) ^ v(2), bits);
      break;
    case OpNot:
      setReg(t, o[0], ty == TyPred ? !v(1) : ~v(1), bits);
      break;
    case OpNeg:
      setReg(t, o[0], 0 - v(1), bits);
      break;
    case OpShl: {
      // Shift amounts above the width give 0 (9.7.8.7 "shl").
      uint64_t s = v(2) & 0xffffffff;
      setReg(t, o[0], s >= bits ? 0 : v(1) << s, bits);
      break;
    }
    case OpShr: {
      uint64_t s = v(2) & 0xffffffff;
      if (ty == TyS)
        setReg(t, o[0], uint64_t(sv(1) >> std::min<uint64_t>(s, bits - 1)),
               bits);
      else
        setReg(t, o[0], s >= bits ? 0 : uvv(1) >> s, bits);
      break;
    }
    case OpMin:
    case OpMax: {
      bool lt = ty == TyS ? sv(1) < sv(2) : uvv(1) < uvv(2);
      bool takeFirst = in.op == OpMin ? lt : !lt;
      setReg(t, o[0], takeFirst ? v(1) : v(2), bits);
      break;
    }
    case OpMinRelu: {
      int64_t m = std::min(sv(1), sv(2));
      setReg(t, o[0], uint64_t(std::max<int64_t>(m, 0)), 32);
      break;
    }
    case OpBfe: {
      // bfe d, a, pos, len (9.7.1.14): len bits from pos, zero- (.u) or
      // sign-extended (.s); pos and len are taken modulo 256.
      // Bits past a's width read as its sign bit (.s) or 0 (.u); with .s
      // the field's top bit fills the result above it.
      uint64_t a = uvv(1);
      unsigned pos = unsigned(v(2) & 0xff), len = unsigned(v(3) & 0xff);
      uint64_t r = 0;
      if (len && ty != TyS) {
        r = (pos >= bits ? 0 : a >> pos) & mask(std::min(len, bits));
      } else if (len) {
        int64_t field = sext(a, bits);
        field = pos >= 64 ? (field < 0 ? -1 : 0) : field >> pos;
        if (len < 64)
          field = int64_t(uint64_t(field) << (64 - len)) >> (64 - len);
        r = uint64_t(field);
      }
      setReg(t, o[0], r, bits);
      break;
    }
    // IEEE binary32 with round-to-nearest-even (.rn): the host's float
    // arithmetic, built with -ffp-contract=off.
    case OpFAdd:
      setf(f(1) + f(2));
      break;
    case OpFSub:
      setf(f(1) - f(2));
      break;
    case OpFMul:
      setf(f(1) * f(2));
      break;
    case OpFFma:
      setf(std::fmaf(f(1), f(2), f(3)));
      break;
    case OpFMax:
      // max.f32: NaN inputs are ignored (9.7.3.11).
      setf(std::fmax(f(1), f(2)));
      break;
    case OpFMin:
      setf(std::fmin(f(1), f(2)));
      break;
    case OpFNeg:
      reg(t, o[0].reg) = (v(1) ^ 0x80000000u) & 0xffffffffu;
      break;
    case OpEx2: {
      // ex2.approx.f32 (9.7.3.21): max relative error 2^-22 over the range;
      // the emulator computes exp2 exactly rounded, which is within it.
      float x = f(1);
      float r = std::exp2(x);
      if (in.aux2 && std::fpclassify(r) == FP_SUBNORMAL)
        r = std::copysign(0.0f, r);
      setf(r);
      break;
    }
    case OpLg2: {
      // lg2.approx.f32 (9.7.3.20): max absolute error 2^-22 (relative
      // 2^-22 away from 1); the emulator computes log2 exactly rounded.
      // With .ftz a subnormal input is a signed zero (log2 of it is -inf).
      float x = f(1);
      if (in.aux2 && std::fpclassify(x) == FP_SUBNORMAL)
        x = std::copysign(0.0f, x);
      setf(std::log2(x));
      break;
    }
    case OpSin:
    case OpCos: {
      // sin/cos.approx.f32: max absolute error 2^-20.9 in [-pi, pi] (PTX ISA
      // 9.7.3.18-19); the emulator computes them exactly rounded, which is
      // within it. With .ftz a subnormal input is a signed zero.
      float x = f(1);
      if (in.aux2 && std::fpclassify(x) == FP_SUBNORMAL)
        x = std::copysign(0.0f, x);
      setf(in.op == OpSin ? std::sin(x) : std::cos(x));
      break;
    }
    case OpRcp:
      setf(1.0f / f(1));
      break;
    case OpFMul2:
    case OpFFma2:
    case OpFAdd2:
    case OpFSub2: {
      // .f32x2 (9.7.3: packed f32 pairs in a .b64, element-wise).
      uint64_t a = v(1), b = v(2), c = in.op == OpFFma2 ? v(3) : 0;
      uint64_t r = 0;
      for (unsigned h = 0; h < 2; ++h) {
        float x = bitsToFloat(uint32_t(a >> (32 * h)));
        float y = bitsToFloat(uint32_t(b >> (32 * h)));
        float z = bitsToFloat(uint32_t(c >> (32 * h)));
        float q = in.op == OpFMul2   ? x * y
                  : in.op == OpFAdd2 ? x + y
                  : in.op == OpFSub2 ? x - y
                                     : std::fmaf(x, y, z);
        r |= uint64_t(floatToBits(q)) << (32 * h);
      }
      reg(t, o[0].reg) = r;
      break;
    }
    case OpSelp:
      setReg(t, o[0], v(3) ? v(1) : v(2), bits);
      break;
    case OpSetp: {
      bool r;
      int c = in.aux2;
      if (ty == TyF) {
        float a = f(1), b = f(2);
        bool cmp[6] = {a == b, a != b && !std::isnan(a) && !std::isnan(b),
                       a<b, a <= b, a> b, a >= b};
        r = cmp[c];
      } else if (ty == TyS) {
        int64_t a = sv(1), b = sv(2);
        bool cmp[6] = {a == b, a != b, a<b, a <= b, a> b, a >= b};
        r = cmp[c];
      } else {
        uint64_t a = uvv(1), b = uvv(2);
        bool cmp[6] = {a == b, a != b, a<b, a <= b, a> b, a >= b};
        r = cmp[c];
      }
      reg(t, o[0].reg) = r;
      break;
    }
    case OpMov:
      // mov with a vector operand packs or unpacks, element 0 in the least
      // significant bits (9.7.9.1 "mov").
      if (o[0].kind == Operand::Vec) {
        unsigned n = unsigned(o[0].elems.size()), eb = bits / n;
        uint64_t x = v(1);
        for (unsigned e = 0; e < n; ++e)
          if (o[0].elems[e].kind == Operand::Reg)
            reg(t, o[0].elems[e].reg) = (x >> (e * eb)) & mask(eb);
      } else if (o[1].kind == Operand::Vec) {
        unsigned n = unsigned(o[1].elems.size()), eb = bits / n;
        uint64_t x = 0;
        for (unsigned e = 0; e < n; ++e)
          x |= (value(t, o[1].elems[e]) & mask(eb)) << (e * eb);
        setReg(t, o[0], x, bits);
      } else {
        setReg(t, o[0], ty == TyPred ? (v(1) != 0) : v(1), bits);
      }
      break;
    case OpCvtInt: {
      unsigned srcBits = unsigned(in.aux2 & 0xff);
      bool srcSigned = in.aux2 & 0x100;
      uint64_t s = v(1) & mask(srcBits);
      if (srcSigned)
        s = uint64_t(sext(s, srcBits));
      setReg(t, o[0], s, bits);
      break;
    }
    case OpCvtF32From16: {
      uint16_t h = uint16_t(v(1));
      setf(in.aux2 ? bf16ToFloat(h) : f16ToFloat(h));
      break;
    }
    case OpCvtPack16: {
      // cvt.rn.{bf16x2,f16x2}.f32 d, a, b: a into the upper half, b into the
      // lower (9.7.9.21 "cvt").
      float a = f(1), b = f(2);
      uint16_t hi = in.aux2 ? floatToBf16(a) : floatToF16(a);
      uint16_t lo = in.aux2 ? floatToBf16(b) : floatToF16(b);
      reg(t, o[0].reg) = (uint64_t(hi) << 16) | lo;
      break;
    }
    case OpCvt16FromF32: {
      float a = f(1);
      reg(t, o[0].reg) = in.aux2 ? floatToBf16(a) : floatToF16(a);
      break;
    }
    case OpCvtF32FromInt: {
      uint32_t x = uint32_t(v(1));
      setf(in.aux2 ? float(int32_t(x)) : float(x));
      break;
    }
    case OpCvtRni:
      setf(std::nearbyint(f(1)));
      break;
    case OpCvtaParam: {
      uint64_t a = v(1);
      if (a < kParamSpace || a >= kParamSpace + k.paramBytes)
        return fail(&t, &in, "cvta.param of an address outside the params");
      reg(t, o[0].reg) = a - kParamSpace + kParamGeneric;
      break;
    }
    case OpCvtaShared:
      reg(t, o[0].reg) = (v(1) & 0xffffffffu) + kSharedGeneric;
      break;
    case OpCvtaToShared: {
      uint64_t a = v(1);
      if (a < kSharedGeneric || a >= kSharedGeneric + (1ull << 32))
        return fail(&t, &in,
                    llvm::formatv("cvta.to.shared of {0:x}, which is no "
                                  "generic shared-memory address",
                                  a));
      reg(t, o[0].reg) = a - kSharedGeneric;
      break;
    }
    case OpLd:
    case OpSt: {
      unsigned space = unsigned(in.aux2 & 0xf), vec = unsigned(in.aux2 >> 4);
      unsigned esize = bits / 8;
      bool isLd = in.op == OpLd;
      const Operand &addrOp = isLd ? o[1] : o[0];
      const Operand &data = isLd ? o[0] : o[1];
      uint64_t addr = addressOf(t, addrOp);
      // A power of two: 1, 2 or 4 (decode takes .v2 and .v4) 1- to 8-byte
      // elements.
      unsigned total = esize * vec;
      if (addr & (std::min(total, 16u) - 1))
        return fail(
            &t, &in,
            llvm::formatv("misaligned {0}-byte access at {1:x}", total, addr));
      uint8_t buf[64];
      if (!isLd)
        for (unsigned e = 0; e < vec; ++e) {
          uint64_t x = data.kind == Operand::Vec ? value(t, data.elems[e])
                                                 : value(t, data);
          std::memcpy(buf + e * esize, &x, esize);
        }
      if (space == 0) {
        if (addr < kParamSpace || addr + total > kParamSpace + k.paramBytes)
          return fail(&t, &in, "ld.param outside the parameters");
        std::memcpy(buf, &params[addr - kParamSpace], total);
      } else if (space == 1) {
        if (auto e = globalAccess(addr, total, !isLd, buf, t, in))
          return e;
      } else {
        if (auto e = sharedCheck(addr, total, &t, &in, isLd))
          return e;
        if (isLd) {
          if (auto e = pendingCopyOverlap(uint32_t(addr),
                                          uint32_t(addr + total), &t, &in))
            return e;
          std::memcpy(buf, &smem[addr], total);
        } else {
          if (auto e = writeConflict(uint32_t(addr), uint32_t(addr + total),
                                     "st.shared", in.line))
            return e;
          std::memcpy(&smem[addr], buf, total);
          for (unsigned i = 0; i < total; ++i)
            smemInit[addr + i] = 1;
          markGenericWrite(t, uint32_t(addr), total);
        }
      }
      if (isLd)
        for (unsigned e = 0; e < vec; ++e) {
          uint64_t x = 0;
          std::memcpy(&x, buf + e * esize, esize);
          const Operand &d = data.kind == Operand::Vec ? data.elems[e] : data;
          if (d.kind == Operand::Reg)
            reg(t, d.reg) = x; // zero-extended into a wider register
        }
      break;
    }
    case OpAtomAdd: {
      uint64_t addr = addressOf(t, o[1]);
      if (addr % 4)
        return fail(&t, &in,
                    llvm::formatv("misaligned atom.global at {0:x}", addr));
      uint32_t old = 0;
      if (auto e = globalAccess(addr, 4, false,
                                reinterpret_cast<uint8_t *>(&old), t, in))
        return e;
      uint32_t sum = old + uint32_t(value(t, o[2]));
      if (auto e = globalAccess(addr, 4, true,
                                reinterpret_cast<uint8_t *>(&sum), t, in))
        return e;
      reg(t, o[0].reg) = old;
      break;
    }
    case OpBra:
      t.pc = unsigned(o[0].imm);
      continue;
    case OpRet: {
      // The bulk stores a thread issued read shared memory, which lives only
      // as long as the CTA: the thread must wait for them before it exits.
      if (!t.bulkOpen.empty() || !t.bulkGroups.empty())
        return fail(&t, &in,
                    "exits with bulk (TMA) stores not waited for "
                    "(cp.async.bulk.wait_group)");
      t.state = State::Exited;
      --liveInWarp[t.tid / 32];
      --liveInGroup[t.tid / 128];
      // A warp or warpgroup waiting at a collective may now be complete.
      unsigned w = t.tid / 32, g = t.tid / 128;
      if (arrivedWarp[w] && arrivedWarp[w] == liveInWarp[w]) {
        for (unsigned i = w * 32; i < w * 32 + 32; ++i)
          if (thr[i].state == State::Blocked &&
              thr[i].wait == Wait::Collective) {
            --arrivedWarp[w];
            if (auto e = arriveCollective(thr[i], k.code[thr[i].pc]))
              return e;
            break;
          }
      }
      if (arrivedGroup[g] && arrivedGroup[g] == liveInGroup[g]) {
        for (unsigned i = g * 128; i < g * 128 + 128; ++i)
          if (thr[i].state == State::Blocked &&
              thr[i].wait == Wait::Collective) {
            --arrivedGroup[g];
            if (auto e = arriveCollective(thr[i], k.code[thr[i].pc]))
              return e;
            break;
          }
      }
      return llvm::Error::success();
    }
    case OpMbarInit: {
      uint64_t a = addressOf(t, o[0]);
      if (auto e = sharedCheck(a, 8, &t, &in, false))
        return e;
      if (a % 8)
        return fail(&t, &in, "mbarrier not 8-byte aligned");
      uint32_t n = uint32_t(v(1));
      if (n == 0 || n >= (1u << 20))
        return fail(&t, &in, "mbarrier count must be in [1, 2^20 - 1]");
      MBarrier b;
      b.expected = b.pending = n;
      mbars[uint32_t(a)] = b;
      for (unsigned i = 0; i < 8; ++i)
        smemInit[a + i] = 1;
      break;
    }
    case OpMbarArrive: {
      uint64_t a = addressOf(t, o[1]);
      MBarrier *b = mbar(uint32_t(a));
      uint64_t token = b ? (uint64_t(b->phase) << 32) : 0;
      // The optional count operand arrives that many times at once.
      uint32_t count = o.size() > 2 ? uint32_t(v(2)) : 1;
      if (count == 0)
        return fail(&t, &in, "mbarrier.arrive with count 0");
      if (auto e = mbarArrive(uint32_t(a), in.line, count))
        return e;
      if (o[0].kind == Operand::Reg)
        reg(t, o[0].reg) = token;
      break;
    }
    case OpMbarExpectTx: {
      uint64_t a = addressOf(t, o[0]);
      MBarrier *b = mbar(uint32_t(a));
      if (!b)
        return fail(&t, &in, "expect_tx on no initialized mbarrier");
      b->tx += int64_t(v(1) & 0xffffffff);
      break;
    }
    case OpMbarTryWait: {
      uint64_t a = addressOf(t, o[1]);
      MBarrier *b = mbar(uint32_t(a));
      if (!b)
        return fail(&t, &in,
                    llvm::formatv("try_wait on {0:x}, which is no initialized "
                                  "mbarrier",
                                  a));
      uint32_t parity = uint32_t(v(2)) & 1;
      bool complete = (b->phase & 1) != parity;
      if (!complete) {
        // The thread would spin on try_wait; it sleeps until the phase
        // changes (a failed try_wait has no other effect).
        t.state = State::Blocked;
        t.wait = Wait::MBarrier;
        t.waitAddr = uint32_t(a);
        t.waitParity = parity;
        return llvm::Error::success();
      }
      reg(t, o[0].reg) = 1;
      break;
    }
    case OpFenceNop:
      break;
    case OpTcFence:
      // tcgen05.fence::{before,after}_thread_sync order tcgen05 operations
      // around thread synchronization (9.7.16.11.1); the emulator's
      // tcgen05.ld/st act at issue and its MMAs at completion, which the
      // mbarrier protocol already orders.
      break;
    case OpTcMma:
      if (auto e = tcIssueMma(t, in))
        return e;
      break;
    case OpTcCommit: {
      AsyncOp op = asyncOp(AsyncKind::TcCommit, t, in);
      op.mbar = uint32_t(addressOf(t, o[0]));
      if (!mbar(op.mbar))
        return fail(&t, &in, "tcgen05.commit to no initialized mbarrier");
      // The commit tracks every earlier tcgen05 operation of the thread that
      // has not completed, not only those since its previous commit.
      llvm::erase_if(t.tcPending, [&](unsigned id) { return ops[id].done; });
      op.deps = t.tcPending;
      issueAsync(std::move(op));
      break;
    }
    case OpFenceProxyAsync:
      for (auto [a, n] : t.genericSmemWrites)
        for (uint32_t i = 0; i < n; ++i)
          smemDirty[a + i] = 0;
      t.genericSmemWrites.clear();
      break;
    case OpTmaLoad:
    case OpTmaStore:
    case OpTmaPrefetch: {
      const Operand &ref = in.op == OpTmaLoad ? o[1] : o[0];
      int m = tensorMapAt(value(t, ref.elems[0]));
      if (m < 0)
        return fail(&t, &in,
                    "the tensor-map operand is no tensormap parameter's "
                    "generic address");
      if (ref.elems.size() - 1 != tmaps[m].rank)
        return fail(&t, &in, "coordinate count differs from the map's rank");
      if (in.op == OpTmaPrefetch)
        break;
      AsyncOp op = asyncOp(
          in.op == OpTmaLoad ? AsyncKind::TmaLoad : AsyncKind::TmaStore, t, in);
      op.tmap = m;
      for (unsigned c = 0; c < tmaps[m].rank; ++c)
        op.coords[c] = int32_t(value(t, ref.elems[c + 1]));
      if (in.op == OpTmaLoad) {
        op.smem = uint32_t(addressOf(t, o[0]));
        op.mbar = uint32_t(addressOf(t, o[2]));
        if (!mbar(op.mbar))
          return fail(&t, &in, "the copy's mbarrier is not initialized");
      } else {
        op.smem = uint32_t(addressOf(t, o[1]));
        uint32_t bytes = tmaps[m].esize;
        for (unsigned d = 0; d < tmaps[m].rank; ++d)
          bytes *= tmaps[m].box[d];
        op.lo = op.smem;
        op.hi = op.smem + bytes;
        if (op.smem % 128)
          return fail(&t, &in, "TMA store source not 128-byte aligned");
      }
      unsigned id = issueAsync(std::move(op));
      if (in.op == OpTmaStore)
        t.bulkOpen.push_back(id);
      break;
    }
    case OpCpAsync: {
      // cp.async.{ca,cg}.shared.global [dst], [src], cp-size{, src-size}:
      // bytes past src-size are zeros.
      AsyncOp op = asyncOp(AsyncKind::CpAsync, t, in);
      op.smem = uint32_t(addressOf(t, o[0]));
      uint64_t src = addressOf(t, o[1]);
      op.size = unsigned(v(2));
      unsigned srcSize = o.size() > 3 ? unsigned(v(3)) : op.size;
      if ((op.size != 4 && op.size != 8 && op.size != 16) || srcSize > op.size)
        return fail(&t, &in,
                    "cp.async copies 4, 8 or 16 bytes, src-size at "
                    "most that");
      if (op.smem % op.size || src % op.size)
        return fail(&t, &in, "misaligned cp.async");
      if (auto e = sharedCheck(op.smem, op.size, &t, &in, false))
        return e;
      if (auto e =
              writeConflict(op.smem, op.smem + op.size, "cp.async", in.line))
        return e;
      if (srcSize)
        if (auto e = globalAccess(src, srcSize, false, op.bytes, t, in))
          return e;
      unsigned id = issueAsync(std::move(op));
      t.cpAsyncPending.push_back(id);
      break;
    }
    case OpCpAsyncArrive: {
      AsyncOp op = asyncOp(AsyncKind::CpAsyncArrive, t, in);
      op.mbar = uint32_t(addressOf(t, o[0]));
      MBarrier *b = mbar(op.mbar);
      if (!b)
        return fail(&t, &in,
                    "cp.async.mbarrier.arrive on no initialized mbarrier");
      // Without .noinc the pending count rises by one first, so that the
      // asynchronous arrival leaves the phase's count as it was.
      if (!in.aux2)
        ++b->pending;
      op.deps = std::move(t.cpAsyncPending);
      t.cpAsyncPending.clear();
      issueAsync(std::move(op));
      break;
    }
    case OpBulkCommit:
      // cp.async.bulk.commit_group (9.7.9.25.6.1): the thread's prior bulk
      // operations form a bulk async-group.
      t.bulkGroups.push_back(std::move(t.bulkOpen));
      t.bulkOpen.clear();
      break;
    case OpBulkWait: {
      // cp.async.bulk.wait_group{.read} N: at most N of the thread's most
      // recent bulk groups pending (for .read: their sources read).
      unsigned keep = unsigned(v(0));
      while (t.bulkGroups.size() > keep) {
        for (unsigned id : t.bulkGroups.front())
          if (auto e = completeOne(id))
            return e;
        t.bulkGroups.pop_front();
      }
      break;
    }
    default:
      return fail(&t, &in, "instruction decoded but not executed");
    }
    ++t.pc;
  }
  return llvm::Error::success();
}

llvm::Error Emulator::deadlock(const char *title) {
  std::string s = std::string(title) + "\n";
  for (unsigned w = 0; w < threads / 32; ++w) {
    // Describe each distinct wait point of the warp.
    std::map<std::string, std::vector<unsigned>> points;
    for (unsigned i = w * 32; i < w * 32 + 32; ++i) {
      const Thread &t = thr[i];
      if (t.state == State::Exited)
        continue;
      std::string what;
      switch (t.wait) {
      case Wait::MBarrier: {
        auto it = mbars.find(t.waitAddr);
        const MBarrier &b = it->second;
        what = llvm::formatv("waits for parity {0} of mbarrier {1:x} (phase "
                             "{2}, {3} of {4} arrivals pending, tx {5})",
                             t.waitParity, t.waitAddr, b.phase, b.pending,
                             b.expected, b.tx)
                   .str();
        break;
      }
      case Wait::NamedBarrier:
        what = llvm::formatv("waits at named barrier {0} ({1} threads "
                             "arrived)",
                             t.barrier, namedBarriers[t.barrier].arrived)
                   .str();
        break;
      case Wait::Collective:
        what = "waits for the rest of its warp or warpgroup";
        break;
      case Wait::Registers:
        what = "waits for registers (setmaxnreg.inc)";
        break;
      default:
        what = "runnable";
      }
      points[where(t) + "\n      " + what].push_back(i % 32);
    }
    if (points.empty())
      continue;
    for (auto &[p, lanes] : points)
      s += llvm::formatv("  warp {0} ({1} lanes) at {2}\n", w, lanes.size(), p)
               .str();
  }
  return fail(nullptr, nullptr, s);
}

llvm::Error Emulator::runCta(unsigned c) {
  cta = c;
  nregs = k.registers.size();
  regs.assign(size_t(threads) * nregs, 0);
  locked.assign(size_t(threads) * nregs, 0);
  thr.assign(threads, Thread());
  for (unsigned i = 0; i < threads; ++i)
    thr[i].tid = i;
  size_t shared = size_t(opt.sharedBase) + smemBytes;
  smem.assign(shared, 0);
  smemInit.assign(shared, 0);
  smemDirty.assign(shared, 0);
  mbars.clear();
  namedBarriers.clear();
  arrivedWarp.assign(threads / 32, 0);
  liveInWarp.assign(threads / 32, 32);
  arrivedGroup.assign(threads / 128, 0);
  liveInGroup.assign(threads / 128, 128);
  ops.clear();
  pendingOps.clear();
  wgs.assign(threads / 128, Warpgroup());
  for (Warpgroup &g : wgs)
    g.registers = launchRegisters;
  tmem.assign(128 * 512, 0);
  tmemInit.assign(128 * 512, 0);
  tmemAllocs.clear();
  relinquished = false;
  unsigned nwarps = threads / 32;
  std::vector<unsigned> runnable;
  uint64_t limit = stats.instructions + opt.maxInstructions;
  while (true) {
    runnable.clear();
    bool anyLive = false;
    for (unsigned w = 0; w < nwarps; ++w) {
      bool run = false;
      for (unsigned i = w * 32; i < w * 32 + 32; ++i) {
        anyLive |= thr[i].state != State::Exited;
        run |= thr[i].state == State::Run;
      }
      if (run)
        runnable.push_back(w);
    }
    if (!anyLive)
      break;
    if (runnable.empty()) {
      if (pendingOps.empty())
        return deadlock("deadlock: every live warp waits");
      // Nothing can run: some asynchronous operation completes.
      unsigned id = pendingOps[rng() % pendingOps.size()];
      if (auto e = completeOne(id))
        return e;
      continue;
    }
    unsigned w = runnable[rng() % runnable.size()];
    unsigned budget = 1 + unsigned(rng() % opt.quantum);
    for (unsigned i = w * 32; i < w * 32 + 32; ++i)
      if (thr[i].state == State::Run)
        if (auto e = step(thr[i], budget))
          return e;
    if (auto e = completeSome())
      return e;
    if (stats.instructions > limit)
      return deadlock("instruction limit reached (a livelock?); the warps "
                      "are at:");
  }
  // Everything the CTA issued must have completed before it exits: bulk
  // stores the CTA did not wait for would still be in flight.
  for (unsigned id : pendingOps)
    if (!ops[id].done && ops[id].kind != AsyncKind::TmaStore)
      return fail(nullptr, nullptr,
                  llvm::formatv("the CTA exited with the asynchronous "
                                "operation issued at line {0} in flight",
                                ops[id].line));
  while (!pendingOps.empty())
    if (auto e = completeOne(pendingOps.front()))
      return e;
  // PTX ISA 9.7.16.7.1: all tensor memory must be deallocated before the
  // kernel exits.
  for (auto [c0, n] : tmemAllocs)
    return fail(nullptr, nullptr,
                llvm::formatv("the CTA exited with tensor-memory columns "
                              "[{0}, +{1}) still allocated",
                              c0, n));
  if (stats.finalRegisters.empty())
    for (const Warpgroup &g : wgs)
      stats.finalRegisters.push_back(g.registers);
  ++stats.ctas;
  return llvm::Error::success();
}

llvm::Error Emulator::run() {
  if (auto e = decodeAll())
    return e;
  if (auto e = buildParams())
    return e;
  for (unsigned c = 0; c < opt.grid; ++c)
    if (auto e = runCta(c))
      return e;
  return llvm::Error::success();
}

} // namespace

llvm::Error
blockattn::emu::emulate(Kernel &kernel, const llvm::json::Object &manifest,
                        std::map<std::string, Tensor> &tensors,
                        const std::map<std::string, double> &scalars,
                        const Options &options, Statistics &stats) {
  Emulator e(kernel, manifest, tensors, scalars, options, stats);
  return e.run();
}

SmemDescriptor blockattn::emu::decodeSmemDescriptor(uint64_t desc,
                                                    bool tcgen05) {
  SmemDescriptor d;
  d.start = uint32_t(desc & 0x3fff) << 4;
  d.lbo = uint32_t((desc >> 16) & 0x3fff) << 4;
  d.sbo = uint32_t((desc >> 32) & 0x3fff) << 4;
  d.baseOffset = unsigned((desc >> 49) & 7);
  if (tcgen05) {
    d.version = unsigned((desc >> 46) & 7);
    d.lboAbsolute = (desc >> 52) & 1;
    // 0 none, 1 128B with 32B atomicity, 2 128B, 4 64B, 6 32B.
    switch (unsigned((desc >> 61) & 7)) {
    case 1:
      d.swizzleBytes = 128;
      d.swizzle32BAtom = true;
      break;
    case 2:
      d.swizzleBytes = 128;
      break;
    case 4:
      d.swizzleBytes = 64;
      break;
    case 6:
      d.swizzleBytes = 32;
      break;
    default:
      d.swizzleBytes = 0;
    }
  } else {
    // 0 none, 1 128B, 2 64B, 3 32B.
    static const unsigned bytes[4] = {0, 128, 64, 32};
    d.swizzleBytes = bytes[(desc >> 62) & 3];
  }
  return d;
}

uint32_t blockattn::emu::smemElementAddress(const SmemDescriptor &d,
                                            bool mnMajor, unsigned mn,
                                            unsigned k) {
  const unsigned es = 2;
  const unsigned w = swizzleWidth(d);
  uint32_t a = mnMajor
                   ? d.start + (mn % (w / es)) * es + (mn / (w / es)) * d.lbo +
                         (k % 8) * w + (k / 8) * d.sbo
                   : d.start + (mn % 8) * w + (mn / 8) * d.sbo + k * es;
  return swizzleAddress(a, w);
}

InstrDescriptor blockattn::emu::decodeInstrDescriptor(uint32_t v) {
  InstrDescriptor d;
  d.sparsitySelector = v & 3;
  d.sparse = (v >> 2) & 1;
  d.saturate = (v >> 3) & 1;
  d.dType = (v >> 4) & 3;
  d.aType = (v >> 7) & 7;
  d.bType = (v >> 10) & 7;
  d.negateA = (v >> 13) & 1;
  d.negateB = (v >> 14) & 1;
  d.transposeA = (v >> 15) & 1;
  d.transposeB = (v >> 16) & 1;
  d.n = ((v >> 17) & 0x3f) << 3;
  d.m = ((v >> 24) & 0x1f) << 4;
  d.maxShift = (v >> 30) & 3;
  return d;
}
