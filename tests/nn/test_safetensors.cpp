// safetensors checkpoints and the JSON they use: round trips, the exact bytes, and every malformed file.
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <thread>

#include "autograd/helpers.h"
#include "nn/all.h"
#include "tensor/support/json.h"

using namespace gradformer;
namespace fs = std::filesystem;

namespace {

/// A file name in a directory of this process's own (test processes run in parallel), removed at exit.
fs::path temp_path(const std::string& name) {
  struct TempDir {
    fs::path path = fs::temp_directory_path() / ("gradformer-test-nn-" + std::to_string(std::random_device{}()));
    TempDir() { fs::create_directories(path); }
    ~TempDir() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  };
  static const TempDir dir;
  return dir.path / name;
}

/// The raw bytes of a tensor's elements, row-major: equal bytes mean bitwise equal (NaN included).
std::string bytes_of(const Tensor& t) {
  const Tensor c = t.contiguous();
  const char* p =
      reinterpret_cast<const char*>(c.storage()->data()) + c.offset() * static_cast<int64_t>(itemsize(c.dtype()));
  return std::string(p, static_cast<size_t>(c.numel()) * itemsize(c.dtype()));
}

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_all(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string length_field(uint64_t n) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return out;
}

/// A file from a hand-written header and `data_bytes` zero bytes of data.
std::string file_with(const std::string& header, size_t data_bytes) {
  return length_field(header.size()) + header + std::string(data_bytes, '\0');
}

/// Loads a file made of `bytes`; the CheckpointError's message, or "" if it loaded.
std::string load_error(const std::string& bytes) {
  const fs::path path = temp_path("bad.safetensors");
  write_all(path, bytes);
  return test::error_message<CheckpointError>([&] { load_safetensors(path); });
}

#define CHECK_LOAD_FAILS(bytes, text)            \
  do {                                           \
    const std::string msg_ = load_error(bytes);  \
    INFO("message: " << msg_);                   \
    CHECK(msg_.find(text) != std::string::npos); \
  } while (0)

const std::string F32x2 = R"({"dtype":"F32","shape":[2],"data_offsets":)";

}  // namespace

TEST_CASE("safetensors round trip is bitwise for every dtype, rank 0 and empty tensors") {
  Generator gen(0);
  StateDict tensors;
  tensors["f32"] = randn({2, 3}, gen);
  tensors["f64.special"] = from_vector(std::vector<double>{NAN, -0.0, INFINITY, -INFINITY, 5e-324, 1.0 / 3}, {2, 3});
  tensors["i64"] = from_vector(
      std::vector<int64_t>{std::numeric_limits<int64_t>::min(), -1, 0, std::numeric_limits<int64_t>::max()}, {4});
  tensors["mask"] = from_vector(std::vector<bool>{true, false, false, true, true}, {5, 1});
  tensors["scalar"] = scalar(2.5, DType::Float64);
  tensors["empty"] = zeros({0, 3});
  tensors["view"] = randn({3, 4}, gen).transpose(0, 1);  // not contiguous: written row-major
  const fs::path path = temp_path("all.safetensors");
  save_safetensors(path, tensors);

  const SafetensorsFile loaded = load_safetensors(path);
  CHECK(loaded.metadata.empty());
  REQUIRE(loaded.tensors.size() == tensors.size());
  for (const auto& [name, t] : tensors) {
    INFO(name);
    const Tensor& back = loaded.tensors.at(name);
    CHECK(back.dtype() == t.dtype());
    CHECK(back.shape() == t.shape());
    CHECK(bytes_of(back) == bytes_of(t));
  }
  CHECK(loaded.tensors.at("scalar").dim() == 0);
  const std::string bytes = read_all(path);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
  CHECK(n % 8 == 0);  // the header is padded, so the data starts 8-byte aligned
}

