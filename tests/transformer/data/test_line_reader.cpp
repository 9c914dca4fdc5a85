#include <cstdio>
#include <filesystem>
#include <sstream>
#include <streambuf>
#include <type_traits>

#include "catch.h"
#include "transformer/data/line_reader.h"

using namespace gradformer;

namespace {

// An endless input, as /dev/zero is on a system that has one: zero bytes, 4 KiB at a time, counted.
class EndlessZeros : public std::streambuf {
 public:
  int64_t served = 0;

 protected:
  int_type underflow() override {
    setg(block_, block_, block_ + sizeof block_);
    served += sizeof block_;
    return traits_type::to_int_type(block_[0]);
  }

 private:
  char block_[4096] = {};
};

// A disk that fails: `text`, then a read that throws, as std::filebuf does when read(2) fails.
class FailingAfter : public std::streambuf {
 public:
  explicit FailingAfter(std::string text) : text_(std::move(text)) {
    setg(text_.data(), text_.data(), text_.data() + text_.size());
  }

 protected:
  int_type underflow() override { throw std::ios_base::failure("the disk failed"); }

 private:
  std::string text_;
};

// Every line of `reader`, until its end.
std::vector<std::string> all_lines(LineReader& reader) {
  std::vector<std::string> lines;
  for (std::string line; reader.next(line);) lines.push_back(line);
  return lines;
}

// The lines of `text`, read from a C stream (the way standard input is read) holding it.
std::vector<std::string> lines_from_file(const std::string& text, int64_t max_line_bytes = kMaxLineBytes) {
  std::FILE* file = std::tmpfile();  // removed when closed
  REQUIRE(file != nullptr);
  REQUIRE(std::fwrite(text.data(), 1, text.size(), file) == text.size());
  std::rewind(file);
  LineReader reader(file, "text", max_line_bytes);
  std::vector<std::string> lines;
  try {
    lines = all_lines(reader);
  } catch (...) {
    std::fclose(file);
    throw;
  }
  std::fclose(file);
  return lines;
}

std::vector<std::string> lines_from_stream(const std::string& text, int64_t max_line_bytes = kMaxLineBytes) {
  std::istringstream in(text);
  LineReader reader(in, "text", max_line_bytes);
  return all_lines(reader);
}

}  // namespace

TEST_CASE("LineReader reads every command's input alike and lets a caller go on after a bad line") {
  std::istringstream in("\xEF\xBB\xBFone\r\ntw\xFFo\r\nthree");
  LineReader lines(in, "stdin");
  std::string line;
  REQUIRE(lines.next(line));
  CHECK(line == "one");
  CHECK_THROWS_MSG(lines.next(line), DataError, "stdin:2: not valid UTF-8 (byte 0xFF at column 3)");
  REQUIRE(lines.next(line));  // the bad line was consumed; the next one reads
  CHECK(line == "three");
  CHECK(lines.line_number() == 3);
  CHECK_FALSE(lines.next(line));
  CHECK(lines.line_number() == 3);  // the end is no line
}

TEST_CASE("LineReader reads a C stream (standard input) as it reads a C++ one") {
  const std::string text = "\xEF\xBB\xBFone\r\n\ntwo \t\nlast, no line end";
  const std::vector<std::string> expected = {"one", "", "two \t", "last, no line end"};
  CHECK(lines_from_stream(text) == expected);
  CHECK(lines_from_file(text) == expected);
  CHECK(lines_from_file("").empty());
  CHECK(lines_from_file("\n") == std::vector<std::string>{""});
  CHECK_THROWS_MSG(lines_from_file("ok\ncaf\xE9\n"), DataError, ":2: not valid UTF-8 (byte 0xE9 at column 4)");
}

TEST_CASE("LineReader takes a line of exactly its limit, with a Windows line end too, and refuses one byte more") {
  for (const auto read : {lines_from_stream, lines_from_file}) {
    CHECK(read("12345678\n12345678\r\nabc", 8) == std::vector<std::string>{"12345678", "12345678", "abc"});
    CHECK(read("12345678", 8) == std::vector<std::string>{"12345678"});
    CHECK_THROWS_MSG(read("ok\n123456789\n", 8), ReadError,
                     ":2: line longer than 8 bytes, the most a line may hold (is it text, one sentence a line?); "
                     "reading stopped there");
    CHECK_THROWS_MSG(read("12345678\r\r\n", 8), ReadError, ":1: line longer than 8 bytes");  // one '\r' is the end's
    CHECK_THROWS_MSG(read("123456789", 8), ReadError, ":1: line longer than 8 bytes");
  }
}

