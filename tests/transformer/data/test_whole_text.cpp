// The reader of texts read whole (transformer/data/line_reader.h): every byte as it is, and no more than
// the limit.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>

#include "catch.h"
#include "transformer/data/data_error.h"
#include "transformer/data/line_reader.h"

using namespace gradformer;

namespace {

// A temporary file holding `bytes`, open for reading from its start.
std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_of(const std::string& bytes) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::tmpfile(), &std::fclose);
  REQUIRE(file);
  REQUIRE(std::fwrite(bytes.data(), 1, bytes.size(), file.get()) == bytes.size());
  std::rewind(file.get());
  return file;
}

std::string all_byte_values() {
  std::string bytes;
  for (int b = 0; b < 256; ++b) bytes += static_cast<char>(b);
  return bytes;
}

}  // namespace

TEST_CASE("read_whole_text keeps every byte: NUL, 0xFF, \\r\\n, a last newline") {
  const std::string bytes = all_byte_values() + "line\r\nnext\n";
  CHECK(read_whole_text(file_of(bytes).get(), "t") == bytes);
  CHECK(read_whole_text(file_of("").get(), "t").empty());
}

TEST_CASE("read_whole_text reads more than its buffer of 64 KiB") {
  std::string bytes;
  for (int i = 0; i < 1000; ++i) bytes += all_byte_values();  // 256000 bytes
  CHECK(read_whole_text(file_of(bytes).get(), "t") == bytes);
}

TEST_CASE("read_whole_text takes max_bytes and refuses one more, naming the input") {
  CHECK(read_whole_text(file_of("abcd").get(), "t", 4) == "abcd");
  CHECK_THROWS_MATCHES(
      read_whole_text(file_of("abcde").get(), "standard input", 4), ReadError,
      Catch::Matchers::Message("standard input: more than 4 bytes, the most a text read whole may hold"));
}

TEST_CASE("read_whole_file names a missing file and a directory") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("gradformer-test-whole-text-" + std::to_string(std::random_device{}()));
  std::filesystem::create_directories(dir);
  const std::string missing = (dir / "missing.txt").string();
  std::filesystem::remove(missing);
  CHECK_THROWS_MATCHES(read_whole_file(missing), DataError,
                       Catch::Matchers::Message(missing + ": cannot open for reading: No such file or directory"));
  CHECK_THROWS_MATCHES(read_whole_file(dir.string()), DataError,
                       Catch::Matchers::Message(dir.string() + ": a directory, not a text file"));
  const std::string present = (dir / "present.txt").string();
  std::ofstream(present, std::ios::binary) << "x\ny";
  CHECK(read_whole_file(present) == "x\ny");
  CHECK_THROWS_AS(read_whole_file(present, 2), ReadError);
  std::filesystem::remove_all(dir);
}