TEST_CASE("safetensors metadata round trip with unicode, escapes and control characters") {
  const std::map<std::string, std::string> metadata{
      {"config", "d_model=4\nheads=2"},
      {"quotes", "say \"hi\" \\ / done"},
      {"unicode", "\xc3\xa9t\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80"},  // été 日本 😀
      {"control", std::string("\x01\t\x1f", 3)},
      {"", "an empty key"},
      {"vocab", "<pad>\n<s>\n</s>\nle\nchat"}};
  const fs::path path = temp_path("meta.safetensors");
  save_safetensors(path, {{"x", ones({1})}}, metadata);
  const SafetensorsFile loaded = load_safetensors(path);
  CHECK(loaded.metadata == metadata);
  CHECK(loaded.tensors.at("x").item() == 1.0);
}

TEST_CASE("safetensors writes exactly the bytes the format specifies") {
  const fs::path path = temp_path("tiny.safetensors");
  save_safetensors(path, {{"b", from_vector(std::vector<int64_t>{7}, Shape{})}, {"a", tensor({1.0, -2.0}, {2})}},
                   {{"k", "v"}});
  // Header: 132 bytes of JSON (tensors in name order, offsets from 0) + 4 spaces = 136 = 0x88.
  const std::string header = R"({"__metadata__":{"k":"v"},"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("b":{"dtype":"I64","shape":[],"data_offsets":[8,16]}})"
                             "    ";
  const std::string expected = std::string("\x88\0\0\0\0\0\0\0", 8) + header +
                               std::string("\x00\x00\x80\x3f", 4) +   // 1.0f, little-endian
                               std::string("\x00\x00\x00\xc0", 4) +   // -2.0f
                               std::string("\x07\0\0\0\0\0\0\0", 8);  // int64 7
  CHECK(read_all(path) == expected);
  CHECK(!fs::exists(path.string() + ".tmp"));  // the temporary file was renamed, not left behind
}

TEST_CASE("safetensors rejects short files and bad header lengths") {
  CHECK_LOAD_FAILS(std::string("\x02\0\0", 3), "file too short: 3 bytes");
  CHECK_LOAD_FAILS(length_field(1) + "{", "header length 1 is below the minimum of 2");
  // a text file was once "header length 8244235440847415412 exceeds the limit"
  CHECK_LOAD_FAILS(
      "le chat noir\tthe black cat\n",
      "not a safetensors file: it should start with an 8-byte header length and then '{', but byte 9 is 'n'");
  CHECK_LOAD_FAILS(length_field(2) + std::string(1, '\x80') + "}", "but byte 9 is 0x80");
  CHECK_LOAD_FAILS(length_field(200'000'000) + "{}", "header length 200000000 exceeds the limit of 100000000 bytes");
  CHECK_LOAD_FAILS(length_field(50) + "{}", "header length 50 exceeds the 2 bytes after the length field");
  const fs::path missing = temp_path("missing.safetensors");
  CHECK_THROWS_MSG(load_safetensors(missing), CheckpointError,
                   "load_safetensors: " + missing.string() + ": cannot read the file");
}

TEST_CASE("safetensors rejects headers that are not UTF-8 JSON objects") {
  CHECK_LOAD_FAILS(file_with(R"({"a":)", 0),
                   "the header is not valid UTF-8 JSON: json: expected a value, found the end of the text");
  CHECK_LOAD_FAILS(file_with(R"({"a":1,})", 0), "json: expected a string as the member name");
  CHECK_LOAD_FAILS(file_with(R"({"a":true})", 0), "unsupported value");
  CHECK_LOAD_FAILS(file_with(R"({"a":1.5})", 0), "unsupported number");
  CHECK_LOAD_FAILS(file_with(R"({} x)", 0), "unexpected characters after the value");
  CHECK_LOAD_FAILS(file_with(R"( {})", 0), "and then '{', but byte 9 is ' '");
  CHECK_LOAD_FAILS(file_with("{\"\xff\":1}", 0), "json: not valid UTF-8 at byte 2");
  CHECK_LOAD_FAILS(file_with("{\"\xc0\x80\":1}", 0), "not valid UTF-8 at byte 2");  // overlong NUL
  CHECK_LOAD_FAILS(file_with("{\"a\":" + std::string(100, '['), 0), "nested deeper than 64 levels");
  CHECK_LOAD_FAILS(file_with(R"({"x":[1]})", 0), "tensor \"x\": must be an object, got array");
}

