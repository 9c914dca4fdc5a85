// GPT-2's released weights (Radford et al., 2019) as a gradformer decoder-only checkpoint.
//
// The hub's model.safetensors names GPT-2's tensors as its GPT2Model does (each name may start with
// "transformer.", as GPT2LMHeadModel's state dict has them):
//   wte.weight [V, d]  wpe.weight [n_ctx, d]  ln_f.weight [d]  ln_f.bias [d]
//   h.{i}.ln_1.*  h.{i}.attn.c_attn.weight [d, 3d] .bias [3d]  h.{i}.attn.c_proj.weight [d, d] .bias
//   h.{i}.ln_2.*  h.{i}.mlp.c_fc.weight [d, d_ff] .bias [d_ff]  h.{i}.mlp.c_proj.weight [d_ff, d] .bias
//   lm_head.weight [V, d]    optional: GPT-2 ties it to wte
//   h.{i}.attn.bias, h.{i}.attn.masked_bias    the causal mask as buffers: ignored
// GPT-2's Conv1D computes x W + b with W stored [in, out], the transpose of a Linear's [out, in],
// so every Conv1D weight is transposed on the way in:
//   c_attn.weight^T -> decoder.layers.{i}.self_attn.in_proj_weight [3d, d] (GPT-2 splits the 3d
//                      outputs q | k | v in that order: in_proj's rows W^Q; W^K; W^V)
//   attn.c_proj^T -> self_attn.out_proj   mlp.c_fc^T -> linear1   mlp.c_proj^T -> linear2
//   ln_1 -> norm1  ln_2 -> norm2  ln_f -> decoder.norm  wte -> embed  wpe -> positional_encoding
// The model is pre-LN with learned positions, GELU's tanh form, the embedding unscaled, tied output.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nn/safetensors.h"
#include "transformer/store/checkpoint.h"

