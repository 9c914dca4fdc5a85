#include "nn/safetensors.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <tuple>
#include <vector>

#include "nn/safetensors_format.h"
#include "tensor/support/files.h"
#include "tensor/support/json.h"
#include "tensor/support/mapped_file.h"

namespace gradformer {

namespace fs = std::filesystem;
using namespace safetensors_format;

namespace {

// Dtypes other libraries write that the reader widens, exactly, to one of its own: half and
// bfloat16 weights (many published checkpoints) to float32, smaller integers (a model's mask
// buffers, token-type tables) to int64.
struct WidenedDType {
  const char* name;
  uint64_t itemsize;
  DType dtype;
};
constexpr WidenedDType kWidened[] = {{"F16", 2, DType::Float32}, {"BF16", 2, DType::Float32}, {"U8", 1, DType::Int64},
                                     {"I8", 1, DType::Int64},    {"I16", 2, DType::Int64},    {"U16", 2, DType::Int64},
                                     {"I32", 4, DType::Int64},   {"U32", 4, DType::Int64}};

// IEEE half precision (1 sign, 5 exponent, 10 fraction bits) -> float, exactly.
float half_to_float(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1, exponent = (h >> 10) & 0x1f, fraction = h & 0x3ff;
  float magnitude;
  if (exponent == 0)
    magnitude = std::ldexp(static_cast<float>(fraction), -24);  // zero and subnormals: fraction * 2^-24
  else if (exponent == 31)
    magnitude = fraction == 0 ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
  else
    magnitude = std::ldexp(static_cast<float>(fraction | 0x400), static_cast<int>(exponent) - 25);
  return sign ? -magnitude : magnitude;
}

// The stored little-endian elements of `name` (see kWidened) widened into `out`'s `count` elements.
void widen(const std::string& name, const char* bytes, size_t count, std::byte* out) {
  auto load = [&](size_t i, size_t size) {  // element i as an unsigned little-endian integer
    uint64_t v = 0;
    for (size_t b = 0; b < size; ++b)
      v |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i * size + b])) << (8 * b);
    return v;
  };
  if (name == "F16" || name == "BF16") {
    auto* f = reinterpret_cast<float*>(out);
    for (size_t i = 0; i < count; ++i) {
      const auto bits = static_cast<uint16_t>(load(i, 2));
      if (name == "F16") {
        f[i] = half_to_float(bits);
      } else {
        const uint32_t wide = static_cast<uint32_t>(bits) << 16;  // bfloat16 is float32's upper half
        std::memcpy(&f[i], &wide, sizeof(float));
      }
    }
    return;
  }
  auto* v = reinterpret_cast<int64_t*>(out);
  const size_t size = name == "U8" || name == "I8" ? 1 : name == "I16" || name == "U16" ? 2 : 4;
  const bool is_signed = name[0] == 'I';
  for (size_t i = 0; i < count; ++i) {
    const uint64_t u = load(i, size);
    const uint64_t sign_bit = uint64_t{1} << (8 * size - 1);
    v[i] = is_signed && (u & sign_bit) ? static_cast<int64_t>(u) - static_cast<int64_t>(sign_bit << 1)
                                       : static_cast<int64_t>(u);
  }
}

}  // namespace

// ---- reading --------------------------------------------------------------------------------

namespace {

struct Entry {
  std::string name;
  DType dtype;  // the tensor's
  Shape shape;
  uint64_t begin, end;
  std::string widened_from;  // the stored dtype's name when it is one kWidened widens, else empty
};

class Reader {
 public:
  explicit Reader(const fs::path& path) : where_("load_safetensors: " + path.string() + ": ") {}

  [[noreturn]] void fail(const std::string& what) const { throw CheckpointError(where_ + what); }
  [[noreturn]] void fail(const std::string& tensor, const std::string& what) const {
    throw CheckpointError(where_ + "tensor " + quoted(tensor) + ": " + what);
  }

  std::map<std::string, std::string> read_metadata(const Json& value) const {
    if (!value.is_object()) fail(message("__metadata__ must be an object of strings, got ", kind_name(value.kind())));
    std::map<std::string, std::string> out;
    for (const auto& [key, entry] : value.members()) {
      if (!entry.is_string())
        fail(message("__metadata__ must map strings to strings, but ", quoted(key), " is ", kind_name(entry.kind())));
      if (!out.emplace(key, entry.text()).second) fail("duplicate name in __metadata__: " + quoted(key));
    }
    return out;
  }

