// gradformer tokenize: the ids a tokenizer cuts standard input into (or its tokens, --pieces), and
// back from ids to text (--decode); the tokenizer of a checkpoint, of a learn-bpe file or a Hugging
// Face tokenizer.json, GPT-2's, or the bytes (transformer/data/tokenizer.h).
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>

#include "tensor/support/utf8.h"
#include "transformer/cli/commands.h"
#include "transformer/cli/flags.h"
#include "transformer/data/line_reader.h"
#include "transformer/data/text_pieces.h"
#include "transformer/data/tokenizer.h"
#include "transformer/store/checkpoint.h"
#include "transformer/store/import_gpt2.h"

namespace gradformer {
namespace {

constexpr const char* kSummary =
    "Read all of standard input as one text, byte for byte (its newlines, tabs and runs of spaces are\n"
    "part of it, a last newline too) and print the ids of its tokens on one line, separated by spaces\n"
    "(read and printed a piece at a time, cut where no token straddles the cut, such as a space or a\n"
    "line end between two words: a long text held a piece at a time; an error in a later piece stops\n"
    "it with status 1 after the ids of the pieces before).\n"
    "--pieces prints the tokens instead, as a person reads them (in a byte-level token a space shows as\n"
    "Ġ, a newline as Ċ: GPT-2's byte characters). --decode goes back: it reads ids separated by any\n"
    "whitespace and writes the text they stand for, exactly, nothing added (a block at a time: a word\n"
    "that is not an id stops it with status 1 after the text of the ids before).\n"
    "A tokenizer.json reads its text whole and decodes its ids all at once, through the file's decoder.\n"
    "\n"
    "The tokenizer is one of:\n"
    "  --checkpoint FILE  a model's: an encoder-decoder's target side unless --side source (what it\n"
    "                     writes: translate's output), a decoder-only model's only one, an encoder-only\n"
    "                     model's vocabulary. A model of words cuts the text at any whitespace (newlines\n"
    "                     too), a word it does not know is <unk>, and --decode joins words by one space.\n"
    "  --tokenizer FILE   a byte-pair tokenizer gradformer learn-bpe wrote (<pad> <s> </s> <unk> first),\n"
    "                     or a Hugging Face tokenizer.json (told by its \"model\" and \"version\" keys): a\n"
    "                     BPE model such as GPT-2's, Llama 2's, Mistral's or Llama 3's; its ids exactly,\n"
    "                     its added tokens (<|eot_id|>) found in the text, no <s> added\n"
    "  --gpt2 DIR         GPT-2's tokenizer, DIR/vocab.json and DIR/merges.txt (the hub's names) or\n"
    "                     DIR/encoder.json and DIR/vocab.bpe (the original release's): GPT-2's ids\n"
    "  --bytes            every byte one token, id 4 + its value: any bytes, nothing unknown\n"
    "A model of words and a byte-pair tokenizer read UTF-8 text only; the bytes tokenizer takes anything.";

constexpr const char* kSources[] = {"--checkpoint", "--tokenizer", "--gpt2", "--bytes"};

/// A file a flag names must be a file: a directory would be read as nothing.
void require_not_directory(const std::string& path, const char* flag) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    throw DataError(message(path, ": a directory, but ", flag, " takes a file"));
}

/// The tokenizer of a checkpoint, by its architecture: an encoder-decoder's side (target unless
/// `side` says source), a decoder-only model's one, an encoder-only model's vocabulary of words.
Tokenizer checkpoint_tokenizer(const std::string& path, const std::string& side) {
  require_not_directory(path, "--checkpoint");
  // the header alone: a tokenizer needs none of the tensors
  CheckpointFile file = read_checkpoint_header(path);
  if (file.arch != Architecture::EncoderDecoder && !side.empty())
    throw UsageError(message("tokenize: --side is for an encoder-decoder checkpoint; ", path, " is ",
                             a_architecture(file.arch), " one, with one tokenizer"));
  if (file.arch == Architecture::EncoderOnly) return std::move(file.encoder_only.vocab);
  return std::move(side == "source" ? file.info.source_tokenizer : file.info.target_tokenizer);
}

/// The one tokenizer the flags choose; a UsageError for none or several.
Tokenizer chosen_tokenizer(const Flags& f) {
  std::vector<std::string> given;
  for (const char* name : kSources)
    if (f.given(name)) given.emplace_back(name);
  if (given.empty())
    throw UsageError("tokenize: say which tokenizer: --checkpoint FILE, --tokenizer FILE, --gpt2 DIR or --bytes");
  if (given.size() > 1) {
    std::string names = given[0];
    for (size_t i = 1; i < given.size(); ++i) names += (i + 1 == given.size() ? " and " : ", ") + given[i];
    throw UsageError(message("tokenize: one tokenizer at a time, but ", names, " were given"));
  }
  const std::string side = f.given("--side") ? f.choice("--side", {"source", "target"}) : "";
  if (!side.empty() && given[0] != "--checkpoint") throw UsageError("tokenize: --side is for --checkpoint");
  if (given[0] == "--checkpoint") return checkpoint_tokenizer(f.text("--checkpoint"), side);
  if (given[0] == "--tokenizer") {
    require_not_directory(f.text("--tokenizer"), "--tokenizer");
    return Tokenizer::read_file(f.text("--tokenizer"));
  }
  if (given[0] == "--gpt2") {
    const std::filesystem::path dir = f.text("--gpt2");
    std::error_code error;
    if (!std::filesystem::is_directory(dir, error))
      throw DataError(message(f.text("--gpt2"), ": not a directory (--gpt2 takes the folder holding GPT-2's ",
                              "vocab.json and merges.txt, or encoder.json and vocab.bpe)"));
    return read_gpt2_tokenizer(dir.string(), "--gpt2").tokenizer;  // the hub's names or the release's, as import
  }
  return Tokenizer::bytes();
}

/// The ids of a piece of standard input's text that starts `offset` bytes into it. A model of words
/// reads words cut at any whitespace; it and a byte-pair tokenizer read UTF-8 text (a DataError naming
/// the first byte that is not: a words model's vocabulary holds UTF-8 words only, so such a word would
/// become <unk> without a word said).
std::vector<int64_t> encode_input(const Tokenizer& tokenizer, std::string text, size_t offset) {
  if (tokenizer.kind() == Tokenizer::Kind::Words) {
    for (char& c : text)
      if (c == '\n' || c == '\r' || c == '\v' || c == '\f') c = ' ';
  }
  if (tokenizer.kind() != Tokenizer::Kind::Bytes) {
    if (const auto bad = invalid_utf8_at(text))
      throw DataError(message("standard input: not UTF-8 at byte offset ", offset + *bad, " (byte 0x", std::hex,
                              std::uppercase, static_cast<int>(static_cast<unsigned char>(text[*bad])), std::dec,
                              "); a ",
                              tokenizer.kind() == Tokenizer::Kind::Words ? "model of words" : "byte-pair tokenizer",
                              " reads UTF-8 text (--bytes takes any bytes)"));
  }
  try {
    return tokenizer.encode(text);
  } catch (const ValueError& e) {
    throw DataError(message("standard input: ", e.what()));
  }
}

/// The longest word read as an id: an id has at most 19 digits; leading zeros and a sign aside, a
/// longer word is not one, and an endless word (/dev/zero) is refused once this long.
constexpr size_t kMaxIdBytes = 64;

/// Reads ids separated by any whitespace from `in`, a block at a time, and gives each block's ids to
/// `take` as soon as they are read: a DataError naming the first word that is not an integer or not an
/// id of the tokenizer, and its place among them.
void read_ids(std::FILE* in, int64_t vocabulary, const std::function<void(const std::vector<int64_t>&)>& take) {
  constexpr std::string_view kWhitespace = " \t\n\r\v\f";
  int64_t place = 0;  // of the last word read, from 1
  std::string word;   // the word being read, perhaps cut by the end of a block
  const auto end_word = [&](std::vector<int64_t>& ids) {
    if (word.empty()) return;
    ++place;
    int64_t id = 0;
    const auto [stop, error] = std::from_chars(word.data(), word.data() + word.size(), id);
    if (stop != word.data() + word.size() || (error != std::errc() && error != std::errc::result_out_of_range))
      throw DataError(message("standard input: id number ", place, ", '", word, "', is not an integer"));
    if (error == std::errc::result_out_of_range || id < 0 || id >= vocabulary)
      throw DataError(message("standard input: id number ", place, ", ", word, ", is not an id of the tokenizer (0 to ",
                              vocabulary - 1, ")"));
    ids.push_back(id);
    word.clear();
  };
  std::vector<char> block(size_t{1} << 16);
  errno = 0;
  for (size_t n; (n = std::fread(block.data(), 1, block.size(), in)) > 0;) {
    std::vector<int64_t> ids;
    for (size_t i = 0; i < n; ++i) {
      if (kWhitespace.find(block[i]) != std::string_view::npos) {
        end_word(ids);
        continue;
      }
      if (word.size() == kMaxIdBytes)
        throw DataError(message("standard input: id number ", place + 1, ", '", word.substr(0, 16),
                                "...', is longer than ", kMaxIdBytes, " bytes: not an id of the tokenizer"));
      word += block[i];
    }
    take(ids);
  }
  if (std::ferror(in))
    throw ReadError(message("standard input: read failed: ", errno != 0 ? std::strerror(errno) : "the stream failed"));
  std::vector<int64_t> last;
  end_word(last);
  take(last);
}

}  // namespace

