//===- cutlass_oracle.cpp - descriptors as CUTLASS/CuTe builds them -------===//
//
// An independent oracle for lib/Conversion/WarpSpecToNVVM/Descriptors.cpp,
// compiled at test time by test/Conversion/WarpSpecToNVVM/cutlass-oracle.test
// against the headers of the `nvidia-cutlass` wheel (CUTLASS 4.2,
// cutlass_library/source/include) and CCCL (libcu++, which CUTLASS's numeric
// types include), with the host C++ compiler only: no CUDA compiler, no GPU.
//
// Nothing here encodes a bit by hand. Every value comes out of CUTLASS's own
// code, driven the way CUTLASS's GEMM collectives drive it:
//
//  * Shared-memory layouts: the 128-byte swizzle atoms
//    GMMA::Layout_{K,MN}_SW128_Atom<T> (cute/atom/mma_traits_sm90_gmma.hpp),
//    tiled with tile_to_shape and the mode order the SM90 collective uses
//    (Step<_1,_2> for K-major, Step<_2,_1> for MN-major:
//    cutlass/gemm/collective/sm90_mma_tma_gmma_ss_warpspecialized.hpp,
//    SmemLayoutA/B), or with UMMA::tile_to_mma_shape and the same orders for
//    SM100 (cutlass/gemm/collective/sm100_mma_warpspecialized.hpp).
//  * wgmma descriptors (cute::GmmaDescriptor, cute/arch/mma_sm90_desc.hpp):
//    a TiledMMA of SM90_64xNx16_F32{BF16BF16,F16F16}_SS
//    (cute/arch/mma_sm90_gmma.hpp); partition_A/B + make_fragment_A/B give the
//    descriptor tensor (MakeTensor<GMMA::smem_desc>, make_gmma_desc and
//    GMMA::DescriptorIterator in cute/atom/mma_traits_sm90_gmma.hpp), whose
//    (_, _, k_block) entries are exactly what the collective's mainloop
//    passes to cute::gemm for each k-block.
//  * tcgen05 shared-memory descriptors (cute::UMMA::SmemDescriptor,
//    cute/arch/mma_sm100_desc.hpp): the same with
//    SM100_MMA_F16BF16_SS<..., 64, N, major_a, major_b>
//    (cute/arch/mma_sm100_umma.hpp); make_umma_desc and UMMA::DescriptorIterator
//    in cute/atom/mma_traits_sm100.hpp.
//  * tcgen05 instruction descriptors (cute::UMMA::InstrDescriptor,
//    mma_sm100_desc.hpp): MMA_Traits<SM100_MMA_F16BF16_SS<...>>::idesc_
//    (= UMMA::make_instr_desc<...>), turned into the 64-bit "idescE" by
//    UMMA::make_runtime_instr_desc<>(idesc_) exactly as mma_unpack does
//    (cute/atom/mma_traits_sm100.hpp). That container carries the descriptor
//    in its upper 32 bits; SM100_MMA_F16BF16_SS::fma hands `idescE >> 32` to
//    tcgen05.mma (cute/arch/mma_sm100_umma.hpp), so the 32-bit value printed
//    here is `idescE >> 32`.
//  * The 128-byte swizzle: byte address of element (r, c) of the swizzled
//    K-major tile, through CuTe's swizzle_ptr (Swizzle<3,4,3>).
//
// The output lines have the labels and formats of blockattn-descriptor-test
// (and of Inputs/cutlass_oracle_ours.cpp, which prints the same lines from
// our encoders), so the test compares them line by line.
//
//===----------------------------------------------------------------------===//

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

// CuTe reads a shared-memory address with the NVVM intrinsic
// __cvta_generic_to_shared (cast_smem_ptr_to_uint, cute/arch/util.hpp); on the
// host it prints an error and returns 0. Here a shared-memory "pointer" is
// just the shared-window address itself (it is never dereferenced), so the
// host stand-in is the identity, and make_gmma_desc / make_umma_desc see the
// start addresses the lowering uses (0x400, 0x8400, 0x1000, 0x9000).
#define CUTE_CVTA_GENERIC_TO_SHARED_ACTIVATED 1
inline std::size_t __cvta_generic_to_shared(void const *ptr) {
  return reinterpret_cast<std::size_t>(ptr);
}

