// Chapter 16: tokens. The companion program of tutorials/16-tokens.md: every listing of the chapter
// is a piece of this file, and every output the chapter shows is what this program prints. It exits
// non-zero if a claim does not hold.
// The text is tutorials/data/chapters.txt, chapters 0 to 18 as they stood when this chapter was
// written (a frozen copy); a path given as an argument replaces it.
//   16-tokens [PATH]           the chapter's run: its language models train for a few minutes
//   16-tokens --quick [PATH]   the same code on tiny models for a few steps (what the test suite runs)
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "claims.h"
#include "transformer/data/bpe.h"
#include "transformer/data/learn_bpe.h"
#include "transformer/data/line_reader.h"
#include "transformer/data/pre_tokenize.h"
#include "transformer/data/text_blocks.h"
#include "transformer/data/tokenizer.h"
#include "transformer/data/vocab.h"
#include "transformer/evaluate/evaluate.h"
#include "transformer/model/encoder_decoder.h"
#include "transformer/model/sampling.h"
#include "transformer/store/checkpoint.h"
#include "transformer/train/trainer.h"

using namespace gradformer;
using namespace tutorial;

#ifndef GRADFORMER_TUTORIAL_DATA
#define GRADFORMER_TUTORIAL_DATA "tutorials/data"
#endif

