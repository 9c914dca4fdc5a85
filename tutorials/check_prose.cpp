// check_listings' prose checks (the rules are in check_listings.cpp's first comment): every number in
// a chapter's prose is printed in one of its checked blocks, is in its program or commands, or is a
// declared constant; every path and file:line it mentions exists.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include "check_listings.h"

namespace fs = std::filesystem;

const std::regex& chapter_mention() {
  static const std::regex mention("\\b[Cc]hapters?\\s+[0-9]+((\\s*(,|-|–|to|and|or)\\s*)[0-9]+)*");
  return mention;
}

namespace {

constexpr size_t none = std::string::npos;

// A number as prose and sources write it: "1,000" is 1000, "-62.89" is 62.89 (a sign is not compared),
// "4:38" a time compared as text.
struct Value {
  std::string text;  // without commas and sign
  double value = 0;
  int decimals = 0;  // digits after the point
  bool is_time = false;
};

Value value_of(std::string text) {
  Value v;
  std::erase(text, ',');
  if (!text.empty() && text[0] == '-') text.erase(0, 1);
  v.text = text;
  v.is_time = text.find(':') != none || std::count(text.begin(), text.end(), '.') > 1;
  if (v.is_time) return v;
  v.value = std::stod(text);
  const size_t point = text.find('.'), exponent = text.find_first_of("eE");
  if (point != none) v.decimals = static_cast<int>((exponent == none ? text.size() : exponent) - point - 1);
  return v;
}

// The prose's numbers: those that stand alone, not digits inside a name (AVX2, float32, W_1, x86_64).
std::vector<Number> prose_numbers(const std::string& line) {
  static const std::regex number("[0-9]+(,[0-9]{3})*(\\.[0-9]+)*(:[0-9]{2})*([eE][-+]?[0-9]+)?");
  auto word_char = [&](size_t at) {
    return at < line.size() && (std::isalnum(static_cast<unsigned char>(line[at])) || line[at] == '_');
  };
  std::vector<Number> found;
  for (size_t i = 0; i < line.size(); ++i) {
    if (!word_char(i)) continue;
    std::smatch m;
    const bool inside_name = i > 0 && (word_char(i - 1) || line[i - 1] == '.');
    if (!inside_name && std::isdigit(static_cast<unsigned char>(line[i])) &&
        std::regex_search(line.cbegin() + static_cast<std::ptrdiff_t>(i), line.cend(), m, number,
                          std::regex_constants::match_continuous)) {
      const size_t end = i + static_cast<size_t>(m.length());
      const bool hex = m.str() == "0" && end < line.size() && line[end] == 'x';
      if (!hex && (end == line.size() || (line[end] != '_' && !std::isdigit(static_cast<unsigned char>(line[end]))))) {
        found.push_back({i, end, m.str()});
        i = end - 1;
        continue;
      }
    }
    while (word_char(i + 1) || (i + 2 < line.size() && line[i + 1] == '.' && word_char(i + 2))) ++i;  // the word
  }
  return found;
}

// How much the words after a prose number scale it: "63.1M", "37k", "2.2 × 10⁻³".
double scale_after(const std::string& line, size_t end) {
  const std::string after = line.substr(end, 24);
  if (after.starts_with("M ") || after.starts_with("M)") || after.starts_with("M,") || after == "M" ||
      after.starts_with(" million"))
    return 1e6;
  if (after.starts_with("k ") || after.starts_with(" thousand")) return 1e3;
  for (const std::string times : {" × 10", " · 10", "·10", "×10"})
    if (after.starts_with(times)) {
      std::string rest = after.substr(times.size());
      const bool minus = rest.starts_with("⁻");
      if (minus) rest = rest.substr(std::string("⁻").size());
      static const std::vector<std::string> digits = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
      int exponent = 0, count = 0;
      for (bool more = true; more;) {
        more = false;
        for (size_t d = 0; d < digits.size() && !more; ++d)
          if (rest.starts_with(digits[d]))
            exponent = exponent * 10 + static_cast<int>(d), ++count, rest = rest.substr(digits[d].size()), more = true;
      }
      if (count > 0) return std::pow(10.0, minus ? -exponent : exponent);
    }
  return 1;
}

// A prose number is `source` when it is the same number, or `source` rounded to the prose's digits
// ("0.39" for a printed 0.391978, "246 s" for 246.1 s).
bool same_number(const Value& prose, const Value& source, double scale = 1) {
  if (prose.is_time || source.is_time) return prose.text == source.text;
  const double value = prose.value * scale;
  if (value == source.value) return true;
  if (source.decimals <= prose.decimals && scale == 1) return false;
  const double step = std::pow(10.0, -prose.decimals) * scale;  // the prose's last digit
  return std::fabs(source.value - value) <= step / 2 * (1 + 1e-9);
}

struct Known {
  std::vector<Value> exact, varying;
  std::vector<size_t> varying_line;  // the chapter's line of each varying number (1-based)
};

void add_all(std::vector<Value>& to, const std::string& line) {
  for (const Number& n : prose_numbers(line)) to.push_back(value_of(n.text));
}

// What prose may quote: the program's and the commands' numbers, the listings', and the checked
// blocks' numbers (exact ones, and apart those a varies block's names let vary).
Known known_numbers(const Lines& md, const std::vector<Block>& blocks, const Lines& program, const Lines& commands) {
  Known known;
  for (const std::string& line : program) add_all(known.exact, line);
  for (const std::string& line : commands) add_all(known.exact, line);
  bool in_cpp = false;
  for (const std::string& line : md) {
    if (trim(line).starts_with("```"))
      in_cpp = trim(line) == "```cpp";
    else if (in_cpp)
      add_all(known.exact, line);
  }
  for (const Block& b : blocks) {
    if (b.tag == "not output") continue;
    const Lines block(md.begin() + static_cast<std::ptrdiff_t>(b.open + 1),
                      md.begin() + static_cast<std::ptrdiff_t>(b.close));
    for (size_t row = 0; row < block.size(); ++row) {
      const std::vector<Number> numbers = numbers_in(block[row]);
      const std::vector<bool> varies =
          b.tag == "varies" ? varying_numbers(block, row, b.names) : std::vector<bool>(numbers.size(), false);
      for (size_t k = 0; k < numbers.size(); ++k) {
        (varies[k] ? known.varying : known.exact).push_back(value_of(numbers[k].text));
        if (varies[k]) known.varying_line.push_back(b.open + 2 + row);
      }
    }
  }
  return known;
}

// Blanks (with spaces, so positions stay) what is not prose to check: HTML comments and tags, link
// targets, URLs, the machine under a varies block, and the mentions the rules exempt: chapter,
// section, figure and equation numbers, a numbered link to a chapter ("[15. Encoder-only]"), file and
// program names, paths.
std::string checked_prose(std::string line) {
  static const std::vector<std::regex> exempt = {
      std::regex("<!--.*?-->"),
      std::regex("<sub>Measured on .*</sub>"),  // the machine under a varies block (check_machines.cpp)
      std::regex("<[^>\\n]*>"),
      std::regex("\\]\\([^)\\n]*\\)"),
      std::regex("https?://[^ )>]+"),
      chapter_mention(),
      std::regex("\\b([Ss]ections?|[Ff]igures?|[Ee]quations?|[Ee]q\\.)\\s*\\(?[0-9]+(\\.[0-9]+)*\\)?"),
      std::regex("\\[[0-9]+\\. "),
      std::regex("(^|\\n)#+ [0-9]+\\. "),
      std::regex("[A-Za-z0-9_.~-]*[A-Za-z][A-Za-z0-9_.~-]*/[A-Za-z0-9_./~-]*[A-Za-z][A-Za-z0-9_./~-]*"),
      std::regex("[A-Za-z0-9_.-]+\\.(cpp|h|md|txt|cmake|py|svg|json|tsv|safetensors|vocab|html)(:[0-9]+(-[0-9]+)?)?"),
      std::regex("\\b[0-9]{2}-[a-z][a-z0-9-]*[a-z]")};
  for (const std::regex& r : exempt)
    for (auto m = std::sregex_iterator(line.begin(), line.end(), r); m != std::sregex_iterator(); ++m)
      std::fill_n(line.begin() + m->position(), m->length(), ' ');  // same length: the iterator stays valid
  return line;
}

bool exempt_number(const Value& v) {
  const bool integer = !v.is_time && v.decimals == 0 && v.text.find_first_of("eE") == none;
  return integer && ((v.value >= 0 && v.value <= 10) || (v.value >= 1950 && v.value <= 2029));  // counts, years
}

struct Constant {
  Value value;
  size_t line = 0;
  bool used = false;
};

// <!-- constants: 512 2048 0.1 (why) -->: the numbers before the parenthesis.
std::vector<Constant> declared_constants(const Lines& md) {
  std::vector<Constant> constants;
  for (size_t i = 0; i < md.size(); ++i)
    for (size_t at = md[i].find("<!-- constants:"); at != none; at = md[i].find("<!-- constants:", at + 1)) {
      const size_t end = md[i].find_first_of("(>", at);
      for (const Number& n : prose_numbers(md[i].substr(at + 15, end == none ? none : end - at - 15)))
        constants.push_back({value_of(n.text), i + 1, false});
    }
  return constants;
}

int check_numbers(const std::string& chapter, const Lines& md, const std::vector<Block>& blocks, const Lines& program,
                  const Lines& commands) {
  const Known known = known_numbers(md, blocks, program, commands);
  std::vector<Constant> constants = declared_constants(md);
  int failures = 0;
  bool in_block = false, in_comment = false;
  std::string previous;  // the end of the line before: "chapters 14\nand 15" is one mention
  for (size_t i = 0; i < md.size(); ++i) {
    if (trim(md[i]).starts_with("```")) in_block = !in_block, previous.clear();
    if (in_block || trim(md[i]).starts_with("```")) continue;
    std::string line = md[i];
    if (in_comment) {
      const size_t end = line.find("-->");
      in_comment = end == none;
      line = in_comment ? "" : std::string(end + 3, ' ') + line.substr(end + 3);
    }
    if (const size_t open = line.rfind("<!--"); open != none && line.find("-->", open) == none)
      line = line.substr(0, open), in_comment = true;
    const std::string joined = checked_prose(previous + "\n" + line);
    previous = std::regex_replace(line, std::regex("<!--.*?-->"), " ");
    previous = previous.size() > 40 ? previous.substr(previous.size() - 40) : previous;
    line = joined.substr(joined.size() - line.size());
    for (const Number& n : prose_numbers(line)) {
      const Value v = value_of(n.text);
      const double scale = scale_after(line, n.end);
      bool ok = exempt_number(v) && scale == 1;
      for (Constant& c : constants)
        if (v.text == c.value.text) ok = c.used = true;
      const bool percent = n.end < line.size() && line[n.end] == '%';  // "94%" of a printed 0.938
      for (const Value& k : known.exact) ok = ok || same_number(v, k, scale) || (percent && same_number(v, k, 0.01));
      if (ok) continue;
      ++failures;
      size_t varying_at = 0;
      for (size_t k = 0; k < known.varying.size() && varying_at == 0; ++k)
        if (same_number(v, known.varying[k], scale)) varying_at = known.varying_line[k];
      std::cerr << chapter << ":" << i + 1 << ": ";
      if (varying_at > 0)
        std::cerr << "prose quotes a number that varies from run to run: " << n.text << " (line " << varying_at
                  << "); say it in words or point at the block\n";
      else
        std::cerr << "the number " << n.text
                  << " in the prose is not printed in a checked block, not in the program or its commands, and not "
                     "declared a constant\n";
    }
  }
  for (const Constant& c : constants)
    if (!c.used) {
      ++failures;
      std::cerr << chapter << ":" << c.line << ": the declared constant " << c.value.text
                << " does not occur in the prose (a stale list)\n";
    }
  return failures;
}

size_t line_count(const fs::path& file) { return read_lines(file.string()).size(); }

// The files a mention may name: from the project's root, from tutorials/, from the chapter's folder,
// or, for a bare file name, any file of that name in the project.
std::vector<fs::path> resolve(const std::string& mention, const fs::path& root, const fs::path& chapter_dir) {
  std::vector<fs::path> found;
  for (const fs::path& base : {root, root / "tutorials", chapter_dir})
    if (fs::is_regular_file(base / mention)) found.push_back(base / mention);
  if (found.empty() && mention.find('/') == none) {
    std::error_code error;
    for (auto it = fs::recursive_directory_iterator(root, error); it != fs::recursive_directory_iterator(); ++it) {
      const std::string name = it->path().filename().string();
      if (it->is_directory() && (name.starts_with("build") || name.starts_with(".")))
        it.disable_recursion_pending();
      else if (it->is_regular_file() && name == mention)
        found.push_back(it->path());
    }
  }
  return found;
}

// Whether `text` occurs in the program, its commands or a checked block: a file the program writes.
bool printed_or_used(const std::string& text, const Lines& md, const std::vector<Block>& blocks, const Lines& program,
                     const Lines& commands) {
  for (const Lines* lines : {&program, &commands})
    for (const std::string& line : *lines)
      if (line.find(text) != none) return true;
  for (const Block& b : blocks)
    for (size_t i = b.open + 1; b.tag != "not output" && i < b.close; ++i)
      if (md[i].find(text) != none) return true;
  return false;
}

int check_paths(const std::string& chapter, const Lines& md, const std::vector<Block>& blocks, const Lines& program,
                const Lines& commands) {
  static const std::regex mention(
      "(\\.{1,2}/)*([A-Za-z0-9_.-]+/"
      ")*[A-Za-z0-9_-][A-Za-z0-9_.-]*\\.(cpp|h|hpp|md|txt|cmake|py|svg|json|tsv|safetensors|"
      "vocab|html|yml|sh)\\b(:([0-9]+)(-([0-9]+))?)?");
  static const std::regex link("\\]\\(([^)#]+)(#[^)]*)?\\)");
  const fs::path chapter_dir = fs::path(chapter).parent_path(), root = (chapter_dir / "..").lexically_normal();
  int failures = 0;
  bool in_block = false;
  for (size_t i = 0; i < md.size(); ++i) {
    if (trim(md[i]).starts_with("```")) in_block = !in_block;
    if (in_block || trim(md[i]).starts_with("```")) continue;
    const std::string line = std::regex_replace(md[i], std::regex("https?://[^ )>]+"), " ");
    const std::string no_code = std::regex_replace(line, std::regex("`[^`]*`"), " ");  // `[&](int row)` is code
    for (auto m = std::sregex_iterator(no_code.begin(), no_code.end(), link); m != std::sregex_iterator(); ++m)
      if (!fs::exists(chapter_dir / (*m)[1].str()))
        ++failures, std::cerr << chapter << ":" << i + 1 << ": the link's target " << (*m)[1] << " does not exist\n";
    for (auto m = std::sregex_iterator(line.begin(), line.end(), mention); m != std::sregex_iterator(); ++m) {
      const std::string path = m->str().substr(0, m->str().find(':'));
      const bool has_line = (*m)[5].matched;
      if (path.find('/') == none && !has_line) continue;
      if (path.starts_with("build/") || path.starts_with("./build/") || path.starts_with("runs/")) continue;
      if (std::regex_search(path, std::regex("(^|/)([A-Z]{2,}|NN-[a-z]+)[/.]"))) continue;  // OUT/, NN-topic.cpp
      const std::vector<fs::path> files = resolve(path, root, chapter_dir);
      if (files.empty()) {
        if (printed_or_used(path, md, blocks, program, commands)) continue;  // a file the program writes
        ++failures, std::cerr << chapter << ":" << i + 1 << ": the path " << path << " does not exist\n";
        continue;
      }
      const size_t last = has_line ? std::stoul((*m)[(*m)[7].matched ? 7 : 5].str()) : 0;
      size_t lines = 0;
      for (const fs::path& f : files) lines = std::max(lines, line_count(f));
      if (has_line && last > lines)
        ++failures, std::cerr << chapter << ":" << i + 1 << ": " << m->str() << " is past the end of " << path << " ("
                              << lines << " lines)\n";
    }
  }
  return failures;
}

}  // namespace

int check_prose(const std::string& chapter_path, const Lines& md, const std::vector<Block>& blocks,
                const Lines& program, const Lines& commands) {
  return check_numbers(chapter_path, md, blocks, program, commands) +
         check_paths(chapter_path, md, blocks, program, commands);
}