  Entry read_entry(const std::string& name, const Json& value) const {
    if (!value.is_object()) fail(name, message("must be an object, got ", kind_name(value.kind())));
    const Json *dtype = nullptr, *shape = nullptr, *offsets = nullptr;
    for (const auto& [key, field] : value.members()) {
      const Json** slot = key == "dtype"          ? &dtype
                          : key == "shape"        ? &shape
                          : key == "data_offsets" ? &offsets
                                                  : nullptr;
      if (!slot) fail(name, "unknown key " + quoted(key) + " (expected dtype, shape, data_offsets)");
      if (*slot) fail(name, "duplicate key " + quoted(key));
      *slot = &field;
    }
    if (!dtype || !shape || !offsets)
      fail(name, std::string("missing ") + (!dtype ? "dtype" : !shape ? "shape" : "data_offsets"));

    Entry entry{name, DType::Float32, {}, 0, 0, ""};
    if (!dtype->is_string()) fail(name, "dtype must be a string");
    uint64_t item = 0;
    if (const auto known = dtype_from_name(dtype->text())) {
      entry.dtype = *known, item = itemsize(*known);
    } else {
      for (const WidenedDType& w : kWidened)
        if (dtype->text() == w.name) entry.dtype = w.dtype, item = w.itemsize, entry.widened_from = w.name;
      if (item == 0)
        fail(name, "unsupported dtype " + quoted(dtype->text()) +
                       " (gradformer reads F32, F64, I64 and BOOL; F16 and BF16 as float32; U8, I8, I16, U16, I32 "
                       "and U32 as int64)");
    }

    if (!shape->is_array()) fail(name, "shape must be an array of integers");
    if (shape->items().size() > static_cast<size_t>(kMaxRank))
      fail(name, message("shape has ", shape->items().size(), " dimensions, more than the ", kMaxRank, " supported"));
    // Every size product a tensor of this shape leads to (its element count, its strides) must fit
    // in int64_t, even when a 0 makes the count itself 0: [2^62, 4, 0] and [0, 2^62, 4] are refused.
    for (const Json& d : shape->items()) {
      if (!d.is_integer() || d.value() < 0) fail(name, "shape must hold non-negative integers");
      entry.shape.push_back(d.value());
    }
    int64_t nonzero_product = 1;
    bool empty = false;
    for (const int64_t d : entry.shape)
      if (d == 0)
        empty = true;
      else if (__builtin_mul_overflow(nonzero_product, d, &nonzero_product))
        fail(name, message("shape ", entry.shape, ": its sizes multiply past 64 bits"));
    const uint64_t numel = empty ? 0 : static_cast<uint64_t>(nonzero_product);

    if (!offsets->is_array() || offsets->items().size() != 2 || !offsets->items()[0].is_integer() ||
        !offsets->items()[1].is_integer() || offsets->items()[0].value() < 0 || offsets->items()[1].value() < 0)
      fail(name, "data_offsets must be [begin, end], two non-negative integers");
    entry.begin = static_cast<uint64_t>(offsets->items()[0].value());
    entry.end = static_cast<uint64_t>(offsets->items()[1].value());
    if (entry.end < entry.begin)
      fail(name, message("data_offsets [", entry.begin, ", ", entry.end, "] end before they begin"));
    if (numel > std::numeric_limits<uint64_t>::max() / item || entry.end - entry.begin != numel * item)
      fail(name,
           message("size mismatch: data_offsets [", entry.begin, ", ", entry.end, "] hold ", entry.end - entry.begin,
                   " bytes, but dtype ", dtype->text(), " and shape ", entry.shape, " need ", numel * item));
    return entry;
  }