namespace {

// The whitespace-separated words of a text: what a words tokenizer reads.
std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (const char c : text) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
      word += c;
    } else if (!word.empty()) {
      words.push_back(word);
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

// The first `share` of a text, cut after a line end (never inside a word, nor inside a character).
std::string_view head(std::string_view text, double share) {
  const size_t at = text.find('\n', static_cast<size_t>(share * static_cast<double>(text.size())));
  return at == std::string_view::npos ? text : text.substr(0, at + 1);
}

double percent(int64_t part, int64_t whole) { return 100.0 * static_cast<double>(part) / static_cast<double>(whole); }

// A vocabulary of the words of ever more training text, and the held-out words it does not know.
void why_words_fail(std::string_view train, std::string_view held_out) {
  section("Why words fail");
  const std::vector<std::string> held_out_words = words_of(held_out);
  const std::set<std::string> distinct(held_out_words.begin(), held_out_words.end());
  std::printf("held-out text: %zu bytes, %zu words, %zu of them distinct\n", held_out.size(), held_out_words.size(),
              distinct.size());
  std::printf("training text   vocabulary   unknown running words   unknown distinct words\n");
  double first = 0, last = 0;
  for (const double share : {0.125, 0.25, 0.5, 1.0}) {
    const std::string_view text = head(train, share);
    const Vocab vocab = Vocab::build({words_of(text)});  // every word of the training text, and the 4 specials
    int64_t unknown = 0, unknown_distinct = 0;
    for (const std::string& w : held_out_words) unknown += vocab.contains(w) ? 0 : 1;
    for (const std::string& w : distinct) unknown_distinct += vocab.contains(w) ? 0 : 1;
    const auto running = static_cast<int64_t>(held_out_words.size()), kinds = static_cast<int64_t>(distinct.size());
    std::printf("%7zu bytes %12lld %10lld = %5.1f%% %14lld = %5.1f%%\n", text.size(),
                static_cast<long long>(vocab.size()), static_cast<long long>(unknown), percent(unknown, running),
                static_cast<long long>(unknown_distinct), percent(unknown_distinct, kinds));
    if (share == 0.125) first = percent(unknown, running);
    last = percent(unknown, running);
  }
  claim(last < first, "more training text leaves fewer unknown words");
  claim(last > 5, "with all of the training text, more than 5% of the held-out words are still unknown");
}

// A few words as characters and as UTF-8 bytes.
void characters_and_bytes() {
  section("Characters and bytes");
  for (const std::string word : {"cat", "café", "naïve", "Straße", "日本", "🙂"}) {
    int64_t characters = 0, columns = 0;  // a terminal shows CJK characters and emoji two columns wide
    std::string bytes;
    for (const unsigned char b : word) {
      characters += (b & 0xC0) != 0x80 ? 1 : 0;  // every byte but a continuation byte 10xxxxxx starts a character
      columns += (b & 0xC0) != 0x80 ? (b >= 0xE0 ? 2 : 1) : 0;
      char hex[4];
      std::snprintf(hex, sizeof hex, " %02X", b);
      bytes += hex;
    }
    const std::string padding(static_cast<size_t>(8 - columns), ' ');  // the columns lined up by characters
    std::printf("  \"%s\"%s %lld character(s), %zu byte(s):%s\n", word.c_str(), padding.c_str(),
                static_cast<long long>(characters), word.size(), bytes.c_str());
  }
}

// The bytes tokenizer on the held-out text: nothing unknown, and a token per byte.
void bytes_tokenizer(std::string_view held_out) {
  const Tokenizer bytes = Tokenizer::bytes();
  const std::vector<int64_t> ids = bytes.encode(held_out);
  const size_t words = words_of(held_out).size();
  std::printf("bytes tokenizer: %lld ids (%lld specials, then the 256 bytes)\n", static_cast<long long>(bytes.size()),
              static_cast<long long>(bytes.special_count()));
  std::printf("held-out text: %zu tokens for its %zu words, %.2f tokens a word, none unknown\n", ids.size(), words,
              static_cast<double>(ids.size()) / static_cast<double>(words));
  std::string cafe;
  for (const int64_t id : bytes.encode("café")) cafe += ' ' + std::to_string(id);  // 4 + the byte
  std::printf("\"café\" ->%s\n", cafe.c_str());
  claim(bytes.decode_bytes(ids) == held_out, "the bytes tokenizer gives back the very bytes it read");
}

using Pair = std::pair<std::string, std::string>;
using PreTokens = std::vector<std::vector<std::string>>;  // each pre-token as its tokens, each token bytes

// How often each pair of neighbouring tokens occurs, inside each pre-token (never across two).
std::map<Pair, int64_t> pair_counts(const PreTokens& pre_tokens) {
  std::map<Pair, int64_t> counts;
  for (const std::vector<std::string>& tokens : pre_tokens)
    for (size_t i = 0; i + 1 < tokens.size(); ++i) ++counts[{tokens[i], tokens[i + 1]}];
  return counts;
}

// Every occurrence of the pair, left to right, becomes one token.
void join(PreTokens& pre_tokens, const Pair& pair) {
  for (std::vector<std::string>& tokens : pre_tokens) {
    std::vector<std::string> joined;
    for (size_t i = 0; i < tokens.size(); ++i) {
      if (i + 1 < tokens.size() && tokens[i] == pair.first && tokens[i + 1] == pair.second) {
        joined.push_back(pair.first + pair.second);
        ++i;
      } else {
        joined.push_back(tokens[i]);
      }
    }
    tokens = std::move(joined);
  }
}

// The tokens in GPT-2's byte characters (a space shows as Ġ), separated by spaces.
std::string shown(const PreTokens& pre_tokens) {
  std::string out;
  for (const std::vector<std::string>& tokens : pre_tokens) {
    for (const std::string& token : tokens) {
      if (!out.empty()) out += ' ';
      out += gpt2_bytes_to_text(token);
    }
  }
  return out;
}

// The pairs of the highest counts, most frequent first; ties in learn_bpe's order (smaller ids first).
std::string top_pairs(const std::map<Pair, int64_t>& counts, const BytePairEncoding& learned, size_t how_many) {
  std::vector<std::pair<Pair, int64_t>> sorted(counts.begin(), counts.end());
  const auto ids = [&](const Pair& p) { return std::pair{learned.id(p.first), learned.id(p.second)}; };
  std::sort(sorted.begin(), sorted.end(), [&](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : ids(a.first) < ids(b.first);
  });
  std::string out;
  for (size_t i = 0; i < std::min(how_many, sorted.size()); ++i) {
    const auto& [pair, count] = sorted[i];
    out += "  ";
    out += gpt2_bytes_to_text(pair.first) + '+' + gpt2_bytes_to_text(pair.second) + ' ' + std::to_string(count);
  }
  return out;
}

// A pre-token the merges were not learned from, encoded as a tokenizer encodes it: its bytes, then
// each merge in the order it was learned, wherever its pair occurs.
void encode_unseen(const BytePairEncoding& learned, const std::string& pre_token) {
  PreTokens tokens(1);
  for (const char byte : pre_token) tokens[0].emplace_back(1, byte);
  std::printf("%s, never seen: %s\n", gpt2_bytes_to_text(pre_token).c_str(), shown(tokens).c_str());
  for (size_t rank = 0; rank < learned.merges().size(); ++rank) {
    const Pair& merge = learned.merges()[rank];
    const PreTokens before = tokens;
    join(tokens, merge);
    if (tokens != before)
      std::printf("merge %zu: %s + %s -> %s\n", rank + 1, gpt2_bytes_to_text(merge.first).c_str(),
                  gpt2_bytes_to_text(merge.second).c_str(), shown(tokens).c_str());
  }
  std::vector<int64_t> ids;
  for (const std::string& token : tokens[0]) ids.push_back(learned.id(token));
  claim(ids == learned.encode({pre_token}), "replaying the merges in order encodes as BytePairEncoding::encode");
  std::printf("%zu tokens: %s\n", tokens[0].size(), shown(tokens).c_str());
}

// learn_bpe on one sentence, merge by merge: the pair counts, the merge it chose, the text after it.
void merges_step_by_step() {
  section("Byte-pair encoding, merge by merge");
  const std::string text = "the cat sat on the mat, the other cat sat on the hat";
  const std::vector<std::string> pieces = gpt2_pre_tokens(text);
  const BytePairEncoding learned = learn_bpe(pieces, 256 + 8);  // the bytes, then 8 merges
  PreTokens tokens;
  for (const std::string& piece : pieces) {
    tokens.emplace_back();
    for (const char byte : piece) tokens.back().emplace_back(1, byte);  // every pre-token starts as its bytes
  }
  std::printf("start:   %s\n", shown(tokens).c_str());
  for (size_t step = 0; step < learned.merges().size(); ++step) {
    const std::map<Pair, int64_t> counts = pair_counts(tokens);
    int64_t most = 0;
    for (const auto& [pair, count] : counts) most = std::max(most, count);
    const Pair& chosen = learned.merges()[step];
    std::printf("counts: %s ...\n", top_pairs(counts, learned, 4).c_str());
    std::printf("merge %zu: %s + %s -> %s (count %lld)\n", step + 1, gpt2_bytes_to_text(chosen.first).c_str(),
                gpt2_bytes_to_text(chosen.second).c_str(), gpt2_bytes_to_text(chosen.first + chosen.second).c_str(),
                static_cast<long long>(counts.at(chosen)));
    claim(counts.at(chosen) == most, "learn_bpe merges a pair of the highest count");
    join(tokens, chosen);
    std::printf("         %s\n", shown(tokens).c_str());
  }
  size_t count = 0;
  for (const std::vector<std::string>& pre_token : tokens) count += pre_token.size();
  std::printf("%zu bytes, %zu tokens after %zu merges\n", text.size(), count, learned.merges().size());
  std::printf("\n");
  encode_unseen(learned, " these");
}

// One row of the table of vocabulary sizes: the held-out text's length in tokens, the embedding's size.
void size_row(const char* name, int64_t V, int64_t tokens, int64_t bytes) {
  constexpr int64_t d_model = 512;
  const int64_t embedding = V * d_model;  // one [V, d_model] matrix: source, target and output tied
  const int64_t model = parameter_count(TransformerConfig::base(V, V));
  std::string per_byte = "-";
  if (tokens > 0) per_byte = std::to_string(static_cast<double>(tokens) / static_cast<double>(bytes)).substr(0, 5);
  std::printf("%-7s %6lld %9s %11s %11lld %10lld %5.1f%%\n", name, static_cast<long long>(V),
              tokens > 0 ? std::to_string(tokens).c_str() : "-", per_byte.c_str(), static_cast<long long>(embedding),
              static_cast<long long>(model), percent(embedding, model));
}

// Why learning stopped short of the size asked for: no pre-token of the training text is left in two pieces.
void nothing_left_to_merge(const Tokenizer& bpe, std::string_view train, int64_t asked) {
  const std::vector<std::string> pieces = gpt2_pre_tokens(train);
  const std::set<std::string> distinct(pieces.begin(), pieces.end());
  int64_t split = 0;
  for (const std::string& piece : distinct) split += bpe.encode(piece).size() > 1 ? 1 : 0;
  std::printf("asked for %lld ids, learned %lld: each of the training text's %zu distinct pre-tokens is one token\n",
              static_cast<long long>(asked), static_cast<long long>(bpe.size()), distinct.size());
  claim(split == 0, "learning stops when every pre-token of the training text is a single token");
}

// Vocabularies of several sizes learned from the training text, measured on the held-out text.
Tokenizer vocabulary_sizes(std::string_view train, std::string_view held_out, const std::vector<int64_t>& sizes) {
  section("What the vocabulary size trades");
  const auto bytes = static_cast<int64_t>(held_out.size());
  std::printf("held-out text: %lld bytes; the embedding for d_model 512, in the paper's base model (tied)\n",
              static_cast<long long>(bytes));
  std::printf("%-7s %6s %9s %11s %11s %10s %6s\n", "kind", "ids", "held-out", "tokens/byte", "embedding", "base model",
              "share");
  const Vocab words = Vocab::build({words_of(train)});
  size_row("words", words.size(), static_cast<int64_t>(words_of(held_out).size()), bytes);
  const Tokenizer byte_tokens = Tokenizer::bytes();
  size_row("bytes", byte_tokens.size(), static_cast<int64_t>(byte_tokens.encode(held_out).size()), bytes);
  Tokenizer largest = byte_tokens;
  int64_t previous = bytes + 1;
  for (const int64_t V : sizes) {
    const Tokenizer bpe = Tokenizer::learn_bpe({train}, V);  // merges learned on the training text only
    const std::vector<int64_t> ids = bpe.encode(held_out);
    size_row("bpe", bpe.size(), static_cast<int64_t>(ids.size()), bytes);
    claim(bpe.decode_bytes(ids) == held_out, "byte-level BPE gives back the very bytes it read");
    claim(static_cast<int64_t>(ids.size()) < previous, "a larger vocabulary makes the held-out text shorter");
    previous = static_cast<int64_t>(ids.size());
    largest = bpe;
  }
  size_row("paper", 37000, 0, bytes);
  if (largest.size() < sizes.back()) nothing_left_to_merge(largest, train, sizes.back());
  return largest;
}

// GPT-2's table from bytes to printable characters, and a sentence's tokens written with it.
void byte_characters(const Tokenizer& bpe) {
  section("GPT-2's byte characters");
  const std::array<char32_t, 256>& table = gpt2_byte_characters();
  int64_t themselves = 0;
  for (size_t b = 0; b < 256; ++b) themselves += table[b] == b ? 1 : 0;
  std::printf("%lld bytes stand for themselves, %lld take U+0100 and up:\n", static_cast<long long>(themselves),
              static_cast<long long>(256 - themselves));
  for (const int b : {0x00, 0x09, 0x0A, 0x20, 0x21, 0x41, 0x7E, 0x7F, 0xA0, 0xA1, 0xAD, 0xC3, 0xA9, 0xFF}) {
    std::printf("  byte %3d (0x%02X) -> U+%04X %s\n", b, b, static_cast<unsigned>(table[static_cast<size_t>(b)]),
                gpt2_bytes_to_text(std::string(1, static_cast<char>(b))).c_str());
  }
  const std::string sentence = "The café's model reads 2017's paper.\n";
  std::string pieces;
  for (const int64_t id : bpe.encode(sentence)) pieces += ' ' + bpe.piece(id);
  std::printf("\"The café's model reads 2017's paper.\\n\" in %lld tokens:%s\n",
              static_cast<long long>(bpe.encode(sentence).size()), pieces.c_str());
}

// GPT-2's pre-tokens of two sentences, each in brackets, a line end shown as \n: the second's
// contractions are upper case or written with a typographic apostrophe, which the pattern does not know.
void pre_tokens() {
  section("GPT-2's pre-tokenizer");
  for (const std::string text :
       {"I'll say it again:   the model's 3 heads read 2017's paper.\n", "SHE'LL say John\u2019s.\n"}) {
    std::string out;
    for (std::string piece : gpt2_pre_tokens(text)) {
      for (size_t at = piece.find('\n'); at != std::string::npos; at = piece.find('\n')) piece.replace(at, 1, "\\n");
      out += '[' + piece + ']';
    }
    std::printf("%s\n", out.c_str());
  }
  claim(gpt2_pre_tokens("SHE'LL")[1] == "'", "an upper-case contraction is not cut off: its apostrophe stands alone");
}

// One tokenizer for two languages: a name and a number get the same pieces on both sides.
void shared_vocabulary(const Tokenizer& bpe) {
  section("One vocabulary for both languages");
  const std::string english = "the Transformer of Vaswani et al. (2017) has 65 million parameters";
  const std::string german = "der Transformer von Vaswani et al. (2017) hat 65 Millionen Parameter";
  std::set<int64_t> in_english;
  for (const int64_t id : bpe.encode(english)) in_english.insert(id);
  for (const std::string& text : {english, german}) {
    std::string pieces;
    for (const int64_t id : bpe.encode(text)) pieces += ' ' + bpe.piece(id);
    std::printf("%-8s%s\n", text == english ? "English:" : "German:", pieces.c_str());
  }
  std::string both;
  std::set<int64_t> listed;
  for (const int64_t id : bpe.encode(german))
    if (in_english.count(id) && listed.insert(id).second) both += ' ' + bpe.piece(id);
  std::printf("the same ids on both sides:%s\n", both.c_str());
}

// ---- A language model of this book ---------------------------------------------------------------

// The sizes of a training run: the full run's, or --quick's few steps of a tiny model (what the
// test suite runs, to check that the code runs; its numbers mean nothing).
struct RunSizes {
  int64_t steps, batch_size, context, d_model, layers;
};

// `gradformer train --arch decoder-only --text PATH --tokenizer KIND --vocab-size V`, as options:
// the text task's defaults (transformer/train/options.cpp) but for the sizes.
TrainOptions text_task(const std::string& path, const std::string& kind, int64_t vocab_size, const RunSizes& s) {
  TrainOptions o = default_train_options("text", Architecture::DecoderOnly);
  o.text_path = path, o.tokenizer = kind, o.vocab_size = vocab_size;
  o.steps = s.steps, o.batch_size = s.batch_size, o.context = s.context, o.max_len = s.context;
  o.d_model = s.d_model, o.d_ff = 4 * s.d_model, o.layers = s.layers;
  o.eval_every = 0, o.quiet = true;                        // evaluated once, at the end
  o.out_dir = std::string("runs/chapters-").append(kind);  // runs/chapters-bytes, runs/chapters-bpe-1024
  if (kind == "bpe") o.out_dir.append("-").append(std::to_string(vocab_size));
  return o;
}

// What a run of the text task learned, measured as the chapter shows it.
struct TextRun {
  std::string checkpoint;
  int64_t vocabulary = 0, parameters = 0;
  double tokens_per_byte = 0;  // of the held-out text
  double bytes_seen = 0;       // the training tokens the steps read, in bytes (on average)
  double bits_per_byte = 0;    // of the held-out text
  double seconds = 0;          // the training steps alone
};

TextRun train_on_text(const std::string& text, const TrainOptions& o) {
  const TrainReport report = train(o);
  const LoadedDecoderOnly trained = load_decoder_only_checkpoint(report.checkpoint_path);
  const Tokenizer& tokenizer = trained.info.target_tokenizer;  // bytes, or the merges learned on the first 90%
  const TextTokens parts = split_text(text, tokenizer, o.context, o.text_path);
  const size_t cut = held_out_start(text);
  // bits per byte = the held-out tokens' total nats / (ln 2 * the bytes they stand for)
  const TextScore score{report.valid_loss, static_cast<int64_t>(parts.valid.size()) - 1,
                        predicted_bytes(parts.valid, tokenizer)};
  const double bytes_per_training_token = static_cast<double>(cut) / static_cast<double>(parts.train.size());
  TextRun run;
  run.checkpoint = report.checkpoint_path, run.vocabulary = tokenizer.size();
  run.parameters = trained.model->parameter_count();
  run.tokens_per_byte = static_cast<double>(parts.valid.size()) / static_cast<double>(text.size() - cut);
  run.bytes_seen = static_cast<double>(report.steps * o.batch_size * o.context) * bytes_per_training_token;
  run.bits_per_byte = score.bits_per_byte(), run.seconds = report.train_seconds;
  return run;
}

// Text on lines of at most `width` characters, cut at spaces, each indented by four spaces.
std::string wrapped(const std::string& text, size_t width) {
  std::string out, line;
  for (const std::string& word : words_of(text)) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out.append("    ").append(line).append("\n");
      line.clear();
    }
    if (!line.empty()) line.append(" ");
    line.append(word);
  }
  return out.append("    ").append(line).append("\n");
}