TEST_CASE("safetensors widens other libraries' half, bfloat16 and small integer tensors exactly") {
  // Element bytes little-endian, values from the formats' definitions: half 0x3C00 = 1, 0xC000 = -2,
  // 0x0001 = 2^-24 (the smallest subnormal), 0x7BFF = 65504 (the largest), 0x7C00 = +inf; bfloat16 is
  // float32's upper half: 0x3F80 = 1, 0xC0A0 = -5; two's complement for the signed integers.
  const std::string header =
      R"({"b":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]},"h":{"dtype":"F16","shape":[5],"data_offsets":[4,14]},)"
      R"("i":{"dtype":"I32","shape":[2],"data_offsets":[14,22]},"s":{"dtype":"I8","shape":[1],"data_offsets":[22,23]},)"
      R"("u":{"dtype":"U8","shape":[1],"data_offsets":[23,24]},"w":{"dtype":"I16","shape":[1],"data_offsets":[24,26]}})";
  const std::string data =
      std::string("\x80\x3f\xa0\xc0", 4) + std::string("\x00\x3c\x00\xc0\x01\x00\xff\x7b\x00\x7c", 10) +
      std::string("\xfe\xff\xff\xff\x07\x00\x00\x00", 8) + "\xff" + "\xff" + std::string("\x00\x80", 2);
  const fs::path path = temp_path("widened.safetensors");
  write_all(path, length_field(header.size()) + header + data);
  const SafetensorsFile f = load_safetensors(path);
  CHECK(f.tensors.at("b").dtype() == DType::Float32);
  CHECK(f.tensors.at("b").to_vector<float>() == std::vector<float>{1.0f, -5.0f});
  CHECK(f.tensors.at("h").to_vector<float>() ==
        std::vector<float>{1.0f, -2.0f, std::ldexp(1.0f, -24), 65504.0f, std::numeric_limits<float>::infinity()});
  CHECK(f.tensors.at("i").dtype() == DType::Int64);
  CHECK(f.tensors.at("i").to_vector<int64_t>() == std::vector<int64_t>{-2, 7});
  CHECK(f.tensors.at("s").to_vector<int64_t>() == std::vector<int64_t>{-1});
  CHECK(f.tensors.at("u").to_vector<int64_t>() == std::vector<int64_t>{255});
  CHECK(f.tensors.at("w").to_vector<int64_t>() == std::vector<int64_t>{-32768});
}