  /// The tensors must tile [0, data_size) exactly: sorted by offset, each begins where the previous ended.
  void check_layout(std::vector<Entry>& entries, uint64_t data_size) const {
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
      return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
    });
    uint64_t covered = 0;
    const Entry* previous = nullptr;
    for (const Entry& e : entries) {
      if (e.begin < covered)
        fail(e.name, message("data_offsets [", e.begin, ", ", e.end, "] overlap those of tensor ",
                             quoted(previous->name), " [", previous->begin, ", ", previous->end, "]"));
      if (e.begin > covered)
        fail(e.name, message("gap: data_offsets begin at ", e.begin, " but the previous tensor ends at ", covered,
                             " (bytes [", covered, ", ", e.begin, ") belong to no tensor)"));
      covered = e.end;
      previous = &e;
    }
    if (covered > data_size)
      fail(message("truncated: the tensors need ", covered, " bytes of data, but the file holds ", data_size,
                   " after the header"));
    if (covered < data_size)
      fail(message("trailing bytes: the tensors cover ", covered, " bytes of data, but the file holds ", data_size,
                   " after the header"));
  }

 private:
  std::string where_;
};

}  // namespace

// The header as read and checked, and the open file its tensors are still in.
struct SafetensorsReader::State {
  explicit State(const fs::path& path) : reader(path), path(path) {}
  Reader reader;
  fs::path path;
  std::ifstream in;
  uint64_t file_size = 0;   // when the header was read
  uint64_t data_start = 0;  // 8 + the header's length
  std::map<std::string, std::string> metadata;
  std::map<std::string, Entry> entries;
  std::once_flag mapping_tried;
  std::shared_ptr<MappedFile> mapping;  // the file mapped on the first view(); null if it cannot be

  const Entry& entry(const std::string& name) const {  // CheckpointError for a name the file lacks
    const auto found = entries.find(name);
    if (found == entries.end()) reader.fail(name, "no such tensor in the file");
    return found->second;
  }
};

SafetensorsReader::SafetensorsReader(const fs::path& path) : state_(std::make_shared<State>(path)) {
  const Reader& reader = state_->reader;
  std::ifstream& in = state_->in;
  std::error_code error;
  const uint64_t file_size = fs::file_size(path, error);
  if (error) reader.fail("cannot read the file: " + error.message());
  state_->file_size = file_size;
  errno = 0;
  in.open(path, std::ios::binary);
  if (!in) reader.fail("cannot open the file" + system_reason());
  if (file_size < 8)
    reader.fail(
        message("file too short: ", file_size, " bytes, but a safetensors file starts with an 8-byte header length"));
  unsigned char length[8];
  in.read(reinterpret_cast<char*>(length), 8);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | length[i];
  // A file of some other kind (a TSV, a PyTorch .pt, text) reads as an absurd length: say what it
  // is instead. A safetensors header is JSON, so the byte after the length is always '{'.
  if (file_size > 8 && in.peek() != '{')
    reader.fail(
        message("not a safetensors file: it should start with an 8-byte header length and then '{', but byte 9 is ",
                in.peek() >= 32 && in.peek() < 127 ? message("'", static_cast<char>(in.peek()), "'")
                                                   : message("0x", std::hex, in.peek())));
  if (n < 2) reader.fail(message("header length ", n, " is below the minimum of 2 (\"{}\")"));
  if (n > kMaxSafetensorsHeader)
    reader.fail(message("header length ", n, " exceeds the limit of ", kMaxSafetensorsHeader, " bytes"));
  if (n > file_size - 8)
    reader.fail(message("header length ", n, " exceeds the ", file_size - 8,
                        " bytes after the length field (truncated file?)"));
  state_->data_start = 8 + n;
  read_header(n, file_size);
}

void SafetensorsReader::read_header(uint64_t n, uint64_t file_size) {
  const Reader& reader = state_->reader;
  std::string text(n, '\0');
  state_->in.read(text.data(), static_cast<std::streamsize>(n));
  if (static_cast<uint64_t>(state_->in.gcount()) != n) reader.fail("cannot read the header" + system_reason());
  Json header;
  try {
    // A header's arrays are shapes (at most kMaxRank sizes) and data_offsets (2): anything longer
    // is refused while parsing, before a hostile 100 MB shape becomes gigabytes of parsed values.
    header = Json::parse(text, static_cast<size_t>(kMaxRank) + 1);  // + 1: a rank-9 shape gets the rank message
  } catch (const JsonError& e) {
    reader.fail(std::string("the header is not valid UTF-8 JSON: ") + e.what());
  }
  if (!header.is_object()) reader.fail("the header must be a JSON object");
  std::vector<Entry> entries;
  std::set<std::string> names;
  for (const auto& [name, value] : header.members()) {
    if (!names.insert(name).second) reader.fail("duplicate name " + quoted(name));
    if (name == "__metadata__")
      state_->metadata = reader.read_metadata(value);
    else
      entries.push_back(reader.read_entry(name, value));
  }
  reader.check_layout(entries, file_size - 8 - n);
  for (Entry& e : entries) state_->entries.emplace(e.name, e);
}

