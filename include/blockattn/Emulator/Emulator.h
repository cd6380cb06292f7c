//===- Emulator.h - Executing block-attn kernels on the CPU -----*- C++ -*-===//
//
// Runs one compiled kernel (its PTX, parsed by parsePTX, and its launch
// manifest) on every CTA of a grid, every warp of each CTA and every lane of
// each warp, with memory, barriers and asynchronous copies and MMAs as the PTX
// ISA describes them. Warps run in a seeded random order and asynchronous
// operations complete at seeded random later points, so that an ordering the
// code does not enforce shows up. See docs/emulator.md.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_EMULATOR_EMULATOR_H
#define BLOCKATTN_EMULATOR_EMULATOR_H

#include "blockattn/Emulator/PTX.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace blockattn::emu {

/// A tensor in global memory: C-contiguous, raw little-endian bytes.
struct Tensor {
  std::string name;
  std::vector<int64_t> shape;
  unsigned elementBytes = 0;
  std::vector<uint8_t> data;
};

struct Options {
  unsigned grid = 1; ///< CTAs (x)
  uint64_t seed = 1; ///< warp order and asynchronous completion points
  /// Shared-window address where the dynamic shared memory starts (sm_90
  /// reserves the first 1 KiB of a CTA's window; not 1024-aligned values test
  /// the kernels' own alignment).
  unsigned sharedBase = 1024;
  /// Instructions a scheduled lane runs before the scheduler picks again (the
  /// actual count is drawn from 1..quantum).
  unsigned quantum = 64;
  /// Bulk (TMA) stores complete only when their thread waits for them
  /// (cp.async.bulk.wait_group) or the CTA exits, the latest a GPU may let
  /// them read shared memory, instead of at random scheduling points: a
  /// slot or staging buffer overwritten before such a wait is then reported.
  bool holdBulkStores = false;
  uint64_t maxInstructions = 4000000000ull; ///< a livelock guard
};

struct Statistics {
  uint64_t instructions = 0;
  uint64_t tmaLoads = 0, tmaStores = 0, mmas = 0;
  unsigned ctas = 0;
  /// Per warpgroup, the register count it ended with (setmaxnreg).
  std::vector<unsigned> finalRegisters;
};

/// Executes `kernel` as `manifest` describes its launch. `tensors` are the
/// manifest's tensors by name (outputs included: the kernel writes into them);
/// `scalars` its scalar parameters. A deadlock, a race the checks see, an
/// out-of-bounds access or an unknown instruction is an error whose message
/// is the report.
llvm::Error emulate(Kernel &kernel, const llvm::json::Object &manifest,
                    std::map<std::string, Tensor> &tensors,
                    const std::map<std::string, double> &scalars,
                    const Options &options, Statistics &stats);

/// A shared-memory matrix descriptor, decoded (PTX ISA 9.7.15.5.1 for wgmma,
/// 9.7.16.4.1 for tcgen05). Byte values, not the >> 4 encodings.
struct SmemDescriptor {
  uint32_t start = 0, lbo = 0, sbo = 0;
  unsigned baseOffset = 0;
  unsigned swizzleBytes = 0;   ///< 0 (none), 32, 64 or 128
  bool swizzle32BAtom = false; ///< tcgen05's 128B with 32-byte atomicity
  unsigned version = 0;        ///< tcgen05 bits 46-48 (must be 1)
  bool lboAbsolute = false;    ///< tcgen05 bit 52
};
SmemDescriptor decodeSmemDescriptor(uint64_t desc, bool tcgen05);

/// Byte address of element (mn, k) of an operand in the canonical 128-byte
/// swizzled layout (K-major or MN-major), 16-bit elements.
uint32_t smemElementAddress(const SmemDescriptor &d, bool mnMajor, unsigned mn,
                            unsigned k);

/// A tcgen05 .kind::f16 instruction descriptor, decoded (9.7.16.4.2).
struct InstrDescriptor {
  unsigned sparsitySelector = 0, dType = 0, aType = 0, bType = 0;
  bool sparse = false, saturate = false, negateA = false, negateB = false;
  bool transposeA = false, transposeB = false; ///< MN-major
  unsigned m = 0, n = 0, maxShift = 0;
};
InstrDescriptor decodeInstrDescriptor(uint32_t idesc);

/// .npy files (NumPy format 1.0/2.0, C order, little-endian).
llvm::Expected<Tensor> readNpy(llvm::StringRef path, std::string &descr);
llvm::Error writeNpy(llvm::StringRef path, const Tensor &t,
                     llvm::StringRef descr);

} // namespace blockattn::emu

#endif // BLOCKATTN_EMULATOR_EMULATOR_H
