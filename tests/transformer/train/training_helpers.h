// Shared by the training, decoding and checkpoint tests: a temporary directory that cleans up
// after itself, small files, and bitwise tensor comparison.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "catch.h"
#include "nn/all.h"
#include "transformer/model/encoder_decoder.h"

namespace test {

/// A fresh directory under the system's temporary directory, removed with everything in it at the
/// end of the scope. Unique per process and call, so tests may run in parallel.
class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    std::random_device entropy;
    const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
    path_ = std::filesystem::temp_directory_path() /
            ("gradformer-" + tag + "-" + std::to_string(entropy()) + "-" + std::to_string(now));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  REQUIRE(out.good());
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Same shape, dtype and values, bit for bit (float32 -> double is exact, so comparing the
/// doubles' bits compares the elements' bits).
inline bool bitwise_equal(const gradformer::Tensor& a, const gradformer::Tensor& b);

/// Bitwise equality of two lists of doubles (the losses of two runs).
inline bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

inline bool bitwise_equal(const gradformer::Tensor& a, const gradformer::Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && same_bits(a.to_vector<double>(), b.to_vector<double>());
}

}  // namespace test