TEST_CASE(
    "SafetensorsReader::view: the file's own bytes, copy-on-write, and undefined where they are not the elements") {
  // The file lays tensors out in name order from an 8-byte-aligned start: a.f64 at 0, b.i64 at 56,
  // c.f32 at 80 (60 bytes), d.f64 at 140, which is not a multiple of 8, so it cannot be viewed.
  Generator gen(1);
  StateDict tensors;
  tensors["a.f64"] = randn({7}, gen).to(DType::Float64);
  tensors["b.i64"] = from_vector(std::vector<int64_t>{-3, 0, 9}, {3});
  tensors["c.f32"] = randn({3, 5}, gen);
  tensors["d.f64"] = randn({2}, gen).to(DType::Float64);
  tensors["e.mask"] = from_vector(std::vector<bool>{true, false}, {2});
  tensors["f.empty"] = zeros({0, 4});
  const fs::path path = temp_path("view.safetensors");
  save_safetensors(path, tensors);
  const std::string before = read_all(path);

  Tensor f32;
  {
    const SafetensorsReader reader(path);
    for (const char* name : {"a.f64", "b.i64", "c.f32"}) {
      INFO(name);
      const Tensor viewed = reader.view(name);
      REQUIRE(viewed.defined());
      CHECK(viewed.is_contiguous());
      CHECK(viewed.shape() == tensors.at(name).shape());
      CHECK(bytes_of(viewed) == bytes_of(tensors.at(name)));
      CHECK(bytes_of(viewed) == bytes_of(reader.read(name)));
    }
    CHECK_FALSE(reader.view("d.f64").defined());  // misaligned: read it
    CHECK(bytes_of(reader.read("d.f64")) == bytes_of(tensors.at("d.f64")));
    CHECK_FALSE(reader.view("e.mask").defined());  // BOOL bytes are checked as they are read
    CHECK_THROWS_MSG(reader.view("no.such"), CheckpointError, "no such tensor in the file");
    f32 = reader.view("c.f32");
  }
  // The view outlives its reader, and writing to it changes the program's copy only.
  CHECK(bytes_of(f32) == bytes_of(tensors.at("c.f32")));
  f32.fill_(0.5);
  CHECK(sum(f32).item() == 0.5 * 15);
  CHECK(read_all(path) == before);
  CHECK(bytes_of(SafetensorsReader(path).view("c.f32")) == bytes_of(tensors.at("c.f32")));

  // A dtype widened as it is read (F16 here) is no view of the file's bytes.
  const std::string header = R"({"h":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}})";
  const fs::path half = temp_path("view-half.safetensors");
  write_all(half, length_field(header.size()) + header + std::string("\x00\x3c", 2));
  const SafetensorsReader reader(half);
  CHECK_FALSE(reader.view("h").defined());
  CHECK(reader.read("h").to_vector<float>() == std::vector<float>{1.0f});
}

TEST_CASE("safetensors rejects bad tensor entries: dtype, shape, offsets, size, keys") {
  CHECK_LOAD_FAILS(file_with(R"({"w":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[0,2]}})", 2),
                   "tensor \"w\": unsupported dtype \"F8_E4M3\" (gradformer reads F32, F64, I64 and BOOL; F16 and "
                   "BF16 as float32; U8, I8, I16, U16, I32 and U32 as int64)");
  CHECK_LOAD_FAILS(file_with(R"({"w":{"dtype":"F16","shape":[2],"data_offsets":[0,8]}})", 8),
                   "hold 8 bytes, but dtype F16 and shape [2] need 4");
  CHECK_LOAD_FAILS(
      file_with(R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})", 12),
      "tensor \"w\": size mismatch: data_offsets [0, 12] hold 12 bytes, but dtype F32 and shape [2, 2] need 16");
  CHECK_LOAD_FAILS(file_with(R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8),
                   "tensor \"w\": shape must hold non-negative integers");
  CHECK_LOAD_FAILS(file_with(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", 8), "end before they begin");
  CHECK_LOAD_FAILS(file_with(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", 8),
                   "data_offsets must be [begin, end], two non-negative integers");
  CHECK_LOAD_FAILS(file_with(R"({"w":{"dtype":"F32","shape":[2]}})", 8), "tensor \"w\": missing data_offsets");
  CHECK_LOAD_FAILS(file_with(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"extra":"1"}})", 8),
                   "tensor \"w\": unknown key \"extra\"");
  CHECK_LOAD_FAILS(file_with(R"({"w":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}})", 0) + "\x01\x02",
                   "tensor \"w\": BOOL element 1 is byte 2, not 0 or 1");
  CHECK_LOAD_FAILS(file_with(R"({"w":{"dtype":"F32","shape":[1,1,1,1,1,1,1,1,1],"data_offsets":[0,4]}})", 4),
                   "more than the 8 supported");
  // A shape of a million sizes (2 MB of header) is refused while parsing, at its tenth size: once
  // the whole array was built (1.6 GB for a 20 MB header) before the rank check saw it.
  std::string huge_shape = R"({"w":{"dtype":"F32","shape":[)";
  for (int i = 0; i < 1000000; ++i) huge_shape += "1,";
  huge_shape += R"(1],"data_offsets":[0,4]}})";
  CHECK_LOAD_FAILS(file_with(huge_shape, 4), "an array of more than 9 items");
  // Sizes whose product overflows, hidden behind a 0 that makes the count 0 (once undefined behaviour)
  CHECK_LOAD_FAILS(file_with(R"({"w":{"dtype":"F32","shape":[4611686018427387904,4,0],"data_offsets":[0,0]}})", 0),
                   "tensor \"w\": shape [4611686018427387904, 4, 0]: its sizes multiply past 64 bits");
  CHECK_LOAD_FAILS(file_with(R"({"w":{"dtype":"F32","shape":[0,4611686018427387904,4],"data_offsets":[0,0]}})", 0),
                   "its sizes multiply past 64 bits");
  CHECK_LOAD_FAILS(file_with(R"({"w":{"dtype":"F64","shape":[4611686018427387904],"data_offsets":[0,8]}})", 8),
                   "size mismatch");
}

