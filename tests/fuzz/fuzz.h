// What every fuzz harness shares: the rule that separates a clean rejection from a bug, a reader
// that turns the fuzzer's bytes into choices, and a scratch file for readers that take a path.
//
// A harness defines LLVMFuzzerTestOneInput. Linked with -fsanitize=fuzzer it is a libFuzzer
// target; linked with corpus_driver.cpp it replays a corpus directory in the normal test suite.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <typeinfo>

#include "tensor/support/error.h"

namespace gradformer::fuzz {

/// A broken invariant: print it and abort, which libFuzzer and ctest both report as a crash.
[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz: invariant broken: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

/// Runs `body` on one input. A gradformer::Error is the reader rejecting bad input, as it must;
/// any other exception escaped a reader that promises typed errors, so it is a bug (abort).
template <class Body>
void guarded(Body&& body) {
  try {
    body();
  } catch (const Error&) {
  } catch (const std::exception& e) {
    fail(std::string("an exception that is not a gradformer::Error escaped: ") + typeid(e).name() + ": " + e.what());
  } catch (...) {
    fail("a non-std::exception escaped");
  }
}

/// The fuzzer's bytes as a sequence of choices. Reading past the end gives zeros, so every input
/// means something and short inputs mean "the first choice" (libFuzzer then learns longer ones).
class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  /// A value in [0, n) from one or more bytes (n > 0).
  uint64_t below(uint64_t n) {
    uint64_t v = 0;
    for (uint64_t range = 1; range < n && range != 0; range <<= 8) v = (v << 8) | byte();
    return v % n;
  }
  /// Up to max bytes, their count taken from the input first.
  std::string bytes(size_t max) {
    const size_t n = std::min<size_t>(static_cast<size_t>(below(max + 1)), size_ - pos_);
    std::string out(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return out;
  }
  std::string rest() {
    std::string out(reinterpret_cast<const char*>(data_ + pos_), size_ - pos_);
    pos_ = size_;
    return out;
  }
  bool exhausted() const { return pos_ >= size_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

/// This process's scratch file for `tag`, removed at exit. On tmpfs (/dev/shm) when there is one,
/// so writing it on every input costs no disk I/O and fsync is cheap.
inline std::string scratch_path(const std::string& tag) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path directory = fs::is_directory("/dev/shm", error) ? fs::path("/dev/shm") : fs::temp_directory_path();
  return (directory / ("gradformer-fuzz-" + tag + "-" + std::to_string(::getpid()) + ".safetensors")).string();
}

inline void write_file(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) fail("cannot write the scratch file " + path);
}

/// Removes the listed scratch files when the process exits (libFuzzer exits with exit()).
inline void remove_at_exit(const std::string& path) {
  static std::string paths[8];
  static int count = 0;
  if (count == 0)
    std::atexit([] {
      for (int i = 0; i < count; ++i) {
        std::error_code ignored;
        std::filesystem::remove(paths[i], ignored);
        std::filesystem::remove(paths[i] + ".again", ignored);
      }
    });
  if (count < 8) paths[count++] = path;
}

}  // namespace gradformer::fuzz