#include <cute/tensor.hpp>
#include <cute/atom/mma_atom.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>
#include <cute/atom/mma_traits_sm100.hpp>

using namespace cute;

namespace {

int failures = 0;

template <class T> T *smemAt(std::uintptr_t address) {
  return reinterpret_cast<T *>(address);
}

void print64(char const *label, std::uint64_t value) {
  std::printf("%s = 0x%016llx\n", label,
              static_cast<unsigned long long>(value));
}

//===--------------------------------------------------------------------===//
// Hopper: wgmma shared-memory descriptors.
//===--------------------------------------------------------------------===//

// The wgmma atom for 64 x N x 16 with bf16 operands.
template <int N, GMMA::Major A, GMMA::Major B> struct Sm90Atom;
template <GMMA::Major A, GMMA::Major B> struct Sm90Atom<64, A, B> {
  using type = SM90_64x64x16_F32BF16BF16_SS<A, B>;
};
template <GMMA::Major A, GMMA::Major B> struct Sm90Atom<128, A, B> {
  using type = SM90_64x128x16_F32BF16BF16_SS<A, B>;
};
template <GMMA::Major A, GMMA::Major B> struct Sm90Atom<32, A, B> {
  using type = SM90_64x32x16_F32BF16BF16_SS<A, B>;
};
template <GMMA::Major A, GMMA::Major B> struct Sm90Atom<96, A, B> {
  using type = SM90_64x96x16_F32BF16BF16_SS<A, B>;
};

// The smem layout of a (MN, K) operand tile as the SM90 collective builds it:
// the 128-byte swizzle atom where the contiguous extent is a multiple of 64
// elements, else the 64-byte one (ss_smem_selector's order,
// cutlass/gemm/collective/builders/sm90_common.inl).
template <GMMA::Major Major, int MN, int K> auto sm90SmemLayout() {
  if constexpr (Major == GMMA::Major::K) {
    if constexpr (K % 64 == 0)
      return tile_to_shape(GMMA::Layout_K_SW128_Atom<bfloat16_t>{},
                           Shape<Int<MN>, Int<K>>{}, Step<_1, _2>{});
    else
      return tile_to_shape(GMMA::Layout_K_SW64_Atom<bfloat16_t>{},
                           Shape<Int<MN>, Int<K>>{}, Step<_1, _2>{});
  } else {
    if constexpr (MN % 64 == 0)
      return tile_to_shape(GMMA::Layout_MN_SW128_Atom<bfloat16_t>{},
                           Shape<Int<MN>, Int<K>>{}, Step<_2, _1>{});
    else
      return tile_to_shape(GMMA::Layout_MN_SW64_Atom<bfloat16_t>{},
                           Shape<Int<MN>, Int<K>>{}, Step<_2, _1>{});
  }
}

// Descriptor of k-block `k` of operand A (M = 64 rows, K columns) at `start`.
template <GMMA::Major Major, int K>
std::uint64_t wgmmaA(std::uintptr_t start, int k) {
  auto mma = make_tiled_mma(
      typename Sm90Atom<64, Major, GMMA::Major::K>::type{});
  Tensor sA = make_tensor(make_smem_ptr(smemAt<bfloat16_t>(start)),
                          sm90SmemLayout<Major, 64, K>());
  auto thr = mma.get_slice(0);
  Tensor tCsA = thr.partition_A(sA); // (MMA, MMA_M, MMA_K)
  Tensor tCrA = thr.make_fragment_A(tCsA);
  static_assert(decltype(size<2>(tCrA))::value == K / 16);
  return tCrA(0, 0, k);
}

// Descriptor of k-block `k` of operand B (N columns, K rows) at `start`.
template <GMMA::Major Major, int N, int K>
std::uint64_t wgmmaB(std::uintptr_t start, int k) {
  auto mma = make_tiled_mma(
      typename Sm90Atom<N, GMMA::Major::K, Major>::type{});
  Tensor sB = make_tensor(make_smem_ptr(smemAt<bfloat16_t>(start)),
                          sm90SmemLayout<Major, N, K>());
  auto thr = mma.get_slice(0);
  Tensor tCsB = thr.partition_B(sB); // (MMA, MMA_N, MMA_K)
  Tensor tCrB = thr.make_fragment_B(tCsB);
  static_assert(decltype(size<2>(tCrB))::value == K / 16);
  return tCrB(0, 0, k);
}

//===--------------------------------------------------------------------===//
// Blackwell: tcgen05 shared-memory descriptors.
//===--------------------------------------------------------------------===//

// The atom for a contiguous extent of `Contiguous` elements (as on sm_90).
template <UMMA::Major Major, int Contiguous = 64> auto ummaAtom() {
  if constexpr (Major == UMMA::Major::K) {
    if constexpr (Contiguous % 64 == 0)
      return UMMA::Layout_K_SW128_Atom<bfloat16_t>{};
    else
      return UMMA::Layout_K_SW64_Atom<bfloat16_t>{};
  } else {
    if constexpr (Contiguous % 64 == 0)
      return UMMA::Layout_MN_SW128_Atom<bfloat16_t>{};
    else
      return UMMA::Layout_MN_SW64_Atom<bfloat16_t>{};
  }
}

template <UMMA::Major Major>
using UmmaOrder =
    conditional_t<Major == UMMA::Major::MN, Step<_2, _1>, Step<_1, _2>>;

// Operand A (M = 64, K) of tcgen05.mma m64nNk16 at `start`, k-block `k`.
template <UMMA::Major Major, int K>
std::uint64_t ummaA(std::uintptr_t start, int k) {
  auto mma = make_tiled_mma(
      SM100_MMA_F16BF16_SS<bfloat16_t, bfloat16_t, float, 64, 64, Major,
                           UMMA::Major::K>{});
  auto shapeA = partition_shape_A(mma, Shape<_64, Int<K>>{});
  auto layoutA = UMMA::tile_to_mma_shape(
      ummaAtom<Major, Major == UMMA::Major::K ? K : 64>(), shapeA,
      UmmaOrder<Major>{});
  Tensor sA = make_tensor(make_smem_ptr(smemAt<bfloat16_t>(start)), layoutA);
  Tensor tCrA = mma.make_fragment_A(sA); // (MMA, MMA_M, MMA_K)
  static_assert(decltype(size<2>(tCrA))::value == K / 16);
  return tCrA(0, 0, k);
}

// Operand B (N, K) of tcgen05.mma m64nNk16 at `start`, k-block `k`.
template <UMMA::Major Major, int N, int K>
std::uint64_t ummaB(std::uintptr_t start, int k) {
  auto mma = make_tiled_mma(
      SM100_MMA_F16BF16_SS<bfloat16_t, bfloat16_t, float, 64, N,
                           UMMA::Major::K, Major>{});
  auto shapeB = partition_shape_B(mma, Shape<Int<N>, Int<K>>{});
  auto layoutB = UMMA::tile_to_mma_shape(
      ummaAtom<Major, Major == UMMA::Major::K ? K : N>(), shapeB,
      UmmaOrder<Major>{});
  Tensor sB = make_tensor(make_smem_ptr(smemAt<bfloat16_t>(start)), layoutB);
  Tensor tCrB = mma.make_fragment_B(sB); // (MMA, MMA_N, MMA_K)
  static_assert(decltype(size<2>(tCrB))::value == K / 16);
  return tCrB(0, 0, k);
}

//===--------------------------------------------------------------------===//
// tcgen05 instruction descriptors.
//===--------------------------------------------------------------------===//

template <class AB, int M, int N, UMMA::Major MajorA, UMMA::Major MajorB>
std::uint32_t idesc() {
  using Atom = SM100_MMA_F16BF16_SS<AB, AB, float, M, N, MajorA, MajorB>;
  MMA_Traits<Atom> traits;
  std::uint64_t idescE = UMMA::make_runtime_instr_desc<>(traits.idesc_);
  if (static_cast<std::uint32_t>(idescE) != 0) {
    std::printf("error: idescE low word is not zero\n");
    ++failures;
  }
  std::uint32_t value = static_cast<std::uint32_t>(idescE >> 32);
  // With A in tensor memory (the TS form, K-major A only), CUTLASS builds the
  // same descriptor.
  if constexpr (MajorA == UMMA::Major::K) {
    using TS = SM100_MMA_F16BF16_TS<AB, AB, float, M, N, MajorA, MajorB>;
    MMA_Traits<TS> ts;
    if (static_cast<std::uint32_t>(UMMA::make_runtime_instr_desc<>(ts.idesc_) >>
                                   32) != value) {
      std::printf("error: TS and SS instruction descriptors differ\n");
      ++failures;
    }
  }
  return value;
}

template <class AB, int M, int N, UMMA::Major MajorA, UMMA::Major MajorB>
void printIdesc(char const *name) {
  std::printf("idesc %s = 0x%08x\n", name, idesc<AB, M, N, MajorA, MajorB>());
}

template <class AB> void printIdescForms(char const *t) {
  constexpr auto K = UMMA::Major::K;
  constexpr auto MN = UMMA::Major::MN;
  char name[96];
  auto named = [&](char const *gemm, int n) {
    std::snprintf(name, sizeof name, "%s %s n%d", gemm, t, n);
    return name;
  };
  // The Blackwell lowering's GEMMs (M = 64 query / key rows).
  printIdesc<AB, 64, 64, K, K>(named("S=QK^T", 64));
  printIdesc<AB, 64, 64, K, MN>(named("O=PV", 64));
  printIdesc<AB, 64, 128, K, MN>(named("O=PV", 128));
  printIdesc<AB, 64, 64, MN, MN>(named("dV=P^T dO", 64));
  printIdesc<AB, 64, 128, MN, MN>(named("dV=P^T dO", 128));
  printIdesc<AB, 64, 64, MN, MN>(named("dK=dS^T Q", 64));
  printIdesc<AB, 64, 128, MN, MN>(named("dK=dS^T Q", 128));
  printIdesc<AB, 64, 64, K, MN>(named("dQ=dS K", 64));
  printIdesc<AB, 64, 128, K, MN>(named("dQ=dS K", 128));
  // Every major-ness combination of M = 64, N = 64/128.
  auto combo = [&](int n, char const *a, char const *b) {
    std::snprintf(name, sizeof name, "m64 n%d %s A %s B %s", n, t, a, b);
    return name;
  };
  printIdesc<AB, 64, 64, K, K>(combo(64, "K", "K"));
  printIdesc<AB, 64, 64, K, MN>(combo(64, "K", "MN"));
  printIdesc<AB, 64, 64, MN, K>(combo(64, "MN", "K"));
  printIdesc<AB, 64, 64, MN, MN>(combo(64, "MN", "MN"));
  printIdesc<AB, 64, 128, K, K>(combo(128, "K", "K"));
  printIdesc<AB, 64, 128, K, MN>(combo(128, "K", "MN"));
  printIdesc<AB, 64, 128, MN, K>(combo(128, "MN", "K"));
  printIdesc<AB, 64, 128, MN, MN>(combo(128, "MN", "MN"));
  // Reference shape.
  std::snprintf(name, sizeof name, "m128 n64 %s", t);
  printIdesc<AB, 128, 64, K, K>(name);
}

// The descriptors of a head dim D that is not a multiple of 64.
template <int D> void printSw64() {
  constexpr auto GK = GMMA::Major::K;
  constexpr auto GMN = GMMA::Major::MN;
  constexpr auto UK = UMMA::Major::K;
  constexpr auto UMN = UMMA::Major::MN;
  char label[96];
  for (int k = 0; k < D / 16; ++k) {
    std::uint64_t a = wgmmaA<GK, D>(0x400, k);
    if (a != wgmmaB<GK, 64, D>(0x400, k)) {
      std::printf("error: K-major A and B differ (64x%d step %d)\n", D, k);
      ++failures;
    }
    std::snprintf(label, sizeof label, "kmajor 64x%d step %d", D, k);
    print64(label, a);
  }
  for (int k = 0; k < 4; ++k) {
    std::snprintf(label, sizeof label, "mnmajor 64x%d step %d", D, k);
    print64(label, wgmmaB<GMN, D, 64>(0x8400, k));
  }
  for (int k = 0; k < D / 16; ++k) {
    std::uint64_t a = ummaA<UK, D>(0x1000, k);
    if (a != ummaB<UK, 64, D>(0x1000, k)) {
      std::printf("error: tcgen05 K-major A and B differ (64x%d step %d)\n",
                  D, k);
      ++failures;
    }
    std::snprintf(label, sizeof label, "tcgen05 kmajor 64x%d step %d", D, k);
    print64(label, a);
  }
  for (int k = 0; k < 4; ++k) {
    std::snprintf(label, sizeof label, "tcgen05 mnmajor 64x%d step %d", D, k);
    print64(label, ummaB<UMN, D, 64>(0x9000, k));
  }
}

// The instruction descriptors of the GEMMs whose N is the head dim, at 32
// and 96.
template <class AB> void printIdescSw64(char const *t) {
  constexpr auto K = UMMA::Major::K;
  constexpr auto MN = UMMA::Major::MN;
  char name[96];
  auto named = [&](char const *gemm, int n) {
    std::snprintf(name, sizeof name, "%s %s n%d", gemm, t, n);
    return name;
  };
  printIdesc<AB, 64, 32, K, MN>(named("O=PV", 32));
  printIdesc<AB, 64, 96, K, MN>(named("O=PV", 96));
  printIdesc<AB, 64, 32, MN, MN>(named("dV=P^T dO", 32));
  printIdesc<AB, 64, 96, MN, MN>(named("dV=P^T dO", 96));
  printIdesc<AB, 64, 32, K, MN>(named("dQ=dS K", 32));
  printIdesc<AB, 64, 96, K, MN>(named("dQ=dS K", 96));
}

} // namespace

