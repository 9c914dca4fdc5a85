// check_listings CHAPTER.md PROGRAM.cpp [--run COMMAND]... [--missing TOOL]... [--update | --update-varies]
//
// Listings: every ```cpp block of the chapter must appear in its companion program, character for
// character with the whitespace (spaces, line breaks) ignored, so the code a reader sees compiles
// and runs, and reformatting the program cannot break the chapter.
// A listing of the library's own code says where it comes from on the line before it,
//   <!-- from: transformer/model/encoder.cpp -->
// (a path from the project root) and must appear, in the same sense, in that file.
//
// Outputs: with --run, the COMMANDs are run one after another through the shell, and every ```text
// block of the chapter must be something they printed on stdout. Each command's output is preceded
// by a line "$ name args" (name without its directory), so a block may show the command it ran.
// A block matches when its lines are consecutive lines of that output (leading and trailing spaces
// and blank lines ignored); a line "..." in a block stands for any number of lines left out.
// The line just before a ```text block says what kind of block it is:
//
//   (no tag)                          printed exactly so: the programs are seeded, so this is exact
//   <!-- output: varies (WHAT; measured on MACHINE) -->
//                                     printed, but with numbers that change from run to run and
//                                     machine to machine (timings, GFLOP/s, tokens/s, eta): every
//                                     number matches any number, and the words must still match
//   <!-- not output -->               not printed by the commands (a command to type, a formula, a
//   <!-- not output: WHY -->          diagram, another program's output): not checked
//
// Any other tag is an error, so no block escapes the check by a typo.
// A block that only a command needing an optional tool prints (PyTorch, say) ends its tag with
// "needs: TOOL", as in <!-- output: varies (WHAT; measured on MACHINE) needs: torch --> (or
// <!-- needs: torch --> for an exact block). --missing TOOL says this machine has no TOOL: such blocks
// are then listed as not checked, and everything else is checked as usual.
// --update rewrites the untagged blocks that no longer match with what the commands print now (a
// block is found in the output by its words, its numbers ignored); --update-varies rewrites the
// varies blocks too (then correct their "measured on"). `git diff` shows what changed.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#ifdef _WIN32
#define popen _popen
#define pclose _pclose
#endif

using Lines = std::vector<std::string>;
constexpr size_t none = std::string::npos;

static std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

static Lines read_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "check_listings: cannot read " << path << "\n";
    std::exit(2);
  }
  Lines lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The lines with every space, tab and line break taken out: a listing matches its source whatever
// the line breaks and indentation (so reformatting the code cannot break a chapter), but any change
// to the code itself does.
static std::string squeezed(const Lines& lines) {
  std::string text;
  for (const std::string& line : lines)
    for (char c : line)
      if (c != ' ' && c != '\t' && c != '\r') text += c;
  return text;
}

// Runs a shell command and returns what it printed on stdout, line by line; false if it failed.
static bool run(const std::string& command, Lines& output) {
  const size_t name_start = command.find_last_of("/\\", command.find(' ')) + 1;  // 0 if no directory
  output.push_back("$ " + command.substr(name_start));
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return false;
  std::string text;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) text.append(buffer, n);
  const int status = pclose(pipe);
  for (size_t start = 0, end; start < text.size(); start = end + 1) {
    end = text.find('\n', start);
    if (end == none) end = text.size();
    output.push_back(text.substr(start, end - start));
  }
  return status == 0;
}

// A line with every number replaced by '#' and runs of spaces by one: how varies blocks compare.
static std::string words_of(const std::string& line) {
  static const std::regex number("-?[0-9]+([.:,][0-9]+)*(e[-+]?[0-9]+)?"), spaces(" +");
  return std::regex_replace(std::regex_replace(trim(line), number, "#"), spaces, " ");
}

struct Block {
  size_t open = 0, close = 0;  // the lines of ``` text and of the closing ```
  std::string tag;             // "", "varies" or "not output"
  std::string needs;           // the optional tool whose command prints it ("" if none)
};