TEST_CASE("safetensors rejects overlapping, gapped, short and trailing data, and duplicate names") {
  CHECK_LOAD_FAILS(file_with(R"({"a":)" + F32x2 + R"([0,8]},"b":)" + F32x2 + "[4,12]}}", 12),
                   "tensor \"b\": data_offsets [4, 12] overlap those of tensor \"a\" [0, 8]");
  CHECK_LOAD_FAILS(file_with(R"({"a":)" + F32x2 + R"([0,8]},"b":)" + F32x2 + "[12,20]}}", 20),
                   "tensor \"b\": gap: data_offsets begin at 12 but the previous tensor ends at 8");
  CHECK_LOAD_FAILS(file_with(R"({"a":)" + F32x2 + "[4,12]}}", 12), "tensor \"a\": gap: data_offsets begin at 4");
  CHECK_LOAD_FAILS(file_with(R"({"a":)" + F32x2 + "[0,8]}}", 12),
                   "trailing bytes: the tensors cover 8 bytes of data, but the file holds 12 after the header");
  CHECK_LOAD_FAILS(file_with(R"({"a":)" + F32x2 + "[0,8]}}", 5),
                   "truncated: the tensors need 8 bytes of data, but the file holds 5");
  CHECK_LOAD_FAILS(file_with(R"({"a":)" + F32x2 + R"([0,8]},"a":)" + F32x2 + "[8,16]}}", 16), "duplicate name \"a\"");
  CHECK_LOAD_FAILS(file_with(R"({"__metadata__":{"k":1}})", 0),
                   "__metadata__ must map strings to strings, but \"k\" is integer");
  CHECK_LOAD_FAILS(file_with(R"({"__metadata__":{"k":"1","k":"2"}})", 0), "duplicate name in __metadata__: \"k\"");
  // The tensors may be listed in any order; only their byte ranges must tile the data.
  const SafetensorsFile ok = load_safetensors([&] {
    const fs::path path = temp_path("unordered.safetensors");
    write_all(path, file_with(R"({"b":)" + F32x2 + R"([8,16]},"a":)" + F32x2 +
                                  "[0,8]},\"e\":" + R"({"dtype":"F64","shape":[0],"data_offsets":[16,16]}})",
                              16));
    return path;
  }());
  CHECK(ok.tensors.size() == 3);
}

TEST_CASE("save_safetensors rejects what it cannot write and names the path") {
  const fs::path path = temp_path("bad-save.safetensors");
  CHECK_THROWS_MSG(save_safetensors(path, {{"x", Tensor()}}), CheckpointError,
                   "save_safetensors: " + path.string() + ": tensor \"x\" is undefined");
  CHECK_THROWS_MSG(save_safetensors(path, {{"__metadata__", ones({1})}}), CheckpointError,
                   "\"__metadata__\" is reserved");
  CHECK_THROWS_MSG(save_safetensors(path, {}, {{"k", "\xff"}}), CheckpointError, "is not valid UTF-8");
  CHECK_THROWS_MSG(save_safetensors(path.parent_path() / "no-such-dir" / "x.safetensors", {}), CheckpointError,
                   "cannot create the temporary file");
  CHECK(!fs::exists(path));
}

