// Fuzzes the JSON reader (tensor/support/json.h), which parses every safetensors header before anything else
// looks at it. Arbitrary bytes must parse or be a JsonError; and what parses must survive a round
// trip: dump() succeeds, the dump parses again to the same value, and dumping that gives the same
// text (dump is canonical), so a header the library writes is always one it can read.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz.h"
#include "tensor/support/json.h"

namespace {

using gradformer::Json;

bool same(const Json& a, const Json& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Json::Kind::Integer:
      return a.value() == b.value();
    case Json::Kind::String:
    case Json::Kind::Literal:
      return a.text() == b.text();
    case Json::Kind::Array:
      if (a.items().size() != b.items().size()) return false;
      for (size_t i = 0; i < a.items().size(); ++i)
        if (!same(a.items()[i], b.items()[i])) return false;
      return true;
    case Json::Kind::Object:
      if (a.members().size() != b.members().size()) return false;
      for (size_t i = 0; i < a.members().size(); ++i)
        if (a.members()[i].first != b.members()[i].first || !same(a.members()[i].second, b.members()[i].second))
          return false;
      return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Json first;
  bool parsed = false;
  gradformer::fuzz::guarded([&] {
    first = Json::parse(text);
    parsed = true;
  });
  if (!parsed) return 0;
  // From here on even a gradformer::Error is a bug: the value came from the parser.
  try {
    const std::string dumped = first.dump();
    const Json second = Json::parse(dumped);
    if (!same(first, second))
      gradformer::fuzz::fail("the dump of a parsed value parses to a different value: " + dumped);
    if (second.dump() != dumped) gradformer::fuzz::fail("dump is not canonical: " + dumped + " then " + second.dump());
  } catch (const std::exception& e) {
    gradformer::fuzz::fail(std::string("the round trip of a parsed value threw: ") + e.what());
  }
  return 0;
}