// The model continues a prompt in the file's style: tokens drawn at temperature 0.8, a fixed seed.
void continue_prompt(const std::string& checkpoint, const std::string& prompt, int64_t tokens) {
  LoadedDecoderOnly trained = load_decoder_only_checkpoint(checkpoint);
  const Tokenizer& tokenizer = trained.info.target_tokenizer;
  const std::vector<int64_t> ids = tokenizer.encode(prompt);
  Generator gen(1);
  const SamplingOptions options{.max_tokens = tokens, .temperature = 0.8, .eos = -1};  // running text: no </s>
  const std::vector<int64_t> continuation = generate(*trained.model, ids, options, gen);
  std::printf("prompt \"%s\", then %lld tokens drawn at temperature 0.8 (a line end shown as ⏎):\n",
              one_line(prompt).c_str(), static_cast<long long>(tokens));
  std::printf("%s", wrapped(one_line(prompt + tokenizer.decode(continuation)), 96).c_str());
}

// The held-out bytes' bits per byte under the training text's byte frequencies (each count plus
// one, so no byte is impossible): a model that knows which bytes are common, and no context.
double byte_frequency_bits(std::string_view text) {
  const size_t cut = held_out_start(text);
  std::array<double, 256> count{};
  count.fill(1);
  for (const unsigned char b : text.substr(0, cut)) count[b] += 1;
  const double total = static_cast<double>(cut) + 256;
  double bits = 0;
  for (const unsigned char b : text.substr(cut)) bits -= std::log2(count[b] / total);
  return bits / static_cast<double>(text.size() - cut);
}