namespace gradformer {

/// GPT-2's sizes, as its tensors' shapes tell them.
struct Gpt2Sizes {
  int64_t vocab = 0, d = 0, n_ctx = 0, layers = 0, d_ff = 0;
};

/// One of GPT-2's tensors and the gradformer parameter it is.
struct Gpt2Name {
  std::string gpt2;        // "h.0.attn.c_attn.weight"
  std::string gradformer;  // "decoder.layers.0.self_attn.in_proj_weight"
  Shape shape;             // in GPT-2's layout: [d, 3d]
  bool conv1d = false;     // a Conv1D weight [in, out]: transposed into a Linear's [out, in]
};

/// GPT-2's name table: every tensor of a GPT-2 of these sizes, with its gradformer name, in the
/// order of the table at the top of this file (wte, wpe, h.0.ln_1.weight, ..., ln_f.bias). Without
/// lm_head.weight, which GPT-2 ties to wte. The importer, chapter 19's writer of GPT-2 files and
/// the tests all read the names here.
std::vector<Gpt2Name> gpt2_names(const Gpt2Sizes& sizes);

/// What a GPT-2 config.json (the hub's) or hparams.json (the original release's) says: each field
/// only when the file gives it (n_inner null is not given: GPT-2 then uses 4 d).
struct Gpt2Config {
  std::string source;  // the file, for messages
  std::optional<int64_t> n_head, n_embd, n_layer, n_positions, n_ctx, vocab_size, n_inner;
  std::optional<double> layer_norm_epsilon, resid_pdrop;
  std::optional<Activation> activation;
  std::string activation_function;  // as the file names it ("gelu_new"), when given
};

/// The configuration in `text`. CheckpointError naming `source` for text that is not a JSON
/// object, a field of another kind than GPT-2's (n_head not an integer, ...), an
/// activation_function gradformer does not compute (named; gelu_new, gelu_pytorch_tanh and
/// gelu_fast are GELU's tanh form, gelu the erf form, relu ReLU), and for what GPT-2's variants do
/// that gradformer's attention does not: scale_attn_by_inverse_layer_idx or reorder_and_upcast_attn
/// true, scale_attn_weights false.
Gpt2Config parse_gpt2_config(std::string_view text, const std::string& source);
/// parse_gpt2_config of a file; CheckpointError naming it when it cannot be read.
Gpt2Config read_gpt2_config(const std::string& path);

/// The two names GPT-2's tokenizer files go by: the hub's, then the original release's.
inline constexpr std::pair<const char*, const char*> kGpt2TokenizerFiles[] = {{"vocab.json", "merges.txt"},
                                                                              {"encoder.json", "vocab.bpe"}};
/// GPT-2's tokenizer from the files in `dir`: vocab.json + merges.txt (the hub's names) or
/// encoder.json + vocab.bpe (the original release's); the same content under two names. Its ids are
/// GPT-2's exactly (Tokenizer::gpt2). CheckpointError naming `dir` and the files it lacks when
/// neither pair is there (the message tells to give their directory with `dir_flag`), a file that
/// is not a regular file (a FIFO is not waited on), or a merge making a token the vocabulary lacks;
/// DataError naming the file for a malformed one.
struct Gpt2Tokenizer {
  Tokenizer tokenizer;
  std::string source;  // "DIR/vocab.json and DIR/merges.txt"
};
Gpt2Tokenizer read_gpt2_tokenizer(const std::string& dir, const std::string& dir_flag = "--tokenizer");

/// What import_gpt2 is told besides the tensors.
struct Gpt2Options {
  std::optional<int64_t> heads;                    // --heads: overrides a config's n_head, which must then agree
  std::optional<Gpt2Config> config;                // config.json, when there is one
  std::string tokenizer_source = "the tokenizer";  // its files, for messages
};

struct Gpt2Import {
  CheckpointInfo info;  // the configuration; GPT-2's tokenizer on both sides
  std::unique_ptr<DecoderOnly> model;
  bool prefixed = false;                        // the names began with "transformer."
  std::vector<std::string> ignored;             // the buffers left out (h.{i}.attn.bias, ...)
  std::vector<std::string> transposed;          // "attn.c_attn.weight [d, 3d] -> self_attn.in_proj_weight [3d, d]", ...
  std::string config_source, tokenizer_source;  // the files read (import_gpt2_files; "": no config)
};

/// The model `tensors` (read from `source`) are GPT-2's weights of, with `tokenizer`. The shapes
/// tell V, d, n_ctx, the layers (h.{i}) and d_ff; the heads come from options.heads or the config.
/// CheckpointError naming `source`, the tensor and the shapes for: no wte.weight, no h.{i}.*, a
/// gap in the layer indices, a tensor that is not float32/float64, missing, unexpected and
/// mis-shaped tensors (listed together), lm_head.weight of another shape, no heads given, heads
/// that do not divide d, --heads and n_head that disagree, a config field that disagrees with the
/// shapes (both named), a tokenizer whose size is not wte's rows (both numbers).
Gpt2Import import_gpt2(StateDict tensors, const std::string& source, const Tokenizer& tokenizer,
                       const Gpt2Options& options);

/// Where the files are: the model (a directory: its model.safetensors, the hub's name); the
/// tokenizer's directory ("": the model's); the config ("": config.json beside the model if there is
/// one, else none).
struct Gpt2Files {
  std::string model, tokenizer_dir, config;
  std::optional<int64_t> heads;
};
/// Reads the files and imports them (refusing a file that is already a gradformer checkpoint).
/// CheckpointError as import_gpt2, and saying that --heads is needed when neither it nor a config
/// gives the heads.
Gpt2Import import_gpt2_files(Gpt2Files files);
/// Every file import_gpt2_files may read for `files` (the model, the config given or beside it,
/// both pairs of tokenizer files), resolved as it resolves them: what its output must not be.
std::vector<std::string> gpt2_input_paths(const Gpt2Files& files);
/// CheckpointError "PATH: not a regular file (a FIFO, a device or a directory); WHAT is read whole"
/// for a path that exists and is not a file: opening a FIFO would wait for a writer forever.
void require_regular_input(const std::string& path, const std::string& what);

}  // namespace gradformer
