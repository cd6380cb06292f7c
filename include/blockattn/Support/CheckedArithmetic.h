//===- CheckedArithmetic.h - sizes that cannot wrap around ------*- C++ -*-===//
//
// Attributes, pass options and type shapes are user input; where they become
// a size, a count or an offset, the arithmetic must not wrap around (a
// wrapped total passes a budget check and then drives a loop of 2^62
// iterations, or places a buffer in zero bytes). CheckedSize is an int64_t
// that remembers that some step overflowed, so that a computation is written
// once, straight through, and its result is checked once at the end.
//
//===----------------------------------------------------------------------===//

#ifndef BLOCKATTN_SUPPORT_CHECKEDARITHMETIC_H
#define BLOCKATTN_SUPPORT_CHECKEDARITHMETIC_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <cstdint>
#include <optional>

namespace mlir::blockattn {

/// A non-negative int64_t size, or "overflowed" once any step of its
/// computation left [0, INT64_MAX].
class CheckedSize {
public:
  CheckedSize(int64_t value = 0)
      : value(value >= 0 ? std::optional<int64_t>(value) : std::nullopt) {}

  static CheckedSize overflowed() {
    CheckedSize size;
    size.value = std::nullopt;
    return size;
  }

  CheckedSize operator+(CheckedSize other) const {
    if (!value || !other.value)
      return overflowed();
    return fromOptional(llvm::checkedAdd(*value, *other.value));
  }
  CheckedSize operator*(CheckedSize other) const {
    if (!value || !other.value)
      return overflowed();
    return fromOptional(llvm::checkedMul(*value, *other.value));
  }
  CheckedSize &operator+=(CheckedSize other) { return *this = *this + other; }
  CheckedSize &operator*=(CheckedSize other) { return *this = *this * other; }

  /// The next multiple of `alignment` (a positive power of two or not).
  CheckedSize alignTo(int64_t alignment) const {
    if (!value || alignment <= 0)
      return overflowed();
    int64_t rest = *value % alignment;
    return rest == 0 ? *this : *this + CheckedSize(alignment - rest);
  }

  bool hasOverflowed() const { return !value.has_value(); }
  /// The value, or std::nullopt if it overflowed.
  std::optional<int64_t> get() const { return value; }
  /// True if the size is known and at most `limit`.
  bool fitsIn(int64_t limit) const { return value && *value <= limit; }

private:
  static CheckedSize fromOptional(std::optional<int64_t> result) {
    return result ? CheckedSize(*result) : overflowed();
  }

  std::optional<int64_t> value;
};

/// The product of `factors` (a shape's element count), or std::nullopt when
/// a factor is negative or the product overflows int64_t.
inline std::optional<int64_t> checkedProduct(llvm::ArrayRef<int64_t> factors) {
  CheckedSize product = 1;
  for (int64_t factor : factors)
    product *= factor;
  return product.get();
}

} // namespace mlir::blockattn

#endif // BLOCKATTN_SUPPORT_CHECKEDARITHMETIC_H
