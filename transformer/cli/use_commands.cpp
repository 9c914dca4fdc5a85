// gradformer translate, score and params: using and inspecting a model (trace: trace_command.cpp).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <numeric>
#include <optional>

#include "tensor/kernels/parallel.h"
#include "tensor/support/saved_state.h"
#include "transformer/cli/commands.h"
#include "transformer/cli/flags.h"
#include "transformer/evaluate/evaluate.h"
#include "transformer/model/decoder_only.h"
#include "transformer/store/checkpoint.h"

namespace gradformer {

void apply_threads(const Flags& f) {
  // Compared as the 64-bit integer typed, before any narrowing: 4294967297 must not become 1.
  const int64_t threads = f.integer_in("--threads", 0, max_threads(), " (0: all cores)");
  if (threads > 0) set_num_threads(static_cast<int>(threads));
}

void declare_profile_flag(Flags& f) {
  f.add_optional("--profile",
                 "profile steps 6-8 (after 5 warm-up steps), print where their time went, and write their Chrome "
                 "trace (open it in Perfetto) to X (default OUT/profile.json)");
}

std::string profile_path(const Flags& f, const std::string& out_dir) {
  if (!f.given("--profile")) return "";
  return f.has("--profile") ? f.text("--profile") : out_dir + "/profile.json";
}

int translate_command(int argc, char** argv) {
  Flags f("translate",
          "Translate each line of standard input and print one translation per line. A model of words reads\n"
          "whitespace-separated words (words it never saw become <unk>); a model of bytes or BPE tokens reads any\n"
          "text and prints text (nothing is unknown to it).\n"
          "Each sentence is fed to the model as its tokens then </s>, as gradformer trains (the checkpoint's\n"
          "data.source_eos; a model brought in by gradformer import with --source-eos no gets its tokens only).\n"
          "\n"
          "Output line N is input line N's translation: a line that cannot be translated (not UTF-8, longer than\n"
          "the model takes) gives an empty line, a message, and exit status 1 at the end. A line over 1 MiB or an\n"
          "input that cannot be read stops the command (status 1).");
  f.add("--checkpoint", "", "a model saved by gradformer train (required)");
  f.add("--beam", "1", "beam size (1: greedy decoding; at most the target vocabulary's size)");
  f.add("--alpha", "0.6", "length penalty of beam search, ((5 + length) / 6)^alpha");
  f.add("--threads", "0", "threads (0: all cores)");
  if (!f.parse(argc, argv)) {
    std::cout << f.help();
    return 0;
  }
  f.require("--checkpoint");
  (void)f.integer_in("--beam", 1);  // the upper bound is the model's, below
  apply_threads(f);
  LoadedCheckpoint ckpt = load_checkpoint(f.text("--checkpoint"));
  // A bound for the command line, not for beam_search: more beams than target tokens keep no more
  // hypotheses at the first step and cost a batch row each after it (an exhaustive search, the
  // tests' use of a huge beam, is no user's), and 10^11 beams would only fail to allocate.
  const Tokenizer &source = ckpt.info.source_tokenizer, &target = ckpt.info.target_tokenizer;
  (void)f.integer_in("--beam", 1, target.size(), " (the target vocabulary's size)");
  int64_t unknown = 0, unknown_lines = 0;
  const int64_t untranslated = answer_each_line("translate", "translated", [&](const std::vector<std::string>& words) {
    // Only a vocabulary of words has words it does not know; bytes and BPE spell any text.
    const auto unk = source.kind() != Tokenizer::Kind::Words
                         ? 0
                         : std::count_if(words.begin(), words.end(),
                                         [&](const std::string& w) { return !source.vocab().contains(w); });
    const std::string translation = join_words(
        translate(*ckpt.model, words, source, target, f.integer("--beam"), f.number("--alpha"), ckpt.info.source_eos));
    unknown += unk, unknown_lines += unk > 0;  // counted once translated: a refused line says so itself
    return translation;
  });
  if (unknown > 0)
    std::cerr << "gradformer translate: " << unknown << (unknown == 1 ? " word" : " words") << " in " << unknown_lines
              << (unknown_lines == 1 ? " line was" : " lines were")
              << " not in the model's vocabulary and became <unk>\n";
  return unanswered_status("translate", "translated", untranslated);
}

namespace {

// Scores the pairs of `lines` (a TSV file's lines, nothing for a blank one) `batch_size` at a time,
// and prints one line per line of the file: the pair's log-probability and its target's token count
// with </s>, or an empty line for a blank one, so output line N is always input line N's.
void print_scores(const LoadedCheckpoint& ckpt, const std::string& path,
                  const std::vector<std::optional<SentencePair>>& lines, size_t batch_size) {
  const int64_t max_tokens = ckpt.info.config.max_len - 1;  // room for the </s> or <s> collate adds
  for (size_t printed = 0; printed < lines.size();) {
    std::vector<EncodedPair> batch;
    size_t end = printed;
    for (; end < lines.size() && batch.size() < batch_size; ++end)
      if (const auto& pair = lines[end]) {
        batch.push_back(encode_pairs({*pair}, ckpt.info.source_tokenizer, ckpt.info.target_tokenizer).front());
        // Words were counted as the file was read; bytes and BPE tokens only now.
        const EncodedPair& ids = batch.back();
        for (const auto& [side, size] : {std::pair{"source", ids.source.size()}, {"target", ids.target.size()}})
          if (static_cast<int64_t>(size) > max_tokens)
            throw DataError(
                at_line(path, static_cast<int64_t>(end) + 1,
                        message(side, " sentence has ", size, " tokens (", ckpt.info.source_tokenizer.kind_name(),
                                "), more than the maximum of ", max_tokens)));
      }
    std::vector<double> scores;
    if (!batch.empty()) {
      std::vector<int64_t> indices(batch.size());
      std::iota(indices.begin(), indices.end(), int64_t{0});
      scores = sentence_log_probs(*ckpt.model, collate(batch, indices, ckpt.info.source_eos));
    }
    for (size_t k = 0; printed < end; ++printed) {
      if (!lines[printed]) {
        std::printf("\n");
        continue;
      }
      std::printf("%.6f\t%zu\n", scores[k], batch[k].target.size() + 1);
      ++k;
    }
  }
}

// score --text: a decoder-only model of a text file (bytes or bpe) on a whole file, cut into
// consecutive blocks of the context it was trained with (its max_len when the checkpoint does not say).
int score_text_file(const Flags& f) {
  if (f.has("--data")) throw UsageError("score: give --data (pairs) or --text (a text file), not both");
  if (f.given("--batch-size"))  // not silently ignored, whatever its value
    throw UsageError("score: --batch-size is for --data; --text is scored one block of the model's context at a time");
  const std::string path = f.text("--checkpoint"), text_path = f.text("--text");
  CheckpointFile file = read_checkpoint_header(path);
  if (file.arch != Architecture::DecoderOnly)
    throw UsageError(message("score: --text needs a decoder-only model of text (train --arch decoder-only --text); ",
                             path, " is ", a_architecture(file.arch), " checkpoint"));
  LoadedDecoderOnly ckpt = load_decoder_only_checkpoint(std::move(file));
  const Tokenizer& tokenizer = ckpt.info.target_tokenizer;
  if (tokenizer.kind() == Tokenizer::Kind::Words)
    throw UsageError(message("score: --text needs a model of bytes or bpe tokens; ", path,
                             " reads whitespace words (its text would lose its line ends and spaces)"));
  const auto& state = ckpt.info.state;
  const bool text_run =
      state.count("options.task") && state.at("options.task") == "text" && state.count("options.context");
  const int64_t context = text_run ? parse_integer(state.at("options.context"), path + ": state.options.context")
                                   : ckpt.info.config.max_len;
  if (context < 1 || context > ckpt.info.config.max_len)
    throw CheckpointError(message(path, ": state.options.context ", context, " is not from 1 to config.max_len ",
                                  ckpt.info.config.max_len));
  const std::string text =
      read_text_file(text_path, tokenizer.kind() == Tokenizer::Kind::Bpe || tokenizer.kind() == Tokenizer::Kind::Hub);
  std::vector<int64_t> tokens;
  try {
    tokens = tokenizer.encode(text);
  } catch (const ValueError& e) {
    throw DataError(message(text_path, ": ", e.what()));
  }
  if (tokens.size() < 2)
    throw DataError(
        message(text_path, ": 1 ", tokenizer.kind_name(), " token: scoring needs 2 (one read, one predicted)"));
  const TextScore s = score_text(*ckpt.model, tokenizer, tokens, context);
  std::printf("%s tokenizer: %lld tokens predicted (%lld bytes), blocks of %lld\n", tokenizer.kind_name().c_str(),
              static_cast<long long>(s.tokens), static_cast<long long>(s.bytes), static_cast<long long>(context));
  std::printf("loss %.6f nats/token, perplexity %.4f, bits per byte %.6f\n", s.loss, s.perplexity(), s.bits_per_byte());
  return 0;
}

}  // namespace

int score_command(int argc, char** argv) {
  Flags f("score",
          "Print, for each pair of a TSV file, log P(target | source) under the model (natural log, summed over\n"
          "the target's tokens and its </s>), then a tab and that token count: teacher-forced, as marian-scorer\n"
          "and fairseq score. The model reads each source as its words then </s>, as gradformer trains (the\n"
          "checkpoint's data.source_eos; a model brought in by gradformer import with --source-eos no reads its\n"
          "words only): to score the same pairs elsewhere, e.g. in PyTorch, append </s> (id 2) to each source.\n"
          "\n"
          "A blank line (only spaces and tabs) gives an empty output line, so output line N is input line N's score;\n"
          "any other line that is not a pair stops the command, naming the file and line, as does a line over 1 MiB.\n"
          "\n"
          "With --text instead of --data, a decoder-only model of text (train --arch decoder-only --text) scores a\n"
          "whole file, cut into consecutive blocks of its training context (each token but the first predicted\n"
          "once): the loss per token, the perplexity and the bits per byte.");
  f.add("--checkpoint", "", "a model saved by gradformer train (required)");
  f.add("--data", "", "pairs to score, source<TAB>target per line (required)");
  f.add("--text", "", "a text file to score with a decoder-only text model, instead of --data");
  f.add("--batch-size", "64", "sentences scored at once");
  f.add("--threads", "0", "threads (0: all cores)");
  if (!f.parse(argc, argv)) {
    std::cout << f.help();
    return 0;
  }
  if (f.has("--checkpoint") && f.has("--text")) {
    apply_threads(f);
    return score_text_file(f);
  }
  if (!f.has("--checkpoint") || !f.has("--data")) throw UsageError("score: --checkpoint and --data are required");
  (void)f.integer_in("--batch-size", 1);
  apply_threads(f);
  LoadedCheckpoint ckpt = load_checkpoint(f.text("--checkpoint"));
  print_scores(ckpt, f.text("--data"), read_tsv_lines(f.text("--data"), ckpt.info.config.max_len - 1),
               static_cast<size_t>(f.integer("--batch-size")));
  return 0;
}

namespace {

long long ll(int64_t n) { return static_cast<long long>(n); }

// The block's settings that are not the paper's, as "; 3 key/value heads, no biases, rope theta
// 100000" ("" when every one is the paper's): the same words for the three architectures.
std::string block_settings(const LayerConfig& l, Positions positions) {
  const BlockOptions& b = l.block;
  std::string block;
  if (l.kv_heads() != l.heads) block += message(", ", l.kv_heads(), " key/value heads");
  if (b.head_dim != 0) block += message(", head width ", b.head_dim);
  if (b.bias != Bias::All)
    block += b.bias == Bias::None  ? ", no biases"
             : b.bias == Bias::QKV ? ", biases on q, k, v only"
                                   : ", attention biases only";
  if (positions == Positions::Rotary) block += message(", rope theta ", b.rope_theta);
  if (b.rope_scaling.factor != 0)
    block +=
        message(" (llama3 scaling: factor ", b.rope_scaling.factor, ", low ", b.rope_scaling.low_freq_factor, ", high ",
                b.rope_scaling.high_freq_factor, ", original length ", b.rope_scaling.original_max_len, ")");
  return block.empty() ? "" : "; " + block.substr(2);
}

// How the configuration computes, beyond its sizes: "learned positions, pre-LN, LayerNorm eps 1e-05,
// activation gelu-tanh, embedding not scaled by sqrt(d_model), output tied to the embedding", then
// the block's settings that are not the paper's ("; 3 key/value heads, no biases, rope theta 100000").
void print_computation(const TransformerConfig& c) {
  std::printf("%s positions, %s-LN, %s eps %g, activation %s, embedding %s by sqrt(d_model), %s%s\n",
              positions_name(c.positions), c.norm == NormPlacement::Pre ? "pre" : "post",
              c.block.normalization == Normalization::RMSNorm ? "RMSNorm" : "LayerNorm", c.norm_eps,
              activation_name(c.activation), c.scale_embedding ? "scaled" : "not scaled",
              c.tie_embeddings ? "output tied to the embedding" : "output projection untied",
              block_settings(c.layer(), c.positions).c_str());
}

// One layer's count, term by term, as config.h's layer_parameter_count counts it.
void print_layer_terms(const TransformerConfig& c) {
  const LayerConfig l = c.layer();
  const LayerCount n = layer_parameter_count(l, false);
  const int64_t d = c.d_model, H = c.heads, N = l.kv_heads(), dk = l.head_dim();
  std::printf(
      "  per layer: attention %lld (W^Q %lld x %lld, W^K and W^V %lld x %lld each, W^O %lld x %lld, biases "
      "%lld)\n",
      ll(n.attention), ll(H * dk), ll(d), ll(N * dk), ll(d), ll(d), ll(H * dk),
      ll(n.attention - (H + 2 * N) * dk * d - H * dk * d));
  const int64_t matrices = c.activation == Activation::SwiGLU ? 3 : 2;
  std::printf("             feed-forward %lld (%lld matrices of d x d_ff%s), 2 %s %lld\n", ll(n.feed_forward),
              ll(matrices), c.block.bias == Bias::All ? " and their biases" : "",
              c.block.normalization == Normalization::RMSNorm ? "RMSNorms (gains)" : "LayerNorms (gains, biases)",
              ll(n.norms));
  if (n.lora > 0) {
    LoraOptions projections = l.block.lora;
    projections.embed = false;  // trained in full, not an adapter
    std::printf(
        "             LoRA adapters %lld (rank %lld on %s: r (in + out) beside each; merge-lora folds them in)\n",
        ll(n.lora), ll(l.block.lora.rank), lora_targets_name(projections).c_str());
  }
  std::printf("  %lld layers x %lld = %lld\n", ll(c.layers), ll(n.total()), ll(c.layers * n.total()));
}

// A decoder-only model's parameters term by term (decoder_only_parameter_count's formula), then
// how it computes. `title` names the model ("preset gpt2-small", "checkpoint gpt2.safetensors").
int64_t print_decoder_only(const TransformerConfig& c, const std::string& title) {
  const int64_t d = c.d_model, V = c.tgt_vocab;
  std::printf("%s (decoder-only): d_model %lld, d_ff %lld, heads %lld, layers %lld, vocabulary %lld, context %lld\n",
              title.c_str(), ll(d), ll(c.d_ff), ll(c.heads), ll(c.layers), ll(V), ll(c.max_len));
  std::printf("  token embedding V d          %lld%s\n", ll(V * d),
              c.tie_embeddings ? " (tied: also the output projection)" : "");
  if (c.positions == Positions::Learned)
    std::printf("  learned positions n_ctx d    %lld\n", ll(c.max_len * d));
  else
    std::printf("  %s positions %s0 (computed, not stored)\n", positions_name(c.positions),
                c.positions == Positions::Rotary ? "              " : "        ");
  print_layer_terms(c);
  if (c.norm == NormPlacement::Pre)
    std::printf("  final norm                   %lld\n", ll(norm_parameter_count(c.layer())));
  if (!c.tie_embeddings) std::printf("  output projection V d        %lld (no bias)\n", ll(V * d));
  const int64_t total = decoder_only_parameter_count(c);
  std::printf("parameters: %lld (%.1fM)\n", ll(total), static_cast<double>(total) / 1e6);
  print_computation(c);
  return total;
}

// An encoder-only checkpoint's count, part by part (parameter_count(EncoderOnlyConfig)).
int64_t print_encoder_only(const EncoderOnlyConfig& c, const std::string& title) {
  const EncoderOnlyCount n = parameter_count(c);
  std::printf("%s (encoder-only): d_model %lld, d_ff %lld, heads %lld, layers %lld, vocabulary %lld, max_len %lld\n",
              title.c_str(), ll(c.d_model), ll(c.d_ff), ll(c.heads), ll(c.layers), ll(c.vocab), ll(c.max_len));
  std::printf("  embeddings %lld, encoder %lld, pooler %lld, mlm head %lld, classifier %lld (%lld classes)\n",
              ll(n.embeddings), ll(n.encoder), ll(n.pooler), ll(n.mlm_head), ll(n.classifier), ll(c.classes));
  std::printf("parameters: %lld (%.1fM)\n", ll(n.total()), static_cast<double>(n.total()) / 1e6);
  // positions_name: a rotary model's positions are "rope", not the sinusoids it has none of
  std::printf("%s positions, %s-LN%s, activation %s, %lld token types, %s, output %s%s\n", positions_name(c.positions),
              c.norm == NormPlacement::Pre ? "pre" : "post",
              c.block.normalization == Normalization::RMSNorm ? " RMSNorm" : "", activation_name(c.activation),
              ll(c.types), c.embed_norm ? "embedding LayerNorm" : "no embedding LayerNorm",
              c.tie_embeddings ? "tied to the embedding" : "untied", block_settings(c.layer(), c.positions).c_str());
  return n.total();
}

// params --checkpoint: what the checkpoint stores and its count, checked against its tensors.
int params_of_checkpoint(const std::string& path) {
  const CheckpointFile file = read_checkpoint_file(path);
  int64_t formula = 0;
  const std::string title = "checkpoint " + path;
  if (file.arch == Architecture::EncoderOnly) {
    formula = print_encoder_only(encoder_only_config_from_metadata(file.metadata, path), title);
  } else {
    const CheckpointContents contents = read_checkpoint(file);
    const TransformerConfig& c = contents.info.config;
    if (c.arch == Architecture::DecoderOnly) {
      formula = print_decoder_only(c, title);
    } else {
      std::printf(
          "%s (encoder-decoder): d_model %lld, d_ff %lld, heads %lld, layers %lld a side, vocabularies %lld "
          "and %lld, max_len %lld\n",
          title.c_str(), ll(c.d_model), ll(c.d_ff), ll(c.heads), ll(c.layers), ll(c.src_vocab), ll(c.tgt_vocab),
          ll(c.max_len));
      formula = parameter_count(c);
      std::printf("parameters: %lld (%.1fM)\n", ll(formula), static_cast<double>(formula) / 1e6);
      print_computation(c);
    }
    const Tokenizer& t = contents.info.target_tokenizer;
    std::printf("tokenizer: %s, %lld tokens\n",
                t.has_vocab() || t.kind() == Tokenizer::Kind::Hub ? t.kind_name().c_str() : "gpt2", ll(t.size()));
  }
  int64_t numbers = 0;
  for (const auto& [name, tensor] : file.parameters) numbers += tensor.numel();
  if (numbers != formula)
    throw CheckpointError(
        message(path, ": the formula gives ", formula, " parameters, but the tensors hold ", numbers));
  std::printf("the checkpoint's %lld tensors hold %lld numbers: the same\n", ll(file.parameters.size()), ll(numbers));
  return 0;
}

}  // namespace

namespace {
int encoder_decoder_preset(const Flags& f, const std::string& preset);
}  // namespace

int params_command(int argc, char** argv) {
  Flags f("params",
          "Parameter count and FLOPs per target token of a model configuration, from the formulas in\n"
          "transformer/model/encoder_decoder.h (the tests check them against instantiated models); or, with\n"
          "--checkpoint, the configuration a checkpoint stores and its count, checked against its tensors.");
  f.add("--preset", "base",
        "base (d 512, d_ff 2048, h 8, N 6) or big (d 1024, d_ff 4096, h 16, N 6) or tutorial, or gpt2-small\n"
        "(decoder-only: V 50257, n_ctx 1024, d 768, N 12, h 12, learned positions, pre-LN, tied output), or bert-base\n"
        "(encoder-only: V 30522, 512 learned positions, 2 token types, d 768, N 12, h 12, post-LN, GELU), or one of\n"
        "the hub's models built like Llama (decoder-only: pre-LN RMSNorm, rope, SwiGLU, grouped-query attention):\n"
        "smollm2-135m, llama-3.2-1b, qwen2.5-0.5b, tinyllama-1.1b");
  f.add("--vocab", "37000", "vocabulary size, shared by source and target as in the paper");
  f.add("--length", "25", "sentence length in tokens, for the FLOPs (source and target)");
  f.add("--checkpoint", "", "a checkpoint (any architecture) to describe instead of a preset");
  if (!f.parse(argc, argv)) {
    std::cout << f.help();
    return 0;
  }
  if (f.has("--checkpoint")) {
    if (f.given("--preset") || f.given("--vocab") || f.given("--length"))
      throw UsageError(
          "params: --checkpoint describes the checkpoint's model; --preset, --vocab and --length do not go with it");
    return params_of_checkpoint(f.text("--checkpoint"));
  }
  std::vector<std::string> presets = {"base", "big", "tutorial", "gpt2-small", "bert-base"};
  for (const std::string& name : hub_preset_names()) presets.push_back(name);
  const std::string preset = f.choice("--preset", presets);
  if (preset == "base" || preset == "big" || preset == "tutorial") return encoder_decoder_preset(f, preset);
  if (f.given("--vocab") || f.given("--length"))
    throw UsageError(message("params: ", preset, " has its own vocabulary and context"));
  if (preset == "bert-base") return bert_base_params();
  print_decoder_only(preset == "gpt2-small" ? gpt2_small_config() : hub_preset_config(preset), "preset " + preset);
  return 0;
}

namespace {

// params --preset base, big or tutorial: the paper's encoder-decoder, its count and FLOPs.
int encoder_decoder_preset(const Flags& f, const std::string& preset) {
  const int64_t vocab = f.integer("--vocab"), length = f.integer("--length");
  if (vocab < 5 || length < 1) throw UsageError("params: --vocab must be at least 5 and --length at least 1");
  if (length > TransformerConfig::max_max_len)
    throw UsageError(message("params: --length must be at most ", TransformerConfig::max_max_len, ", got ", length));
  const TransformerConfig c = preset == "base"  ? TransformerConfig::base(vocab, vocab)
                              : preset == "big" ? TransformerConfig::big(vocab, vocab)
                                                : TransformerConfig::tutorial(vocab, vocab);
  try {
    c.validate();  // the vocabulary's bound, and the model's size
  } catch (const ValueError& e) {
    throw UsageError(message("params: --vocab ", vocab, " makes a model the library refuses: ", e.what()));
  }
  const FlopCount flops = flop_count(c, length, length);
  std::printf("preset %s: d_model %lld, d_ff %lld, heads %lld, layers %lld, vocabulary %lld%s\n", preset.c_str(),
              static_cast<long long>(c.d_model), static_cast<long long>(c.d_ff), static_cast<long long>(c.heads),
              static_cast<long long>(c.layers), static_cast<long long>(vocab),
              c.tie_embeddings ? " (embeddings tied)" : "");
  std::printf("parameters: %lld (%.1fM)\n", static_cast<long long>(parameter_count(c)),
              static_cast<double>(parameter_count(c)) / 1e6);
  std::printf("forward FLOPs per target token (%lld-token sentences): %.3g  (training: about 3x, %.3g)\n",
              static_cast<long long>(length), flops.forward_per_target_token(), flops.training_per_target_token());
  return 0;
}

}  // namespace

}  // namespace gradformer
