// check_listings CHAPTER.md PROGRAM.cpp [--run COMMAND]... [--missing TOOL]... [--no-run] [--show-varies]
//                [--update | --update-varies]
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
//   <!-- output: varies (NAMES) -->   printed, with the quantities NAMES (a list separated by ", ")
//                                     varying from run to run and machine to machine; every other
//                                     number, and every word, must be printed exactly so. The first
//                                     line after the block names the machine, for the reader:
//                                     <sub>Measured on MACHINE.</sub>  (check_machines.cpp: one
//                                     machine per chapter, so that nothing compares two)
//   <!-- not output -->               not printed by the commands (a command to type, a formula, a
//   <!-- not output: WHY -->          diagram, another program's output): not checked
//
// A number in a varies block may vary only if one of the NAMES
//   - follows it, after at most one space (a unit: "12.3 ms", "106 GFLOP/s", "2.3x" for the name x);
//   - precedes it, then at most one space, or ':' or '=' with a space around (a label: "eta 0:42",
//     "threads: 2", "tokens/s 1606");
//   - is in the header of its column: the nearest line above in the block whose cells (text between
//     runs of two or more spaces) include one with the name and no digit; a number varies if its
//     characters overlap such a cell's (so "GFLOP/s" over a column of numbers names the column);
//   - is a pattern with '#' for the number: "in #" lets the number right after "in " vary, "# steps"
//     the number right before " steps" (neither a unit nor a label: exactly those characters).
// A name matches whole words only ("ms" is not in "items"). --show-varies prints each varies block
// with the numbers that may vary in [brackets]: the way to check a tag.
//
// Any other tag is an error, so no block escapes the check by a typo.
// A block that only a command needing an optional tool prints (PyTorch, say) ends its tag with
// "needs: TOOL", as in <!-- output: varies (NAMES) needs: torch --> (or
// <!-- needs: torch --> for an exact block). --missing TOOL says this machine has no TOOL: such blocks
// are then listed as not checked, and everything else is checked as usual.
// --update rewrites the untagged blocks that no longer match with what the commands print now (a
// block is found in the output by its words, its numbers ignored); --update-varies rewrites the
// varies blocks too (then correct the "Measured on" line under each). `git diff` shows what changed.
//
// Prose (check_prose.cpp), in every mode, --no-run too (the COMMANDs are then not run, but count as
// the chapter's commands), so a long chapter's quick test checks its prose without its long run:
//   - Numbers. Every number in the prose (outside ```blocks and HTML comments; `inline code` and
//     tables included) must be (a) printed in one of the chapter's checked ```text blocks (untagged,
//     or a varies block's numbers that its NAMES do not let vary), (b) in the program's source, a
//     ```cpp listing or a COMMAND (an input the program sets, such as d_model 16 or --epochs 20), or
//     (c) declared a constant by a comment anywhere in the chapter,
//       <!-- constants: 512 2048 0.1 (the paper's base model; why, in words) -->
//     (the numbers before the parenthesis; written as the prose writes them). A declared constant
//     that no longer occurs in the prose fails (no stale lists). A number that only a varying
//     number matches fails too ("prose quotes a number that varies from run to run"): say "about a
//     third", or point at the block. A prose number matches a printed one if equal, or if it is the
//     printed one rounded to the prose's digits (0.39 for 0.391978; 246 for 246.1); a suffix M,
//     "million", k or "× 10⁻³" scales it (63.1M for 63,119,496); "94%" matches a printed 0.938 too.
//     Commas between thousands and a sign are not compared; m:ss times are compared as text.
//     Exempt: integers 0 to 10 (counts); years 1950 to 2029; numbers inside a word (AVX2, float32,
//     W_1) and in a path, file name, link target, URL or HTML tag; a chapter's name (02-matmul);
//     "chapter 11", "chapters 14-16", "chapters 1 to 13 and 16", "section 5.4", "figure 3",
//     "equation (2)", a numbered link "[15. Encoder-only]" and a numbered title "# 15. Encoder-only"
//     (a mention may continue on the next line).
//   - Paths. A mention dir/file.ext (ext: cpp h hpp md txt cmake py svg json tsv safetensors vocab
//     html yml sh), or file.ext:N or dir/file.ext:N-M, must name a file from the project's root,
//     from tutorials/ or from the chapter's folder (a bare file.ext:N: any file of that name in the
//     project), and N, M must not pass the file's last line. A link's target ](path) must exist.
//     Exempt: build/ and runs/ (what a build and a run write), a path the program, a COMMAND or a
//     checked block names (a file the program writes), and placeholders (OUT/, NN-topic.cpp).
//   - Order (check_order.cpp). A chapter names a later chapter only in a sentence that says so
//     ("later") or opens the next chapter ("Next, chapter 12: ..."): read in order, no page needs one
//     the reader has not reached.
#include "check_listings.h"