TextRun language_model(const std::string& path, const std::string& text, bool quick) {
  section("A language model of this book");
  const RunSizes sizes = quick ? RunSizes{3, 4, 32, 32, 1} : RunSizes{600, 16, 128, 128, 4};
  TrainOptions o = text_task(path, "bpe", 1024, sizes);
  o.out_dir = "runs/chapters";
  const TextRun run = train_on_text(text, o);
  std::printf("decoder-only, %lld parameters (d_model %lld, %lld layers), byte-pair tokens (%lld ids)\n",
              static_cast<long long>(run.parameters), static_cast<long long>(o.d_model),
              static_cast<long long>(o.layers), static_cast<long long>(run.vocabulary));
  std::printf("%lld steps of %lld blocks of %lld tokens: %.0f bytes of text read, in %.0f s\n",
              static_cast<long long>(o.steps), static_cast<long long>(o.batch_size), static_cast<long long>(o.context),
              run.bytes_seen, run.seconds);
  const double counted = byte_frequency_bits(text);
  std::printf("held-out text: %.3f bits per byte\n", run.bits_per_byte);
  std::printf("  against: a uniform guess over the 256 bytes 8; the training text's byte frequencies %.3f\n", counted);
  if (!quick) claim(run.bits_per_byte < counted, "the model beats counting bytes");
  if (!quick) claim(run.bits_per_byte < 3, "a few minutes of training beat 3 bits per byte");
  continue_prompt(run.checkpoint, "## What to remember\n\n- The decoder", quick ? 8 : 100);
  return run;
}

