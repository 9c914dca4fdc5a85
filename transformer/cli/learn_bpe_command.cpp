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
#include "transformer/data/text_pieces.h"
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
    "tokens. It stops short when no two tokens are neighbours any more. Each file is UTF-8 text, read a\n"
    "piece at a time: what is kept is each distinct pre-token and its count. The JSON file written is\n"
    "what gradformer tokenize --tokenizer reads; an existing --out is replaced only with --force, and\n"
    "whole (written under a temporary name, then renamed).";

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

/// Adds the pre-tokens of the file at `path` to `counts`, reading it a piece at a time, each cut
/// between two pre-tokens (so the counts are the whole file's, and only the distinct pre-tokens and
/// one piece are held): the file's size in bytes. A DataError naming the first byte that is not UTF-8.
int64_t count_pre_tokens(PreTokenCounts& counts, const std::string& path) {
  int64_t bytes = 0;
  read_text_pieces(
      open_for_reading(path).get(), path, Tokenizer::Kind::Bpe, [&](std::string_view piece, size_t offset) {
        if (const auto bad = invalid_utf8_at(piece))
          throw DataError(message(path, ": not UTF-8 at byte offset ", offset + *bad, " (byte 0x", std::hex,
                                  std::uppercase, static_cast<int>(static_cast<unsigned char>(piece[*bad])), std::dec,
                                  "); learn-bpe learns from UTF-8 text"));
        Tokenizer::count_pre_tokens(counts, piece);
        bytes += static_cast<int64_t>(piece.size());
      });
  return bytes;
}

/// "learned N merges from B bytes in F files (S s): T tokens (...), R tokens per byte of the text; wrote OUT"
void print_summary(const Tokenizer& learned, const PreTokenCounts& counts, int64_t files, int64_t bytes, double seconds,
                   int64_t vocab_size, const std::string& out) {
  // tokens per byte: how many ids the training text becomes under the result, per byte of it (each
  // pre-token is encoded alone, so the text's ids are its pre-tokens', each as often as it occurs)
  const BytePairEncoding& bpe = learned.byte_pair_encoding();
  int64_t tokens = 0;
  for (const auto& [pre_token, count] : counts) tokens += count * static_cast<int64_t>(bpe.encode({pre_token}).size());
  const int64_t size = learned.size();
  std::cout << "learned " << counted(static_cast<long long>(bpe.merges().size()), "merge") << " from "
            << counted(bytes, "byte") << " in " << counted(static_cast<long long>(files), "file") << " (" << std::fixed
            << std::setprecision(2) << seconds << " s): " << size << " tokens (" << learned.special_count()
            << " specials, 256 bytes, " << bpe.size() - 256 << " merged)"
            << (size < vocab_size
                    ? message(", short of the ", vocab_size, " asked: no pair of neighbouring tokens is left")
                    : "")
            << ", " << std::setprecision(3) << static_cast<double>(tokens) / static_cast<double>(bytes)
            << " tokens per byte of the text; wrote " << out << "\n";
}

}  // namespace

int learn_bpe_command(int argc, char** argv) {
  Flags f("learn-bpe", kSummary);
  f.add_positionals("FILE...", "the text files to learn from (UTF-8)");
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

  PreTokenCounts counts;
  int64_t bytes = 0;
  for (const std::string& path : paths) bytes += count_pre_tokens(counts, path);
  if (bytes == 0)
    throw DataError(paths.size() == 1 ? "no text to learn from: the file is empty"
                                      : message("no text to learn from: the ", paths.size(), " files are empty"));

  const auto start = std::chrono::steady_clock::now();
  const Tokenizer learned = Tokenizer::learn_bpe_from_counts(counts, vocab_size, specials);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string json = learned.to_json() + "\n";
  write_file_whole(out, json);

  print_summary(learned, counts, static_cast<int64_t>(paths.size()), bytes, seconds, vocab_size, out);
  return 0;
}

}  // namespace gradformer