int main() {
  constexpr auto GK = GMMA::Major::K;
  constexpr auto GMN = GMMA::Major::MN;
  char label[96];

  // wgmma: the worked examples, then every k-step of every tile.
  print64("kmajor(0x400)", wgmmaA<GK, 128>(0x400, 0));
  print64("mnmajor(0x8400, 64x128)", wgmmaB<GMN, 128, 64>(0x8400, 0));
  // K-major: Q (operand A, 64 rows x d) and the K tile (operand B of
  // S = Q K^T, 64 rows x d) must give the same descriptors.
  for (int k = 0; k < 4; ++k) {
    std::uint64_t a = wgmmaA<GK, 64>(0x400, k);
    if (a != wgmmaB<GK, 64, 64>(0x400, k)) {
      std::printf("error: K-major A and B differ (64x64 step %d)\n", k);
      ++failures;
    }
    std::snprintf(label, sizeof label, "kmajor 64x64 step %d", k);
    print64(label, a);
  }
  for (int k = 0; k < 8; ++k) {
    std::uint64_t a = wgmmaA<GK, 128>(0x400, k);
    if (a != wgmmaB<GK, 64, 128>(0x400, k)) {
      std::printf("error: K-major A and B differ (64x128 step %d)\n", k);
      ++failures;
    }
    std::snprintf(label, sizeof label, "kmajor 64x128 step %d", k);
    print64(label, a);
  }
  // MN-major: V (operand B of O = P V: 64 kv rows x d columns, d contiguous).
  for (int k = 0; k < 4; ++k) {
    std::snprintf(label, sizeof label, "mnmajor 64x64 step %d", k);
    print64(label, wgmmaB<GMN, 64, 64>(0x8400, k));
  }
  for (int k = 0; k < 4; ++k) {
    std::snprintf(label, sizeof label, "mnmajor 64x128 step %d", k);
    print64(label, wgmmaB<GMN, 128, 64>(0x8400, k));
  }
  // MN-major A (transpose_a: P^T of dV = P^T dO, dS^T of dK = dS^T Q; stored
  // 64 x 64 with M contiguous).
  for (int k = 0; k < 4; ++k) {
    std::snprintf(label, sizeof label, "mnmajor A 64x64 step %d", k);
    print64(label, wgmmaA<GMN, 64>(0x8400, k));
  }

  // The 128-byte swizzle of the 64 x 128 bf16 K-major tile (at a 1024-byte
  // aligned address, here 0): the byte address CuTe's swizzle_ptr gives
  // element (r, c), i.e. the unswizzled offset of the tile layout with
  // Swizzle<3,4,3> applied to it (cute/pointer_swizzle.hpp, apply_swizzle).
  {
    Tensor t = make_tensor(make_smem_ptr(smemAt<bfloat16_t>(0)),
                           sm90SmemLayout<GK, 64, 128>());
    using SwizzlePtr = remove_cvref_t<decltype(t.data())>;
    int const points[][2] = {{0, 0}, {0, 8},  {1, 0}, {1, 8},
                             {7, 56}, {8, 0}, {0, 64}, {9, 72}};
    for (auto const &p : points) {
      auto *address = raw_pointer_cast(SwizzlePtr::apply_swizzle(
          t.data().get() + t.layout()(p[0], p[1])));
      std::printf("swizzle(%d, %d) = %lld\n", p[0], p[1],
                  static_cast<long long>(
                      reinterpret_cast<std::uintptr_t>(address)));
    }
  }

  // tcgen05 shared-memory descriptors.
  constexpr auto UK = UMMA::Major::K;
  constexpr auto UMN = UMMA::Major::MN;
  print64("tcgen05 kmajor(0x1000)", ummaA<UK, 128>(0x1000, 0));
  print64("tcgen05 mnmajor(0x9000, 64x128)", ummaB<UMN, 128, 64>(0x9000, 0));
  for (int k = 0; k < 4; ++k) {
    std::uint64_t a = ummaA<UK, 64>(0x1000, k);
    if (a != ummaB<UK, 64, 64>(0x1000, k)) {
      std::printf("error: tcgen05 K-major A and B differ (64x64 step %d)\n", k);
      ++failures;
    }
    std::snprintf(label, sizeof label, "tcgen05 kmajor 64x64 step %d", k);
    print64(label, a);
  }
  for (int k = 0; k < 8; ++k) {
    std::uint64_t a = ummaA<UK, 128>(0x1000, k);
    if (a != ummaB<UK, 64, 128>(0x1000, k)) {
      std::printf("error: tcgen05 K-major A and B differ (64x128 step %d)\n",
                  k);
      ++failures;
    }
    std::snprintf(label, sizeof label, "tcgen05 kmajor 64x128 step %d", k);
    print64(label, a);
  }
  for (int k = 0; k < 4; ++k) {
    std::snprintf(label, sizeof label, "tcgen05 mnmajor 64x64 step %d", k);
    print64(label, ummaB<UMN, 64, 64>(0x9000, k));
  }
  for (int k = 0; k < 4; ++k) {
    std::snprintf(label, sizeof label, "tcgen05 mnmajor 64x128 step %d", k);
    print64(label, ummaB<UMN, 128, 64>(0x9000, k));
  }
  for (int k = 0; k < 4; ++k) {
    std::snprintf(label, sizeof label, "tcgen05 mnmajor A 64x64 step %d", k);
    print64(label, ummaA<UMN, 64>(0x9000, k));
  }

  // tcgen05 instruction descriptors, D = f32.
  printIdescForms<bfloat16_t>("bf16");
  printIdescForms<half_t>("f16");

  // Head dims 32 and 96: tiles of 32-column chunks with the 64-byte swizzle
  // (Layout_*_SW64_Atom). K-major Q / K tiles (64 rows x d) at every k-step,
  // MN-major V / dO / Q / K tiles (64 kv rows x d columns) at k-steps 0-3.
  printSw64<32>();
  printSw64<96>();
  // The 64-byte swizzle of the 64 x 96 K-major tile at address 0.
  {
    Tensor t = make_tensor(make_smem_ptr(smemAt<bfloat16_t>(0)),
                           sm90SmemLayout<GK, 64, 96>());
    using SwizzlePtr = remove_cvref_t<decltype(t.data())>;
    int const points[][2] = {{0, 0},  {0, 8},  {1, 8},  {2, 0},  {2, 8},
                             {3, 24}, {7, 16}, {8, 0},  {0, 32}, {5, 40},
                             {63, 95}};
    for (auto const &p : points) {
      auto *address = raw_pointer_cast(SwizzlePtr::apply_swizzle(
          t.data().get() + t.layout()(p[0], p[1])));
      std::printf("swizzle64B(%d, %d) = %lld\n", p[0], p[1],
                  static_cast<long long>(
                      reinterpret_cast<std::uintptr_t>(address)));
    }
  }
  printIdescSw64<bfloat16_t>("bf16");
  printIdescSw64<half_t>("f16");
  return failures == 0 ? 0 : 1;
}