// Where each piece of the block (the lines between "..." lines) is in the output, as [first, last]
// indices into `printed` (the output's non-blank lines, trimmed, or their words_of); empty if the
// block is not there.
static std::vector<std::pair<size_t, size_t>> find_block(const Lines& md, const Block& b, const Lines& printed,
                                                         bool by_words, size_t start = 0) {
  std::vector<Lines> pieces(1);
  for (size_t i = b.open + 1; i < b.close; ++i) {
    const std::string line = trim(md[i]);
    if (line == "...")
      pieces.emplace_back();
    else if (!line.empty())
      pieces.back().push_back(by_words ? words_of(line) : line);
  }
  std::vector<std::pair<size_t, size_t>> found;
  size_t from = start;
  for (const Lines& piece : pieces) {
    if (piece.empty()) continue;
    size_t at = from;
    while (at + piece.size() <= printed.size()) {
      size_t k = 0;
      while (k < piece.size() && piece[k] == printed[at + k]) ++k;
      if (k == piece.size()) break;
      ++at;
    }
    if (at + piece.size() > printed.size()) return {};
    found.emplace_back(at, at + piece.size() - 1);
    from = at + piece.size();
  }
  return found;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: check_listings CHAPTER.md PROGRAM.cpp [--run COMMAND]... [--missing TOOL]... [--update | "
                 "--update-varies]\n";
    return 2;
  }
  const std::string chapter_path = argv[1];
  Lines md = read_lines(chapter_path), program = read_lines(argv[2]), commands, missing;
  bool update = false, update_varies = false;
  for (int i = 3; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--run" && i + 1 < argc)
      commands.push_back(argv[++i]);
    else if (arg == "--missing" && i + 1 < argc)
      missing.push_back(argv[++i]);
    else if (arg == "--update")
      update = true;
    else if (arg == "--update-varies")
      update = update_varies = true;
    else
      return std::cerr << "check_listings: unknown argument " << arg << "\n", 2;
  }
  int failures = 0;

  // The ```cpp listings: from the program, or from the library file named on the line before.
  auto nonblank = [](const Lines& lines) {
    Lines kept;
    for (const std::string& line : lines)
      if (!trim(line).empty()) kept.push_back(trim(line));
    return kept;
  };
  const Lines code = nonblank(program);
  const std::string chapter_dir = chapter_path.substr(0, chapter_path.find_last_of('/') + 1);  // "" or ".../tutorials/"
  int listings = 0;
  for (size_t i = 0; i < md.size(); ++i) {
    if (trim(md[i]) != "```cpp") continue;
    const size_t start = i + 1;
    const std::string before = i > 0 ? trim(md[i - 1]) : "";
    std::string source = argv[2];
    Lines source_code = code;
    if (before.starts_with("<!-- from: ") && before.ends_with(" -->")) {
      source = chapter_dir + "../" + before.substr(11, before.size() - 15);
      source_code = nonblank(read_lines(source));
    } else if (before.starts_with("<!--")) {
      ++failures;
      std::cerr << chapter_path << ":" << i << ": unknown tag before a listing (see check_listings.cpp): " << before
                << "\n";
    }
    Lines block;
    for (++i; i < md.size() && trim(md[i]) != "```"; ++i)
      if (!trim(md[i]).empty()) block.push_back(trim(md[i]));
    ++listings;
    if (squeezed(source_code).find(squeezed(block)) == std::string::npos) {
      ++failures;
      std::cerr << chapter_path << ":" << start << ": this listing is not in " << source << "\n";
    }
  }

  // The ```text blocks and their tags.
  std::vector<Block> blocks;
  for (size_t i = 0; i < md.size(); ++i) {
    if (trim(md[i]) != "```text") continue;
    Block b{.open = i, .close = i, .tag = "", .needs = ""};
    std::string before = i > 0 ? trim(md[i - 1]) : "";
    static const std::regex needs_tag("(<!--.*) needs: ([A-Za-z0-9_-]+) -->");
    if (std::smatch m; std::regex_match(before, m, needs_tag)) {
      b.needs = m[2];
      before = m[1] == "<!--" ? "" : m[1].str() + " -->";  // <!-- needs: TOOL --> alone: an exact block
    }
    if (before.starts_with("<!-- not output") && before.ends_with("-->"))
      b.tag = "not output";
    else if (before.starts_with("<!-- output: varies (") && before.find("measured on ") != none &&
             before.ends_with(") -->"))
      b.tag = "varies";
    else if (before.starts_with("<!--")) {
      ++failures;
      std::cerr << chapter_path << ":" << i << ": unknown tag (see check_listings.cpp): " << before << "\n";
    }
    for (++i; i < md.size() && trim(md[i]) != "```"; ++i) {
    }
    b.close = i;
    blocks.push_back(b);
  }
  int checked = 0, stale = 0, rewritten = 0, not_checked = 0;
  if (!commands.empty()) {
    Lines output, printed, printed_words;
    for (const std::string& command : commands)
      if (!run(command, output)) {
        ++failures;
        std::cerr << "check_listings: `" << command << "` failed\n";
      }
    std::vector<size_t> where;  // printed[k] is output[where[k]]
    for (size_t k = 0; k < output.size(); ++k)
      if (!trim(output[k]).empty())
        printed.push_back(trim(output[k])), printed_words.push_back(words_of(output[k])), where.push_back(k);
    for (const std::string& line : output) std::cout << line << "\n";  // for a failing test's log
    std::cout << "----\n";

    // Where --update looks for each block: after the previous block's place in the output, so that
    // two blocks with the same words (one table at two sizes) take the first and the second
    // occurrence, not both the first.
    std::vector<size_t> search_from(blocks.size(), 0);
    for (size_t k = 0, next = 0; k < blocks.size(); ++k) {
      if (blocks[k].tag == "not output") continue;
      search_from[k] = next;
      auto at = find_block(md, blocks[k], printed_words, /*by_words=*/true, next);
      if (at.empty()) at = find_block(md, blocks[k], printed_words, /*by_words=*/true);
      if (!at.empty()) next = at.back().second + 1;
    }

    Lines updated(md.begin(), md.end());
    for (auto b = blocks.rbegin(); b != blocks.rend(); ++b) {  // from the end, so line numbers stay valid
      if (b->tag == "not output") continue;
      if (std::find(missing.begin(), missing.end(), b->needs) != missing.end()) {
        ++not_checked;
        std::cout << chapter_path << ":" << b->open + 1 << ": not checked: printed by a command that needs " << b->needs
                  << ", which this machine lacks\n";
        continue;
      }
      ++checked;
      const bool by_words = b->tag == "varies" && !update_varies;
      if (!find_block(md, *b, by_words ? printed_words : printed, by_words).empty()) continue;
      const size_t index = static_cast<size_t>(blocks.rend() - b) - 1;
      auto found = find_block(md, *b, printed_words, /*by_words=*/true, search_from[index]);
      if (found.empty()) found = find_block(md, *b, printed_words, /*by_words=*/true);
      if (!update || found.empty() || (b->tag == "varies" && !update_varies)) {
        ++stale;
        std::cerr << chapter_path << ":" << b->open + 1 << ": this ```text block is not in the output"
                  << (found.empty() ? " (not even with other numbers)\n" : "; --update would rewrite it\n");
        continue;
      }
      Lines fresh;
      for (size_t p = 0; p < found.size(); ++p) {
        if (p > 0) fresh.push_back("...");
        for (size_t k = where[found[p].first]; k <= where[found[p].second]; ++k)
          fresh.push_back(output[k].substr(0, output[k].find_last_not_of(" \t\r") + 1));
      }
      updated.erase(updated.begin() + static_cast<std::ptrdiff_t>(b->open + 1),
                    updated.begin() + static_cast<std::ptrdiff_t>(b->close));
      updated.insert(updated.begin() + static_cast<std::ptrdiff_t>(b->open + 1), fresh.begin(), fresh.end());
      ++rewritten;
    }
    if (rewritten > 0) {
      std::ofstream out(chapter_path);
      for (const std::string& line : updated) out << line << "\n";
    }
  }
  failures += stale;
  std::cout << listings << " listings, " << blocks.size() << " text blocks (" << checked
            << " checked against the output, " << stale << " stale, " << rewritten << " rewritten, " << not_checked
            << " not checked for a missing tool), " << failures << " failures\n";
  return failures == 0 && listings > 0 ? 0 : 1;
}