#include <algorithm>
#include <cctype>
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

constexpr size_t none = std::string::npos;

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

Lines read_lines(const std::string& path) {
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

static const std::regex& number_pattern() {
  static const std::regex number("-?[0-9]+([.:,][0-9]+)*(e[-+]?[0-9]+)?");
  return number;
}

std::vector<Number> numbers_in(const std::string& line) {
  std::vector<Number> found;
  for (auto m = std::sregex_iterator(line.begin(), line.end(), number_pattern()); m != std::sregex_iterator(); ++m)
    found.push_back({static_cast<size_t>(m->position()), static_cast<size_t>(m->position() + m->length()), m->str()});
  return found;
}

// A line with every number replaced by '#' and runs of spaces by one: how --update finds a block.
static std::string words_of(const std::string& line) {
  static const std::regex spaces(" +");
  return std::regex_replace(std::regex_replace(trim(line), number_pattern(), "#"), spaces, " ");
}

static bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// `name` occurs in `line` at `at`, not as part of a longer word ("ms" is not in "items").
static bool name_at(const std::string& line, size_t at, const std::string& name) {
  if (line.compare(at, name.size(), name) != 0) return false;
  const bool open_left = at == 0 || !is_word_char(name.front()) || !is_word_char(line[at - 1]);
  const size_t end = at + name.size();
  return open_left && (end == line.size() || !is_word_char(name.back()) || !is_word_char(line[end]));
}

// The cells of a table's line: runs of text between two or more spaces, as [begin, end) positions.
static std::vector<std::pair<size_t, size_t>> cells_of(const std::string& line) {
  std::vector<std::pair<size_t, size_t>> cells;
  for (size_t at = line.find_first_not_of(' '); at != none;) {
    size_t end = line.find("  ", at);
    if (end == none) end = line.size();
    cells.emplace_back(at, end);
    at = line.find_first_not_of(' ', end);
  }
  return cells;
}

// A cell of a header line that names a varying quantity: it contains a name and no digit.
static bool header_cell(const std::string& cell, const std::vector<std::string>& names) {
  if (cell.find_first_of("0123456789") != none) return false;
  for (const std::string& name : names)
    if (name.find('#') == none)
      for (size_t at = cell.find(name); at != none; at = cell.find(name, at + 1))
        if (name_at(cell, at, name)) return true;
  return false;
}

static bool unit_or_label(const std::string& line, const Number& n, const std::string& name) {
  const std::string before = line.substr(0, n.begin), after = line.substr(n.end);
  if (const size_t hash = name.find('#'); hash != none)  // a pattern: "in #" is the number after "in "
    return before.ends_with(name.substr(0, hash)) && after.starts_with(name.substr(hash + 1));
  const size_t unit_at = after.starts_with(' ') ? 1 : 0;  // "12.3 ms", "2.3x"
  if (name_at(after, unit_at, name)) return true;
  size_t label_end = before.size();  // "eta 0:42", "threads: 2", "n = 4"
  if (label_end > 0 && before[label_end - 1] == ' ') --label_end;
  if (label_end > 0 && (before[label_end - 1] == ':' || before[label_end - 1] == '=')) {
    --label_end;
    if (label_end > 0 && before[label_end - 1] == ' ') --label_end;
  }
  return label_end >= name.size() && name_at(before, label_end - name.size(), name);
}

std::vector<bool> varying_numbers(const Lines& block, size_t row, const std::vector<std::string>& names) {
  const std::vector<Number> numbers = numbers_in(block[row]);
  std::vector<std::pair<size_t, size_t>> columns;  // the header above: cells that name a quantity
  for (size_t above = row; above-- > 0 && columns.empty();) {
    const auto cells = cells_of(block[above]);
    if (cells.size() < 2) continue;
    for (const auto& [begin, end] : cells)
      if (header_cell(block[above].substr(begin, end - begin), names)) columns.emplace_back(begin, end);
  }
  std::vector<bool> varies(numbers.size(), false);
  for (size_t k = 0; k < numbers.size(); ++k) {
    for (const std::string& name : names) varies[k] = varies[k] || unit_or_label(block[row], numbers[k], name);
    for (const auto& [begin, end] : columns)
      varies[k] = varies[k] || (numbers[k].begin < end && begin < numbers[k].end);
  }
  return varies;
}

// The output's non-blank lines, trimmed, and the same with their numbers left out (words_of).
struct Printed {
  Lines lines, words;
};

enum class Compare { exactly, by_words, as_varies };

// Line `i` of the chapter, in block `b`, against a printed line: exactly; by its words; or, for a
// varies block, by its words with every number equal but those that the tag's names let vary.
static bool same_line(const Lines& md, const Block& b, size_t i, const Printed& printed, size_t k, Compare how) {
  if (how == Compare::exactly) return trim(md[i]) == printed.lines[k];
  if (words_of(md[i]) != printed.words[k]) return false;
  if (how == Compare::by_words) return true;
  const Lines block(md.begin() + static_cast<std::ptrdiff_t>(b.open + 1),
                    md.begin() + static_cast<std::ptrdiff_t>(b.close));
  const std::vector<bool> varies = varying_numbers(block, i - b.open - 1, b.names);
  const std::vector<Number> shown = numbers_in(md[i]), got = numbers_in(printed.lines[k]);
  for (size_t n = 0; n < shown.size(); ++n)
    if (!varies[n] && shown[n].text != got[n].text) return false;
  return true;
}

// Where each piece of the block (the lines between "..." lines) is in the output, as [first, last]
// indices into the printed lines; empty if the block is not there.
static std::vector<std::pair<size_t, size_t>> find_block(const Lines& md, const Block& b, const Printed& printed,
                                                         Compare how, size_t start = 0) {
  std::vector<std::vector<size_t>> pieces(1);  // the chapter's line numbers of each piece
  for (size_t i = b.open + 1; i < b.close; ++i) {
    const std::string line = trim(md[i]);
    if (line == "...")
      pieces.emplace_back();
    else if (!line.empty())
      pieces.back().push_back(i);
  }
  std::vector<std::pair<size_t, size_t>> found;
  size_t from = start;
  for (const std::vector<size_t>& piece : pieces) {
    if (piece.empty()) continue;
    size_t at = from;
    while (at + piece.size() <= printed.lines.size()) {
      size_t k = 0;
      while (k < piece.size() && same_line(md, b, piece[k], printed, at + k, how)) ++k;
      if (k == piece.size()) break;
      ++at;
    }
    if (at + piece.size() > printed.lines.size()) return {};
    found.emplace_back(at, at + piece.size() - 1);
    from = at + piece.size();
  }
  return found;
}

// --show-varies: each varies block with the numbers that may vary in [brackets], to check a tag.
static void print_varies(const Lines& md, const std::vector<Block>& blocks) {
  for (const Block& b : blocks) {
    if (b.tag != "varies") continue;
    const Lines block(md.begin() + static_cast<std::ptrdiff_t>(b.open + 1),
                      md.begin() + static_cast<std::ptrdiff_t>(b.close));
    std::cout << md[b.open - 1] << "\n";
    for (size_t row = 0; row < block.size(); ++row) {
      const std::vector<Number> numbers = numbers_in(block[row]);
      const std::vector<bool> varies = varying_numbers(block, row, b.names);
      size_t at = 0;
      for (size_t k = 0; k < numbers.size(); ++k) {
        std::cout << block[row].substr(at, numbers[k].begin - at);
        std::cout << (varies[k] ? "[" + numbers[k].text + "]" : numbers[k].text);
        at = numbers[k].end;
      }
      std::cout << block[row].substr(at) << "\n";
    }
  }
}

// The tag on the line before a ```text block: "varies (NAMES)" gives the names. (The machine is not
// in the tag, which a reader never sees, but in the line under the block: check_machines.cpp.)
static bool parse_varies(const std::string& tag, Block& b) {
  const std::string open = "<!-- output: varies (", close = ") -->";
  if (!tag.starts_with(open) || !tag.ends_with(close)) return false;
  const std::string names = tag.substr(open.size(), tag.size() - open.size() - close.size());
  if (names.find("; measured on ") != none) return false;  // the old form: an unknown tag, reported
  for (size_t at = 0; at <= names.size();) {
    size_t end = names.find(", ", at);
    if (end == none) end = names.size();
    if (const std::string name = trim(names.substr(at, end - at)); !name.empty()) b.names.push_back(name);
    at = end + 2;
  }
  if (!b.names.empty()) b.tag = "varies";
  return !b.names.empty();
}

// Why a varies block whose words were found at `found` (by_words) does not match: the first number
// that differs and that none of the tag's names lets vary.
static void explain_varies(const std::string& chapter_path, const Lines& md, const Block& b, const Printed& printed,
                           const std::vector<std::pair<size_t, size_t>>& found) {
  const Lines block(md.begin() + static_cast<std::ptrdiff_t>(b.open + 1),
                    md.begin() + static_cast<std::ptrdiff_t>(b.close));
  size_t piece = 0, k = found.empty() ? 0 : found[0].first;
  for (size_t i = b.open + 1; i < b.close && piece < found.size(); ++i) {
    if (trim(md[i]) == "...") {
      if (++piece < found.size()) k = found[piece].first;
      continue;
    }
    if (trim(md[i]).empty()) continue;
    const std::vector<bool> varies = varying_numbers(block, i - b.open - 1, b.names);
    const std::vector<Number> shown = numbers_in(md[i]), got = numbers_in(printed.lines[k++]);
    for (size_t n = 0; n < shown.size() && n < got.size(); ++n)
      if (!varies[n] && shown[n].text != got[n].text) {
        std::cerr << chapter_path << ":" << i + 1 << ": the number " << shown[n].text << " is printed as "
                  << got[n].text << ", and it is none of the quantities the tag lets vary\n";
        return;
      }
  }
}

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: check_listings CHAPTER.md PROGRAM.cpp [--run COMMAND]... [--missing TOOL]... [--no-run] "
                 "[--show-varies] "
                 "[--update | --update-varies]\n";
    return 2;
  }
  const std::string chapter_path = argv[1];
  Lines md = read_lines(chapter_path), program = read_lines(argv[2]), commands, missing;
  bool update = false, update_varies = false, run_commands = true, show_varies = false;
  for (int i = 3; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--run" && i + 1 < argc)
      commands.push_back(argv[++i]);
    else if (arg == "--missing" && i + 1 < argc)
      missing.push_back(argv[++i]);
    else if (arg == "--show-varies")
      show_varies = true;
    else if (arg == "--no-run")
      run_commands = false;
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
    Block b{.open = i, .close = i, .tag = "", .needs = "", .names = {}};
    std::string before = i > 0 ? trim(md[i - 1]) : "";
    static const std::regex needs_tag("(<!--.*) needs: ([A-Za-z0-9_-]+) -->");
    if (std::smatch m; std::regex_match(before, m, needs_tag)) {
      b.needs = m[2];
      before = m[1] == "<!--" ? "" : m[1].str() + " -->";  // <!-- needs: TOOL --> alone: an exact block
    }
    if (before.starts_with("<!-- not output") && before.ends_with("-->"))
      b.tag = "not output";
    else if (parse_varies(before, b)) {
    } else if (before.starts_with("<!--")) {
      ++failures;
      std::cerr << chapter_path << ":" << i << ": unknown tag (see check_listings.cpp): " << before << "\n";
    }
    for (++i; i < md.size() && trim(md[i]) != "```"; ++i) {
    }
    b.close = i;
    blocks.push_back(b);
  }
  if (show_varies) print_varies(md, blocks);
  int checked = 0, stale = 0, rewritten = 0, not_checked = 0;
  if (!commands.empty() && run_commands) {
    Lines output;
    Printed printed;
    for (const std::string& command : commands)
      if (!run(command, output)) {
        ++failures;
        std::cerr << "check_listings: `" << command << "` failed\n";
      }
    std::vector<size_t> where;  // printed[k] is output[where[k]]
    for (size_t k = 0; k < output.size(); ++k)
      if (!trim(output[k]).empty())
        printed.lines.push_back(trim(output[k])), printed.words.push_back(words_of(output[k])), where.push_back(k);
    for (const std::string& line : output) std::cout << line << "\n";  // for a failing test's log
    std::cout << "----\n";

    // Where --update looks for each block: after the previous block's place in the output, so that
    // two blocks with the same words (one table at two sizes) take the first and the second
    // occurrence, not both the first.
    std::vector<size_t> search_from(blocks.size(), 0);
    for (size_t k = 0, next = 0; k < blocks.size(); ++k) {
      if (blocks[k].tag == "not output") continue;
      search_from[k] = next;
      auto at = find_block(md, blocks[k], printed, Compare::by_words, next);
      if (at.empty()) at = find_block(md, blocks[k], printed, Compare::by_words);
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
      const bool varies = b->tag == "varies" && !update_varies;
      if (!find_block(md, *b, printed, varies ? Compare::as_varies : Compare::exactly).empty()) continue;
      const size_t index = static_cast<size_t>(blocks.rend() - b) - 1;
      auto found = find_block(md, *b, printed, Compare::by_words, search_from[index]);
      if (found.empty()) found = find_block(md, *b, printed, Compare::by_words);
      if (!update || found.empty() || (b->tag == "varies" && !update_varies)) {
        ++stale;
        std::cerr << chapter_path << ":" << b->open + 1 << ": this ```text block is not in the output"
                  << (found.empty() ? " (not even with other numbers)\n" : "; --update would rewrite it\n");
        if (b->tag == "varies" && !found.empty()) explain_varies(chapter_path, md, *b, printed, found);
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
  failures += check_prose(chapter_path, md, blocks, program, commands);
  failures += check_forward_references(chapter_path, md);
  failures += check_machines(chapter_path, md, blocks);
  std::cout << listings << " listings, " << blocks.size() << " text blocks (" << checked
            << " checked against the output, " << stale << " stale, " << rewritten << " rewritten, " << not_checked
            << " not checked for a missing tool), " << failures << " failures\n";
  return failures == 0 && listings > 0 ? 0 : 1;
}
