#include "transformer/cli/flags.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>
#include <string_view>

#include "tensor/support/files.h"

namespace gradformer {

Flags::Flags(std::string command, std::string summary) : command_(std::move(command)), summary_(std::move(summary)) {}

void Flags::add(const std::string& name, const std::string& default_value, const std::string& help) {
  flags_[name] = Flag{default_value, help, default_value};
  order_.push_back(name);
}

void Flags::add_switch(const std::string& name, const std::string& help) {
  Flag f;
  f.help = help;
  f.is_switch = true;
  flags_[name] = f;
  order_.push_back(name);
}

void Flags::add_optional(const std::string& name, const std::string& help) {
  add(name, "", help);
  flags_[name].value_optional = true;
}

void Flags::add_positional(const std::string& name, const std::string& help) {
  Flag f;
  f.help = help;
  flags_[name] = f;
  positional_ = name;
}

void Flags::add_positionals(const std::string& name, const std::string& help) {
  add_positional(name, help);
  many_positionals_ = true;
}

bool asks_for_help(int argc, char** argv, int first) {
  return std::any_of(argv + std::min(first, argc), argv + argc,
                     [](const char* a) { return std::string_view(a) == "--help" || std::string_view(a) == "-h"; });
}

bool Flags::parse(int argc, char** argv, int first) {
  if (asks_for_help(argc, argv, first)) return false;
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool inline_value = false;
    if (const auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);  // --flag=value
      arg = arg.substr(0, eq);
      inline_value = true;
    }
    if (!positional_.empty() && arg.rfind("-", 0) != 0 && (many_positionals_ || !flags_[positional_].given)) {
      if (!flags_[positional_].given) flags_[positional_].value = arg;
      flags_[positional_].given = true;
      positionals_.push_back(arg);
      continue;
    }
    const auto it = flags_.find(arg);
    if (it == flags_.end() || it->first == positional_)
      throw UsageError(message(command_, ": unknown ", arg.rfind("-", 0) == 0 ? "flag " : "argument ", arg,
                               " (see gradformer ", command_, " --help)"));
    Flag& flag = it->second;
    if (flag.is_switch) {
      if (inline_value) throw UsageError(message(command_, ": ", arg, " takes no value"));
      // Not `= "1"`: g++ 12 at -O2 then warns -Wrestrict inside std::string (its bug 105329).
      flag.value = std::string(1, '1');
    } else if (inline_value) {
      flag.value = value;
    } else if (flag.value_optional && (i + 1 >= argc || std::string(argv[i + 1]).rfind("-", 0) == 0)) {
      flag.value.clear();
    } else {
      if (i + 1 >= argc) throw UsageError(message(command_, ": ", arg, " needs a value"));
      flag.value = argv[++i];
    }
    flag.given = true;
  }
  return true;
}

std::string Flags::help() const {
  std::ostringstream out;
  out << "usage: gradformer " << command_ << " [flags]" << (positional_.empty() ? "" : " " + positional_) << "\n\n"
      << summary_;
  if (!positional_.empty())
    out << "\n\n  " << positional_ << std::string(positional_.size() < 24 ? 24 - positional_.size() : 1, ' ')
        << flags_.at(positional_).help;
  out << "\n\nflags:\n";
  for (const std::string& name : order_) {
    const Flag& f = flags_.at(name);
    std::string left = "  " + name + (f.is_switch ? "" : f.value_optional ? " [X]" : " X");
    out << left << std::string(left.size() < 26 ? 26 - left.size() : 1, ' ') << f.help;
    if (!f.is_switch && !f.default_value.empty()) out << " (default " << f.default_value << ")";
    out << "\n";
  }
  out << "  --help                  this text\n";
  return out.str();
}

const Flags::Flag& Flags::find(const std::string& name) const {
  const auto it = flags_.find(name);
  if (it == flags_.end())
    throw ValueError(message("Flags: no flag ", name, " was declared"));  // a bug, not a user error
  return it->second;
}