// The same model, steps and tokens per step, with each tokenizer.
void bits_per_byte_across_tokenizers(const std::string& path, const std::string& text, bool quick) {
  section("Bits per byte across tokenizers");
  const RunSizes sizes = quick ? RunSizes{3, 4, 32, 32, 1} : RunSizes{200, 16, 128, 128, 4};
  std::printf("each: %lld steps of %lld blocks of %lld tokens, d_model %lld, %lld layers\n",
              static_cast<long long>(sizes.steps), static_cast<long long>(sizes.batch_size),
              static_cast<long long>(sizes.context), static_cast<long long>(sizes.d_model),
              static_cast<long long>(sizes.layers));
  std::printf("tokenizer  ids  parameters  tokens/byte  bytes read  bits/byte  seconds\n");
  std::vector<TextRun> runs;
  for (const int64_t V : {0, 512, 1024, 4096}) {
    const TextRun run = train_on_text(text, text_task(path, V == 0 ? "bytes" : "bpe", V, sizes));
    std::printf("%-9s %5lld %10lld %10.3f %11.0f %10.3f %8.0f\n", V == 0 ? "bytes" : "bpe",
                static_cast<long long>(run.vocabulary), static_cast<long long>(run.parameters), run.tokens_per_byte,
                run.bytes_seen, run.bits_per_byte, run.seconds);
    runs.push_back(run);
  }
  claim(runs[2].bytes_seen > 2 * runs[0].bytes_seen, "the same steps read more than twice the text in BPE tokens");
  if (!quick)
    claim(runs[2].bits_per_byte < runs[0].bits_per_byte, "at equal cost, BPE 1024 predicts better than bytes");
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && !std::strcmp(argv[1], "--quick");
  const std::string path = argc > 1 + quick ? argv[1 + quick] : GRADFORMER_TUTORIAL_DATA "/chapters.txt";
  const std::string text = read_whole_file(path);
  // First 90% to learn from, the last 10% held out: cut by position, after a line end.
  const std::string_view train = head(text, 0.9), held_out = std::string_view(text).substr(train.size());
  std::printf("%s: %zu bytes; training text %zu bytes, held-out text %zu bytes\n", "chapters.txt", text.size(),
              train.size(), held_out.size());

  why_words_fail(train, held_out);
  characters_and_bytes();
  bytes_tokenizer(held_out);
  merges_step_by_step();
  const Tokenizer bpe = vocabulary_sizes(train, held_out, {512, 1024, 2048, 4096, 8192});
  byte_characters(bpe);
  pre_tokens();
  shared_vocabulary(bpe);
  language_model(path, text, quick);
  bits_per_byte_across_tokenizers(path, text, quick);
  return failures == 0 ? 0 : 1;
}
