//===- Manifest.cpp - the launch manifest as JSON -------------------------===//
//
// convert-warpspec-to-nvvm leaves the manifest on the kernel as the
// `blockattn.manifest` dictionary; this file turns it into the JSON a
// runtime reads. The attribute is checked because a gpu.module can come
// from anywhere (an input file may hold one), not only from the pipeline.
//
//===----------------------------------------------------------------------===//

#include "Detail.h"

#include "blockattn/Compiler/Compiler.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::blockattn;

static llvm::json::Value toJson(Attribute attr) {
  if (auto s = dyn_cast<StringAttr>(attr))
    return s.str();
  // Before IntegerAttr: a BoolAttr is an i1 IntegerAttr, whose getInt() is -1.
  if (auto b = dyn_cast<BoolAttr>(attr))
    return b.getValue();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return i.getInt();
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
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

/// An IntegerAttr that fits in int64_t (BoolAttr is an IntegerAttr too).
static bool isInt64(Attribute attr) {
  auto i = dyn_cast_or_null<IntegerAttr>(attr);
  return i && !isa<BoolAttr>(attr) && !i.getType().isInteger(1) &&
         i.getValue().getSignificantBits() <= 64;
}

static bool isArrayOfDictionaries(Attribute attr) {
  auto array = dyn_cast_or_null<ArrayAttr>(attr);
  return array && llvm::all_of(array, llvm::IsaPred<DictionaryAttr>);
}

FailureOr<llvm::json::Object>
blockattn::detail::convertManifest(DictionaryAttr manifest, Location loc) {
  auto fail = [&](StringRef key, StringRef expected) {
    emitError(loc) << "blockattn.manifest: '" << key << "' must be "
                   << expected;
    return failure();
  };
  for (StringRef key : {"kernel", "chip"})
    if (!isa_and_nonnull<StringAttr>(manifest.get(key)))
      return fail(key, "a string");
  for (StringRef key : {"threads", "smem_bytes"})
    if (!isInt64(manifest.get(key)))
      return fail(key, "a 64-bit integer");
  for (StringRef key : {"params", "partitions"})
    if (!isArrayOfDictionaries(manifest.get(key)))
      return fail(key, "an array of dictionaries");
  for (Attribute partition : cast<ArrayAttr>(manifest.get("partitions"))) {
    auto dict = cast<DictionaryAttr>(partition);
    if (!isa_and_nonnull<StringAttr>(dict.get("name")))
      return fail("partitions", "dictionaries with a string 'name'");
    for (StringRef key : {"warps", "replicas", "registers"})
      if (dict.get(key) && !isInt64(dict.get(key)))
        return fail("partitions", "dictionaries whose 'warps', 'replicas' "
                                  "and 'registers' are 64-bit integers");
  }
  if (Attribute tmem = manifest.get("tmem_columns"); tmem && !isInt64(tmem))
    return fail("tmem_columns", "a 64-bit integer");
  return std::move(*toJson(manifest).getAsObject());
}

std::string CompiledKernel::getManifestJson() const {
  std::string json;
  llvm::raw_string_ostream os(json);
  os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object(manifest)))
     << "\n";
  return json;
}
