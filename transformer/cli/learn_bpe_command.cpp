// gradformer learn-bpe: a byte-level byte-pair tokenizer learned from text files
// (Tokenizer::learn_bpe, transformer/data/tokenizer.h), written as the JSON file that
// `gradformer tokenize --tokenizer` reads.

#include <chrono>
#include <iomanip>
#include <iostream>

#include "tensor/support/files.h"
#include "tensor/support/utf8.h"
#include "transformer/cli/commands.h"
#include "transformer/cli/flags.h"
#include "transformer/data/line_reader.h"
#include "transformer/data/tokenizer.h"
#include "transformer/model/config.h"

namespace gradformer {
namespace {

constexpr const char* kSummary =
    "Learn a byte-level byte-pair tokenizer from text files, as GPT-2's was learned: start from the 256\n"
    "bytes, cut the text into GPT-2's pre-tokens (a word with the space before it, a number, a run of\n"
    "punctuation or of whitespace; merges never cross from one into the next), and join the most\n"
    "frequent pair of neighbouring tokens into a new token, again and again, until the vocabulary has\n"
    "--vocab-size tokens: <pad> <s> </s> <unk> and any --specials first, then the bytes, then the merged\n"
    "tokens. It stops short when no two tokens are neighbours any more. Each file is read whole, as\n"
    "UTF-8 text. The JSON file written is what gradformer tokenize --tokenizer reads; an existing --out is\n"
    "replaced only with --force, and whole (written under a temporary name, then renamed).";

/// The extra specials of a comma-separated list ("<sep>,<mask>"), each checked as the tokenizer
/// checks it: a UsageError naming the flag.
std::vector<std::string> extra_specials(const std::string& list) {
  std::vector<std::string> names;
  for (size_t start = 0; !list.empty() && start <= list.size();) {
    const size_t comma = std::min(list.find(',', start), list.size());
    names.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  try {
    (void)Tokenizer::bytes(names);
  } catch (const ValueError& e) {
    throw UsageError(message("learn-bpe: --specials ", list, ": ", e.what()));
  }
  return names;
}

/// A file of text, whole: a DataError naming it and the first byte that is not UTF-8.
std::string read_text(const std::string& path) {
  std::string text = read_whole_file(path);
  if (const auto offset = invalid_utf8_at(text))
    throw DataError(message(path, ": not UTF-8 at byte offset ", *offset, " (byte 0x", std::hex, std::uppercase,
                            static_cast<int>(static_cast<unsigned char>(text[*offset])), std::dec,
                            "); learn-bpe learns from UTF-8 text"));
  return text;
}

/// "learned N merges from B bytes in F files (S s): T tokens (...), R tokens per byte of the text; wrote OUT"
void print_summary(const Tokenizer& learned, const std::vector<std::string_view>& views, int64_t bytes, double seconds,
                   int64_t vocab_size, const std::string& out) {
  // tokens per byte: how many ids the training text becomes under the result, per byte of it
  int64_t tokens = 0;
  for (const std::string_view text : views) tokens += static_cast<int64_t>(learned.encode(text).size());
  const BytePairEncoding& bpe = learned.byte_pair_encoding();
  const int64_t size = learned.size();
  std::cout << "learned " << counted(static_cast<long long>(bpe.merges().size()), "merge") << " from "
            << counted(bytes, "byte") << " in " << counted(static_cast<long long>(views.size()), "file") << " ("
            << std::fixed << std::setprecision(2) << seconds << " s): " << size << " tokens ("
            << learned.special_count() << " specials, 256 bytes, " << bpe.size() - 256 << " merged)"
            << (size < vocab_size
                    ? message(", short of the ", vocab_size, " asked: no pair of neighbouring tokens is left")
                    : "")
            << ", " << std::setprecision(3) << static_cast<double>(tokens) / static_cast<double>(bytes)
            << " tokens per byte of the text; wrote " << out << "\n";
}

}  // namespace

int learn_bpe_command(int argc, char** argv) {
  Flags f("learn-bpe", kSummary);
  f.add_positionals("FILE...", "the text files to learn from, each read whole");
  f.add("--vocab-size", "",
        "the tokens the tokenizer is to have, its specials and the 256 bytes included (required; at least 260)");
  f.add("--specials", "", "more special tokens after <pad> <s> </s> <unk>, comma-separated: '<sep>,<mask>'");
  f.add("--out", "", "the tokenizer file to write, JSON (required)");
  f.add_switch("--force", "replace --out if it exists");
  if (!f.parse(argc, argv)) {
    std::cout << f.help();
    return 0;
  }
  f.require("--vocab-size");
  f.require("--out");
  const std::vector<std::string> specials = extra_specials(f.text("--specials"));
  const auto special_count = static_cast<int64_t>(Vocab::specials.size() + specials.size());
  const int64_t vocab_size = f.integer_in(
      "--vocab-size", special_count + 256, TransformerConfig::max_vocab,
      message(" (its ", special_count, " specials and the 256 bytes at least, a model's largest vocabulary at most)"));
  const std::vector<std::string>& paths = f.positionals();
  if (paths.empty()) throw UsageError("learn-bpe: give the text files to learn from (see gradformer learn-bpe --help)");
  const std::string out = f.text("--out");
  if (const std::string input = input_written_over(paths, out); !input.empty())
    throw UsageError(message("learn-bpe: --out ", out, " is ", input,
                             ", one of the texts to learn from: the tokenizer would replace it; write it elsewhere"));
  check_output_flag("learn-bpe", "--out", out, f.on("--force"));

  std::vector<std::string> texts;
  int64_t bytes = 0;
  for (const std::string& path : paths) {
    texts.push_back(read_text(path));
    bytes += static_cast<int64_t>(texts.back().size());
  }
  if (bytes == 0)
    throw DataError(texts.size() == 1 ? "no text to learn from: the file is empty"
                                      : message("no text to learn from: the ", texts.size(), " files are empty"));

  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::string_view> views(texts.begin(), texts.end());
  // Each text is UTF-8 (read_text checked), so the pre-tokenizer accepts it.
  const Tokenizer learned = Tokenizer::learn_bpe(views, vocab_size, specials);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string json = learned.to_json() + "\n";
  write_file_whole(out, json);

  print_summary(learned, views, bytes, seconds, vocab_size, out);
  return 0;
}

}  // namespace gradformer