TEST_CASE("LineReader stops reading one byte past its limit, and is at its end after the error") {
  std::istringstream in("abc\n" + std::string(100, 'x') + "\nnext\n");
  LineReader lines(in, "long.txt", 8);
  std::string line;
  REQUIRE(lines.next(line));
  CHECK_THROWS_MSG(lines.next(line), ReadError, "long.txt:2: line longer than 8 bytes");
  CHECK(lines.line_number() == 2);
  CHECK(in.tellg() == 4 + 9);  // "abc\n" and 9 bytes of the long line: the other 91 were never read
  CHECK(line.empty());
  CHECK_FALSE(lines.next(line));  // a caller that reads on after errors does not loop
  CHECK_FALSE(lines.next(line));
}

TEST_CASE("LineReader refuses an endless line after reading about 1 MiB of it") {
  EndlessZeros zeros;
  std::istream in(&zeros);
  LineReader lines(in, "/dev/zero");
  std::string line;
  CHECK_THROWS_MSG(lines.next(line), ReadError, "/dev/zero:1: line longer than 1048576 bytes");
  CHECK(zeros.served >= kMaxLineBytes + 1);
  CHECK(zeros.served <= kMaxLineBytes + 4096);  // the limit, one more byte, and the rest of the 4 KiB block read
  CHECK(line.capacity() < 4096);                // the megabyte given back
  const int64_t served = zeros.served;
  CHECK_FALSE(lines.next(line));
  CHECK(zeros.served == served);  // nothing more read
}

TEST_CASE("LineReader reads lines longer than its 64 KiB chunks whole") {
  const std::string a(200000, 'a'), b(131072, 'b'), c(65536, 'c');
  const std::string text = a + "\n" + c + "\r\n" + "x\n" + b;  // b: two chunks exactly, then the end
  for (const auto read : {lines_from_stream, lines_from_file})
    CHECK(read(text, kMaxLineBytes) == std::vector<std::string>{a, c, "x", b});
}

TEST_CASE("LineReader: a read that fails is a ReadError naming the line, and the reader is at its end") {
  FailingAfter disk("one\ntwo\nthr");
  std::istream in(&disk);
  LineReader lines(in, "corpus.tsv");
  std::string line;
  REQUIRE(lines.next(line));
  REQUIRE(lines.next(line));
  CHECK(line == "two");
  CHECK_THROWS_MSG(lines.next(line), ReadError, "corpus.tsv:3: read failed: ");
  CHECK_FALSE(lines.next(line));
}

TEST_CASE("LineReader: a stream handed over already failed is a ReadError, not an empty or over-long line") {
  std::istringstream in("one\n");
  in.setstate(std::ios::failbit);  // as an extraction that went wrong before leaves it
  LineReader lines(in, "given", 8);
  std::string line;
  CHECK_THROWS_MSG(lines.next(line), ReadError, "given:1: read failed: the stream was in a failed state");
  CHECK_FALSE(lines.next(line));
}

#if defined(__linux__)
// Linux opens a directory for reading and fails the read (EISDIR): what `gradformer translate < /tmp` meets.
TEST_CASE("LineReader: a directory given as a C stream is a ReadError, not an empty input") {
  const std::string dir = std::filesystem::temp_directory_path().string();
  std::FILE* file = std::fopen(dir.c_str(), "r");
  REQUIRE(file != nullptr);
  LineReader lines(file, "standard input");
  std::string line;
  CHECK_THROWS_MSG(lines.next(line), ReadError, "standard input:1: read failed: Is a directory");
  CHECK_FALSE(lines.next(line));
  std::fclose(file);
}
#endif

TEST_CASE("LineReader: a ReadError is a DataError, so every reader's caller reports it as before") {
  STATIC_REQUIRE(std::is_base_of_v<DataError, ReadError>);
  std::istringstream in("x");
  CHECK_THROWS_MSG(LineReader(in, "x", 0), ValueError, "max_line_bytes must be from 1 to 1048576, got 0");
  CHECK_THROWS_MSG(LineReader(in, "x", kMaxLineBytes + 1), ValueError, "got 1048577");
  CHECK_THROWS_MSG(LineReader(static_cast<std::FILE*>(nullptr), "standard input"), ValueError,
                   "no input (a null FILE*) for standard input");
}

TEST_CASE("utf8_problem says what LineReader would say of a line, for text that is not in lines") {
  CHECK_FALSE(utf8_problem("caf\xC3\xA9 .").has_value());  // UTF-8 "café"
  CHECK(utf8_problem("caf\xE9 .") == "not valid UTF-8 (byte 0xE9 at column 4)");
  CHECK(utf8_problem("\xC0\xAF") == "not valid UTF-8 (byte 0xC0 at column 1)");  // overlong '/'
}