int tokenize_command(int argc, char** argv) {
  Flags f("tokenize", kSummary);
  f.add("--checkpoint", "", "a model checkpoint whose tokenizer to use");
  f.add("--side", "", "with an encoder-decoder --checkpoint: source or target (default target)");
  f.add("--tokenizer", "", "a tokenizer file gradformer learn-bpe wrote, or a Hugging Face tokenizer.json");
  f.add("--gpt2", "", "a folder holding GPT-2's vocab.json and merges.txt (or encoder.json and vocab.bpe)");
  f.add_switch("--bytes", "the bytes tokenizer: each byte a token");
  f.add_switch("--decode", "read ids, write the text they stand for");
  f.add_switch("--pieces", "print the tokens instead of their ids");
  if (!f.parse(argc, argv)) {
    std::cout << f.help();
    return 0;
  }
  if (f.on("--decode") && f.on("--pieces"))
    throw UsageError("tokenize: --decode reads ids and --pieces prints tokens: give one of them");
  const Tokenizer tokenizer = chosen_tokenizer(f);
  if (f.on("--decode")) {
    bool first = true;  // a model of words puts one space between words, also from one block to the next
    // A hub tokenizer's decoder reads the ids as one sequence (Llama 2's drops the first space only).
    const bool whole = tokenizer.kind() == Tokenizer::Kind::Hub;
    std::vector<int64_t> all;
    read_ids(stdin, tokenizer.size(), [&](const std::vector<int64_t>& ids) {
      if (whole) all.insert(all.end(), ids.begin(), ids.end());
      if (ids.empty() || whole) return;
      std::string text = first || tokenizer.kind() != Tokenizer::Kind::Words ? "" : " ";
      text += tokenizer.decode_bytes(ids);
      std::cout.write(text.data(), static_cast<std::streamsize>(text.size()));
      first = false;
    });
    const std::string text = whole ? tokenizer.decode_bytes(all) : "";
    std::cout.write(text.data(), static_cast<std::streamsize>(text.size()));
    return 0;
  }
  bool first = true;
  read_text_pieces(stdin, "standard input", tokenizer.kind(), [&](std::string_view piece, size_t offset) {
    std::string line;
    for (const int64_t id : encode_input(tokenizer, std::string(piece), offset)) {
      line += first ? "" : " ";
      line += f.on("--pieces") ? tokenizer.piece(id) : std::to_string(id);
      first = false;
    }
    std::cout << line;
  });
  std::cout << "\n";
  return 0;
}

}  // namespace gradformer