TEST_CASE("A failed save leaves the previous checkpoint intact") {
  const fs::path path = temp_path("model.safetensors");
  save_safetensors(path, {{"w", tensor({1, 2, 3}, {3})}}, {{"step", "100"}});
  const std::string before = read_all(path);
  // Simulate a full disk: no file of this process may grow past 256 bytes for a moment.
  rlimit saved{};
  getrlimit(RLIMIT_FSIZE, &saved);
  const auto previous_handler = std::signal(SIGXFSZ, SIG_IGN);  // a failed write, not a killed process
  rlimit small = saved;
  small.rlim_cur = 256;
  REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
  const std::string message = test::error_message<CheckpointError>([&] {
    save_safetensors(path, {{"w", zeros({1000})}}, {{"step", "200"}});
  });
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, previous_handler);
  CHECK(message.find("cannot write the temporary file") != std::string::npos);
  CHECK(read_all(path) == before);
  CHECK(load_safetensors(path).metadata.at("step") == "100");
  for (const auto& entry : fs::directory_iterator(path.parent_path()))  // and no temporary is left
    CHECK(entry.path().filename().string().rfind("model.safetensors.tmp", 0) != 0);
}

TEST_CASE("save_safetensors removes the temporaries of killed writers, never a live writer's") {
  const fs::path path = temp_path("stale.safetensors");
  const fs::path dead = path.string() + ".tmp-999999999-0";  // above any pid_max: no such process
  const fs::path live = path.string() + ".tmp-" + std::to_string(getppid()) + "-0";
  write_all(dead, std::string(1000, 'x'));
  write_all(live, std::string(1000, 'x'));
  save_safetensors(path, {{"w", ones({2})}});
  CHECK(!fs::exists(dead));
  CHECK(fs::exists(live));
  fs::remove(live);
}

TEST_CASE("two writers saving to one path never expose a torn file to a reader") {
  // Once every save used the same "<path>.tmp": one writer renamed the other's half-written file.
  const fs::path path = temp_path("shared.safetensors");
  save_safetensors(path, {{"w", ones({256})}});
  std::atomic<bool> done{false};
  std::atomic<int> bad_reads{0}, reads{0};
  std::thread reader([&] {
    while (!done) {
      try {
        const SafetensorsFile f = load_safetensors(path);
        if (f.tensors.at("w").numel() != 256) ++bad_reads;
      } catch (const Error&) {
        ++bad_reads;
      }
      ++reads;
    }
  });
  auto writer = [&](double value) {
    for (int i = 0; i < 40; ++i) save_safetensors(path, {{"w", full({256}, value)}});
  };
  std::thread a(writer, 1.0), b(writer, 2.0);
  a.join(), b.join();
  done = true;
  reader.join();
  CHECK(bad_reads == 0);
  CHECK(reads > 0);
}

TEST_CASE("Module state_dict and Adam state through a file resume training bitwise") {
  Generator gen(5);
  Linear model(4, 3, gen), resumed(4, 3, gen);
  const Tensor x = randn({6, 4}, gen), target = from_vector(std::vector<int64_t>{0, 1, 2, 2, 1, 0}, {6});
  Adam adam(model.parameters(), {.lr = 0.01});
  auto train = [&](Linear& m, Adam& opt, int steps) {
    for (int s = 0; s < steps; ++s) {
      opt.zero_grad();
      cross_entropy(m.forward(x), target, {.label_smoothing = 0.1}).backward();
      opt.step();
    }
  };
  train(model, adam, 5);
  StateDict checkpoint = model.state_dict();
  for (const auto& [name, t] : adam.state()) checkpoint["optimizer." + name] = t;
  const fs::path path = temp_path("resume.safetensors");
  save_safetensors(path, checkpoint, {{"note", "after 5 steps"}});
  train(model, adam, 5);

  const SafetensorsFile file = load_safetensors(path);
  StateDict params, optimizer_state;
  for (const auto& [name, t] : file.tensors)
    (name.rfind("optimizer.", 0) == 0 ? optimizer_state[name.substr(10)] : params[name]) = t;
  resumed.load_state_dict(params);
  Adam adam2(resumed.parameters(), {.lr = 0.01});
  adam2.load_state(optimizer_state);
  train(resumed, adam2, 5);
  CHECK(bytes_of(resumed.weight.value()) == bytes_of(model.weight.value()));
  CHECK(bytes_of(resumed.bias.value()) == bytes_of(model.bias.value()));
}