const std::map<std::string, std::string>& SafetensorsReader::metadata() const { return state_->metadata; }

std::vector<ParameterSpec> SafetensorsReader::tensor_specs() const {
  std::vector<ParameterSpec> specs;
  for (const auto& [name, e] : state_->entries) specs.push_back({name, e.shape, e.dtype});
  return specs;
}

Tensor SafetensorsReader::read(const std::string& name) const {
  const Entry& e = state_->entry(name);
  Tensor t = Tensor::empty(e.shape, e.dtype);
  read_into(name, t);
  return t;
}

Tensor SafetensorsReader::view(const std::string& name) const {
  const Entry& e = state_->entry(name);
  // Only bytes that are the tensor's elements as they are: not a widened dtype, not BOOL (whose
  // bytes are checked as they are read), not on a big-endian machine (the file is little-endian).
  if (!e.widened_from.empty() || e.dtype == DType::Bool || std::endian::native != std::endian::little) return {};
  std::call_once(state_->mapping_tried, [&] {
    state_->mapping = MappedFile::map(state_->path);
    // A file that changed size since its header was read is read (and refused) by read_into.
    if (state_->mapping && state_->mapping->size() != state_->file_size) state_->mapping = nullptr;
  });
  const uint64_t at = state_->data_start + e.begin;
  if (!state_->mapping || at % itemsize(e.dtype) != 0) return {};
  auto storage = Storage::borrow(state_->mapping->data() + at, e.end - e.begin, state_->mapping);
  return Tensor::from_storage(std::move(storage), e.shape, e.dtype);
}

void SafetensorsReader::read_into(const std::string& name, const Tensor& destination) const {
  const Reader& reader = state_->reader;
  const Entry& e = state_->entry(name);
  if (destination.shape() != e.shape || destination.dtype() != e.dtype || !destination.is_contiguous())
    reader.fail(name, message("is ", e.shape, " ", e.dtype, " in the file; it cannot be read into a ",
                              destination.is_contiguous() ? "" : "non-contiguous ", destination.shape(), " ",
                              destination.dtype(), " tensor"));
  const size_t bytes = e.end - e.begin;
  std::vector<char> stored(e.widened_from.empty() ? 0 : bytes);
  char* element0 = reinterpret_cast<char*>(destination.storage()->data()) +
                   destination.offset() * static_cast<int64_t>(itemsize(e.dtype));
  char* target = e.widened_from.empty() ? element0 : stored.data();
  state_->in.clear();
  state_->in.seekg(static_cast<std::streamoff>(state_->data_start + e.begin));
  state_->in.read(target, static_cast<std::streamsize>(bytes));
  if (static_cast<size_t>(state_->in.gcount()) != bytes)
    reader.fail(name, "cannot read the data (did the file change?)");
  if (!e.widened_from.empty())
    return widen(e.widened_from, stored.data(), static_cast<size_t>(destination.numel()),
                 reinterpret_cast<std::byte*>(element0));
  swap_to_little_endian(target, static_cast<size_t>(destination.numel()), itemsize(e.dtype));
  if (e.dtype == DType::Bool)  // any other byte in a C++ bool is undefined behaviour
    for (size_t i = 0; i < bytes; ++i)
      if (static_cast<unsigned char>(target[i]) > 1)
        reader.fail(name, message("BOOL element ", i, " is byte ",
                                  static_cast<int>(static_cast<unsigned char>(target[i])), ", not 0 or 1"));
}

SafetensorsFile load_safetensors(const fs::path& path) {
  const SafetensorsReader reader(path);
  SafetensorsFile file{{}, reader.metadata()};
  for (const ParameterSpec& spec : reader.tensor_specs()) file.tensors.emplace(spec.name, reader.read(spec.name));
  return file;
}

}  // namespace gradformer
