// The one way a file a user sees is written (tensor/support/files.h): check_output_path refuses
// what is not a regular file and an existing file without --force; write_file_whole replaces a
// file whole through an exclusively created temporary, never a link or a device, and leaves no
// temporary behind when the write fails.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "catch.h"
#include "tensor/support/files.h"

using namespace gradformer;
namespace fs = std::filesystem;

namespace {

// A fresh directory of its own under the system's temporary directory, removed at the end.
struct Folder {
  fs::path path;
  explicit Folder(const std::string& name)
      : path(fs::temp_directory_path() / ("gradformer-test-files-" + name + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Folder() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

void write_text(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// write_file_whole with `text` as the whole file.
void write_whole(const std::string& path, const std::string& text) { write_file_whole(path, text); }

// The names in `folder` other than `keep`: what a write left behind.
int others(const Folder& folder, const std::string& keep) {
  int n = 0;
  for (const auto& entry : fs::directory_iterator(folder.path))
    if (entry.path().filename() != keep) ++n;
  return n;
}

}  // namespace

TEST_CASE("check_output_path: a new path passes, an existing file needs replace, the flag named") {
  Folder folder("check");
  const std::string out = folder / "t.json";
  CHECK_NOTHROW(check_output_path(out, false));
  write_text(out, "old");
  CHECK_THROWS_MSG(check_output_path(out, false), OutputError, out + " exists; give --force to replace it");
  CHECK_THROWS_MSG(check_output_path(out, false, "--overwrite"), OutputError, "give --overwrite to replace it");
  CHECK_NOTHROW(check_output_path(out, true));
  CHECK(read_text(out) == "old");
}

TEST_CASE(
    "check_output_path refuses what is not a regular file, even with replace: a link, a directory, a device, a FIFO") {
  Folder folder("nodes");
  const std::string target = folder / "target.txt", link = folder / "link.txt", fifo = folder / "fifo";
  write_text(target, "kept");
  fs::create_symlink(target, link);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_MSG(check_output_path(link, true), OutputError,
                   link + ": a symbolic link, not a regular file; not replacing it");
  CHECK_THROWS_MSG(check_output_path(folder.path.string(), true), OutputError, ": a directory, not a regular file");
  CHECK_THROWS_MSG(check_output_path("/dev/null", true), OutputError, "/dev/null: a device, not a regular file");
  CHECK_THROWS_MSG(check_output_path(fifo, true), OutputError, ": a FIFO, not a regular file");
  // a dangling link is a link too: writing would create its target somewhere else
  fs::create_symlink(folder / "nowhere", folder / "dangling");
  CHECK_THROWS_MSG(check_output_path(folder / "dangling", true), OutputError, ": a symbolic link");
  CHECK(fs::is_symlink(link));
  CHECK(read_text(target) == "kept");
}

TEST_CASE("write_file_whole writes a new file, replaces an old one whole, and leaves nothing beside it") {
  Folder folder("whole");
  const std::string out = folder / "page.html";
  write_whole(out, "first");
  CHECK(read_text(out) == "first");
  write_whole(out, "second, longer than the first");
  CHECK(read_text(out) == "second, longer than the first");
  CHECK(others(folder, "page.html") == 0);
}

TEST_CASE("write_file_whole never writes through a link, nor over a device: the node stays what it was") {
  Folder folder("refused");
  const std::string victim = folder / "victim.txt", link = folder / "link.txt";
  write_text(victim, "kept");
  fs::create_symlink(victim, link);
  CHECK_THROWS_MSG(write_whole(link, "x"), OutputError, "a symbolic link, not a regular file; not replacing it");
  CHECK(fs::is_symlink(link));
  CHECK(read_text(victim) == "kept");
  CHECK_THROWS_MSG(write_whole("/dev/null", "x"), OutputError, "/dev/null: a device, not a regular file");
  struct stat status {};
  REQUIRE(::stat("/dev/null", &status) == 0);
  CHECK(S_ISCHR(status.st_mode));
}

TEST_CASE("write_file_whole creates its temporary exclusively: a link planted under the name is not followed") {
  Folder folder("planted");
  const std::string out = folder / "t.json", victim = folder / "victim.txt";
  write_text(victim, "kept");
  // every name this process's next writes could take: <out>.tmp-<pid>-<n>
  for (int n = 0; n < 4096; ++n)
    fs::create_symlink(victim, out + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(n));
  CHECK_THROWS_MSG(write_whole(out, "new"), OutputError, "cannot create the temporary file");
  CHECK(read_text(victim) == "kept");
  CHECK(!fs::exists(out));
}

TEST_CASE("write_file_whole removes its temporary when the write fails or throws, and keeps the old file") {
  Folder folder("failed");
  const std::string out = folder / "t.json";
  write_text(out, "old");
  CHECK_THROWS_MSG(write_file_whole(out, [](int) { return false; }), OutputError,
                   out + ": cannot write the temporary file " + out + ".tmp-");
  CHECK_THROWS_AS(write_file_whole(out, [](int) -> bool { throw std::runtime_error("stopped"); }), std::runtime_error);
  CHECK(read_text(out) == "old");
  CHECK(others(folder, "t.json") == 0);
}

TEST_CASE("write_file_whole in a folder that does not exist names the path and the system's reason") {
  Folder folder("missing");
  const std::string out = folder / "no/such/t.json";
  CHECK_THROWS_MSG(write_whole(out, "x"), OutputError, out + ": cannot create the temporary file " + out + ".tmp-");
  CHECK_THROWS_MSG(write_whole(out, "x"), OutputError, ": No such file or directory");
}

TEST_CASE("files: file_fingerprint is the 64-bit FNV-1a hash of the bytes (the FNV reference values)") {
  Folder folder("fingerprint");
  const std::string path = (folder.path / "f").string();
  // The reference values of FNV-1a, 64 bits: "" is the offset basis itself.
  for (const auto& [text, hash] : {std::pair<std::string, std::string>{"", "cbf29ce484222325"},
                                   {"a", "af63dc4c8601ec8c"},
                                   {"foobar", "85944171f73967e8"}}) {
    write_text(path, text);
    CHECK(file_fingerprint(path) == hash);
  }
  // Past one read's chunk (64 KiB): the same as hashing the bytes in one go.
  std::string big(200000, 'x');
  for (size_t i = 0; i < big.size(); i += 7) big[i] = static_cast<char>(i % 251);
  write_text(path, big);
  uint64_t hash = 14695981039346656037ull;
  for (const char c : big) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  CHECK(file_fingerprint(path) == hex);
  CHECK_THROWS_MSG(file_fingerprint((folder.path / "absent").string()), Error,
                   "absent: cannot read it to check it is the same file: No such file or directory");
}