TEST_CASE("JSON: strings with escapes and surrogate pairs, integers at the edges, strictness") {
  const Json j = Json::parse(
      R"( {"s": "a\"b\\c\/d\n\t\u00e9\uD83D\uDE00", "n": [-9223372036854775808, 9223372036854775807, 0, -0]} )");
  REQUIRE(j.is_object());
  CHECK(j.members()[0].second.text() == "a\"b\\c/d\n\t\xc3\xa9\xf0\x9f\x98\x80");  // é and 😀 in UTF-8
  const auto& n = j.members()[1].second.items();
  CHECK(n[0].value() == std::numeric_limits<int64_t>::min());
  CHECK(n[1].value() == std::numeric_limits<int64_t>::max());
  CHECK(n[3].value() == 0);
  CHECK(j.dump() ==
        "{\"s\":\"a\\\"b\\\\c/d\\n\\t\xc3\xa9\xf0\x9f\x98\x80\",\"n\":[-9223372036854775808,9223372036854775807,0,0]}");
  CHECK(Json::parse(j.dump()).dump() == j.dump());
  CHECK(Json::string(std::string("\x01", 1)).dump() == "\"\\u0001\"");

  CHECK_THROWS_MSG(Json::parse("9223372036854775808"), JsonError, "integer out of the 64-bit range");
  CHECK_THROWS_MSG(Json::parse("-9223372036854775809"), JsonError, "integer out of the 64-bit range");
  CHECK_THROWS_MSG(Json::parse("012"), JsonError, "leading zero");
  CHECK_THROWS_MSG(Json::parse(R"("\uDE00")"), JsonError, "lone low surrogate");
  CHECK_THROWS_MSG(Json::parse(R"("\uD83D x")"), JsonError, "high surrogate not followed by a low surrogate");
  CHECK_THROWS_MSG(Json::parse(R"("\uD83D\u0041")"), JsonError, "high surrogate not followed by a low surrogate");
  CHECK_THROWS_MSG(Json::parse(R"("\u12G4")"), JsonError, "\\u needs 4 hex digits");
  CHECK_THROWS_MSG(Json::parse(R"("\x")"), JsonError, "invalid escape '\\x' at byte 1");
  CHECK_THROWS_MSG(Json::parse("\"a\nb\""), JsonError, "control character in a string");
  CHECK_THROWS_MSG(Json::parse("\"abc"), JsonError, "unterminated string");
  CHECK_THROWS_MSG(Json::parse("[1 2]"), JsonError, "expected ']', found '2' at byte 3");
  CHECK_THROWS_MSG(Json::parse("null"), JsonError, "unsupported value");
  CHECK_THROWS_MSG(Json::parse("\"\xed\xa0\x80\""), JsonError, "not valid UTF-8 at byte 1");  // a surrogate in UTF-8
  CHECK_THROWS_MSG(Json::parse("\"\xf4\x90\x80\x80\""), JsonError, "not valid UTF-8 at byte 1");  // above U+10FFFF
  CHECK_THROWS_MSG(Json::string("\xe6\x97").dump(), JsonError,
                   "json: string is not valid UTF-8 at byte 0");  // cut short
}
