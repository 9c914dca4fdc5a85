// check_listings CHAPTER.md PROGRAM.cpp
// Every ```cpp block of the chapter must appear, line for line, in its companion program (leading
// and trailing spaces ignored), so the listings a reader sees are code that compiles and runs.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

static std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

static std::vector<std::string> read_lines(const char* path) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "check_listings: cannot read " << path << "\n";
    std::exit(2);
  }
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(trim(line));
  return lines;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: check_listings CHAPTER.md PROGRAM.cpp\n";
    return 2;
  }
  const std::vector<std::string> chapter = read_lines(argv[1]), program = read_lines(argv[2]);
  int listings = 0, missing = 0;
  for (size_t i = 0; i < chapter.size(); ++i) {
    if (chapter[i] != "```cpp") continue;
    std::vector<std::string> block;
    size_t start = i + 1;
    for (++i; i < chapter.size() && chapter[i] != "```"; ++i) block.push_back(chapter[i]);
    block.erase(std::remove(block.begin(), block.end(), std::string()), block.end());  // blank lines don't count
    std::vector<std::string> code = program;
    code.erase(std::remove(code.begin(), code.end(), std::string()), code.end());
    ++listings;
    if (std::search(code.begin(), code.end(), block.begin(), block.end()) == code.end()) {
      ++missing;
      std::cerr << argv[1] << ":" << start << ": this listing is not in " << argv[2] << "\n";
    }
  }
  std::cout << listings << " listings, " << missing << " missing\n";
  return missing == 0 && listings > 0 ? 0 : 1;
}