std::string Flags::default_text(const std::string& name) const {
  const Flag& f = find(name);
  return f.is_switch ? "off" : f.default_value;
}

std::string defaults_table(const std::vector<std::pair<std::string, Flags>>& columns,
                           const std::vector<std::string>& except) {
  if (columns.empty()) return "";
  std::vector<std::vector<std::string>> rows = {{""}};  // the header: a blank corner, then the titles
  for (const auto& [title, flags] : columns) rows.front().push_back(title);
  for (const std::string& name : columns.front().second.names()) {
    if (std::find(except.begin(), except.end(), name) != except.end()) continue;
    std::vector<std::string> row = {name};
    for (const auto& [title, flags] : columns) row.push_back(flags.default_text(name));
    if (std::any_of(row.begin() + 2, row.end(), [&](const std::string& v) { return v != row[1]; })) rows.push_back(row);
  }
  std::vector<size_t> width(rows.front().size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) line += "  " + row[c] + std::string(width[c] - row[c].size(), ' ');
    out += line.substr(0, line.find_last_not_of(' ') + 1) + "\n";
  }
  return out;
}

bool Flags::has(const std::string& name) const { return !find(name).value.empty(); }
bool Flags::given(const std::string& name) const { return find(name).given; }
std::vector<std::string> Flags::given_names() const {
  std::vector<std::string> names;
  for (const std::string& name : order_)
    if (flags_.at(name).given) names.push_back(name);
  return names;
}

void Flags::require(const std::string& name) const {
  if (!has(name)) throw UsageError(message(command_, ": ", name, " is required"));
}
std::string Flags::text(const std::string& name) const { return find(name).value; }
bool Flags::on(const std::string& name) const { return find(name).value == "1"; }

int64_t Flags::integer(const std::string& name) const {
  const std::string& v = find(name).value;
  int64_t out = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || end != v.data() + v.size())
    throw UsageError(message(command_, ": ", name, " expects an integer, got '", v, "'"));
  return out;
}

int64_t Flags::integer_in(const std::string& name, int64_t min, int64_t max, const std::string& why) const {
  const int64_t value = integer(name);
  if (value >= min && value <= max) return value;
  if (max == std::numeric_limits<int64_t>::max())
    throw UsageError(message(command_, ": ", name, " must be at least ", min, why, ", got ", value));
  throw UsageError(message(command_, ": ", name, " must be from ", min, " to ", max, why, ", got ", value));
}

double Flags::number(const std::string& name) const {
  const std::string& v = find(name).value;
  char* end = nullptr;
  const double out = std::strtod(v.c_str(), &end);
  if (v.empty() || end != v.c_str() + v.size() || !std::isfinite(out))
    throw UsageError(message(command_, ": ", name, " expects a number, got '", v, "'"));
  return out;
}

std::string Flags::choice(const std::string& name, const std::vector<std::string>& choices) const {
  const std::string& v = find(name).value;
  std::string all;
  for (const std::string& c : choices) {
    if (c == v) return v;
    all += (all.empty() ? "" : ", ") + c;
  }
  throw UsageError(message(command_, ": ", name, " must be one of ", all, "; got '", v, "'"));
}

void refuse_output_over_input(const char* command, const char* flag, const std::string& out,
                              const std::vector<std::string>& inputs, const std::string& what,
                              const std::string& written) {
  if (out.empty()) return;
  std::vector<std::string> given;
  for (const std::string& path : inputs)
    if (!path.empty()) given.push_back(path);
  const std::string input = input_written_over(given, out);
  if (input.empty()) return;
  throw UsageError(message(command, ": ", flag, " ", out, " is ", input, ", ", what, ": writing ", written,
                           " would replace it; write it elsewhere"));
}

void check_output_flag(const char* command, const char* flag, const std::string& out, bool force) {
  try {
    check_output_path(out, force);
  } catch (const OutputError& e) {
    throw UsageError(message(command, ": ", flag, " ", e.what()));
  }
}

}  // namespace gradformer
