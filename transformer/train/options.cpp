#include "transformer/train/options.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "tensor/kernels/parallel.h"
#include "tensor/support/saved_state.h"
#include "tensor/support/utf8.h"
#include "transformer/store/checkpoint.h"

namespace gradformer {

std::vector<std::string> architecture_tasks(Architecture arch) {
  switch (arch) {
    case Architecture::EncoderDecoder:
      return {"copy", "toy-translation", "corpus"};
    case Architecture::DecoderOnly:
      return {"toy-lm", "toy-translation", "lm", "corpus", "text", "sft"};
    case Architecture::EncoderOnly:
      return {"mlm", "classify"};
  }
  return {};
}

TaskData task_data_kind(Architecture arch, const std::string& task) {
  if (task == "corpus") return {"pairs", true};
  if (task == "lm") return {"sentences", true};
  if (task == "sft") return {"conversations", true};
  if (arch == Architecture::EncoderOnly) return {task == "classify" ? "labelled sentences" : "sentences", false};
  return {};  // the built-in tasks
}

std::string data_task(Architecture arch) {
  return arch == Architecture::EncoderDecoder ? "corpus" : arch == Architecture::DecoderOnly ? "lm" : "mlm";
}

// ---- the table of defaults ----------------------------------------------------------------------

TrainOptions default_train_options(const std::string& task, Architecture arch) {
  const std::vector<std::string> tasks = architecture_tasks(arch);
  if (std::find(tasks.begin(), tasks.end(), task) == tasks.end()) {
    std::string names;
    for (const std::string& t : tasks) names += (names.empty() ? "" : ", ") + t;
    throw ValueError(message("train: ", architecture_name(arch), " has no task '", task, "' (", names, ")"));
  }
  TrainOptions o;  // the struct's defaults are the encoder-decoder copy task's
  o.arch = arch, o.task = task, o.out_dir = "runs/" + task;
  if (arch == Architecture::EncoderDecoder) {
    if (task == "copy") return o;
    o.heads = 4, o.batch_size = 64, o.epochs = 12, o.lr = 1.0, o.warmup = 400, o.label_smoothing = 0.1;
    o.clip = 1.0, o.log_every = 50, o.eval_every = 500;
  } else if (arch == Architecture::DecoderOnly) {
    o.norm = NormPlacement::Pre, o.tie_embeddings = true, o.heads = 4, o.layers = 4, o.batch_size = 64;
    o.batches_per_epoch = 100;  // toy-lm: an "epoch" is 100 fresh batches
    o.warmup = 400, o.clip = 1.0, o.log_every = 50, o.eval_every = 500;
    // toy-lm never sees a sentence twice: nothing to overfit, and lr 1.0 plateaus at 1.98 nats/token for 300 steps
    o.dropout = task == "toy-lm" ? 0.0 : 0.1, o.epochs = 10, o.lr = 0.5;
    if (task == "toy-translation" || task == "corpus") {
      o.layers = 5, o.d_ff = 480;  // 990,048 parameters: the encoder-decoder's 981,881, within 1%
      o.epochs = 5, o.lr = 1.0, o.label_smoothing = 0.1;  // toy-translation: 785 steps, test BLEU 99.7 (chapter 15)
    }
    if (task == "toy-translation") o.out_dir = "runs/toy-translation-decoder-only";
    // text: a file's bytes in blocks of max_len tokens; a short warmup, so that a run of a few minutes
    // learns at full rate, and evaluated often, each time with a sample.
    if (task == "text")
      o.tokenizer = "bytes", o.context = o.max_len, o.warmup = 100, o.log_every = 20, o.eval_every = 100;
    // sft: a trained model (--init) taught to answer; few conversations, so small batches, a short
    // warmup and a lower rate than training from scratch, which would undo what the model knows.
    if (task == "sft") o.batch_size = 16, o.epochs = 3, o.lr = 0.2, o.warmup = 50, o.log_every = 10, o.eval_every = 100;
  } else {  // encoder-only: a small BERT
    o.d_model = 64, o.d_ff = 256, o.heads = 4, o.activation = Activation::GELU, o.tie_embeddings = true;
    o.max_len = 64, o.batch_size = 32, o.epochs = 5, o.steps = 1500, o.lr = 1.0, o.warmup = 300, o.clip = 1.0;
    o.log_every = 100, o.out_dir = "runs/encoder-only-" + task;
    // few enough labels that pre-training shows (chapter 17)
    if (task == "classify") o.steps = 20, o.lr = 0.5, o.warmup = 10, o.batch_size = 16, o.log_every = 10;
  }
  return o;
}

// ---- options as text --------------------------------------------------------------------------------

std::string option_text(const std::string& value) { return value; }
std::string option_text(int64_t value) { return std::to_string(value); }
std::string option_text(uint64_t value) { return std::to_string(value); }
std::string option_text(double value) { return exact_text(value); }
std::string option_text(bool value) { return value ? "true" : "false"; }
std::string option_text(Architecture value) { return architecture_name(value); }
std::string option_text(Batching value) { return batching_name(value); }
std::string option_text(NormPlacement value) { return value == NormPlacement::Pre ? "pre" : "post"; }
std::string option_text(Activation value) { return activation_name(value); }
std::string option_text(Positions value) { return positions_name(value); }

namespace {

// The value `text` names, of the type of `value`; CheckpointError naming `what` if it names none.
void parse_option(const std::string&, const std::string& text, std::string& value) { value = text; }
void parse_option(const std::string& what, const std::string& text, int64_t& value) {
  value = parse_integer(text, what);
}
void parse_option(const std::string& what, const std::string& text, uint64_t& value) {
  value = static_cast<uint64_t>(parse_integer(text, what));
}
void parse_option(const std::string& what, const std::string& text, double& value) { value = parse_number(text, what); }
template <class T>
void parse_choice(const std::string& what, const std::string& text, T& value, std::initializer_list<T> choices) {
  std::string names;
  for (const T choice : choices) {
    if (option_text(choice) == text) {
      value = choice;
      return;
    }
    names += (names.empty() ? "" : ", ") + option_text(choice);
  }
  throw CheckpointError(message(what, " is '", text, "', not one of ", names));
}
void parse_option(const std::string& what, const std::string& text, bool& value) {
  parse_choice(what, text, value, {false, true});
}
void parse_option(const std::string& what, const std::string& text, Architecture& value) {
  parse_choice(what, text, value, {Architecture::EncoderDecoder, Architecture::DecoderOnly, Architecture::EncoderOnly});
}
void parse_option(const std::string& what, const std::string& text, Batching& value) {
  parse_choice(what, text, value, {Batching::Random, Batching::Length});
}
void parse_option(const std::string& what, const std::string& text, NormPlacement& value) {
  parse_choice(what, text, value, {NormPlacement::Post, NormPlacement::Pre});
}
void parse_option(const std::string& what, const std::string& text, Activation& value) {
  parse_choice(what, text, value, {Activation::ReLU, Activation::GELU, Activation::GELUTanh, Activation::SwiGLU});
}
void parse_option(const std::string& what, const std::string& text, Positions& value) {
  parse_choice(what, text, value, {Positions::Sinusoidal, Positions::Learned, Positions::Rotary});
}

std::map<std::string, std::string> texts(const TrainOptions& o) {
  std::map<std::string, std::string> out;
  visit_options(o, [&](const char* name, const auto& value) { out[name] = option_text(value); });
  return out;
}

}  // namespace

std::map<std::string, std::string> options_to_state(const TrainOptions& o) {
  std::map<std::string, std::string> state;
  for (auto& [name, text] : texts(o)) state["options." + name] = text;
  state["options.threads"] = std::to_string(num_threads());
  return state;
}

TrainOptions options_from_state(const std::map<std::string, std::string>& s, const std::string& source,
                                Architecture arch, const std::map<std::string, std::string>& config) {
  const SavedState saved(s, source);
  // Runs saved before the options named their architecture were encoder-decoder ones, or encoder-only
  // ones whose config.arch says so.
  if (saved.contains("options.arch")) parse_option(source + ": options.arch", saved.text("options.arch"), arch);
  TrainOptions o;
  try {
    o = default_train_options(saved.text("options.task"), arch);
  } catch (const ValueError& e) {
    throw CheckpointError(message(source, ": options.task: ", e.what()));
  }
  // Runs saved before the batching could be chosen were planned by length, in one piece: the
  // encoder-decoder's planned tasks (the others never read it, and validate() refuses a non-default).
  if (arch == Architecture::EncoderDecoder && o.task != "copy" && !saved.contains("options.batching"))
    o.batching = Batching::Length, o.pieces = 1;
  visit_options(o, [&](const char* name, auto& value) {
    const std::string key = message("options.", name);
    if (saved.contains(key)) parse_option(message(source, ": ", key), saved.text(key), value);
  });
  const std::vector<std::string> model = {"d_model", "d_ff",    "heads",      "layers",         "dropout",
                                          "norm",    "max_len", "activation", "tie_embeddings", "positions"};
  visit_options(o, [&](const char* name, auto& value) {
    const auto entry = config.find(message("config.", name));
    if (entry != config.end() && std::find(model.begin(), model.end(), name) != model.end())
      parse_option(message(source, ": ", entry->first), entry->second, value);
  });
  o.block = block_options_from_metadata(config, source);
  return o;
}

// ---- validation -----------------------------------------------------------------------------------

void require_utf8_path(const std::string& field, const std::string& path) {
  if (const auto at = invalid_utf8_at(path))
    throw TrainOptionError(field, message("must be UTF-8 text (it is kept in the checkpoint), got byte ",
                                          static_cast<int>(static_cast<unsigned char>(path[*at])), " at ", *at));
}

namespace {

// The model's sizes, checked field by field before the data is read (the configurations check them
// again, but cannot say which option was wrong).
void validate_model(const TrainOptions& o) {
  using C = TransformerConfig;
  // max_len from 2: a token and the </s> or <s> that batching adds.
  const std::tuple<const char*, int64_t, int64_t, int64_t> ranges[] = {{"d_model", o.d_model, 2, C::max_d_model},
                                                                       {"d_ff", o.d_ff, 1, C::max_d_ff},
                                                                       {"heads", o.heads, 1, C::max_heads},
                                                                       {"layers", o.layers, 1, C::max_layers},
                                                                       {"max_len", o.max_len, 2, C::max_max_len}};
  for (const auto& [field, value, least, most] : ranges)
    if (value < least || value > most)
      throw TrainOptionError(field, message("must be from ", least, " to ", most, ", got ", value));
  if (o.d_model % 2 != 0 && o.positions == Positions::Sinusoidal)
    throw TrainOptionError("d_model", message("must be even (sine and cosine pairs), got ", o.d_model));
  if (o.d_model % o.heads != 0 && o.block.head_dim == 0)
    throw TrainOptionError("heads", message("must divide the model width ", o.d_model, ", got ", o.heads));
  if (o.block.kv_heads < 0 || o.block.kv_heads > o.heads || (o.block.kv_heads > 0 && o.heads % o.block.kv_heads != 0))
    throw TrainOptionError("kv_heads", message("must divide the heads, ", o.heads, ", got ", o.block.kv_heads));
  if (o.block.head_dim < 0 || o.block.head_dim > C::max_d_model)
    throw TrainOptionError("head_dim", message("must be from 0 to ", C::max_d_model, ", got ", o.block.head_dim));
  const int64_t head_width = o.block.head_dim > 0 ? o.block.head_dim : o.d_model / o.heads;
  if (o.positions == Positions::Rotary && head_width % 2 != 0)
    throw TrainOptionError("positions", message("rope turns pairs of a head's numbers, so the head width (d_model / "
                                                "heads, or head_dim) must be even, got ",
                                                head_width));
  if (!(o.block.rope_theta > 1 && o.block.rope_theta <= 1e12))
    throw TrainOptionError("rope_theta", message("must be in (1, 1e12], got ", o.block.rope_theta));
  if (!(o.dropout >= 0 && o.dropout < 1))
    throw TrainOptionError("dropout", message("must be in [0, 1), got ", o.dropout));
}

// The options only some tasks read: given to another task they would be silently ignored, so a
// value other than the task's default is refused.
void validate_use(const TrainOptions& o) {
  const TaskData data = task_data_kind(o.arch, o.task);
  const bool planned = o.arch == Architecture::EncoderDecoder && o.task != "copy";
  const bool toy_labels = o.arch == Architecture::EncoderOnly && o.task == "classify" && o.data_path.empty();
  const bool text = o.arch == Architecture::DecoderOnly && o.task == "text";
  const bool sft = o.arch == Architecture::DecoderOnly && o.task == "sft";
  const std::pair<const char*, bool> used[] = {
      {"data_path", !data.kind.empty()},
      {"valid_path", !data.kind.empty()},
      {"test_path", !data.kind.empty()},
      {"init_path", (o.arch == Architecture::EncoderOnly && o.task == "classify") || sft},
      {"chat_template", sft},
      {"text_path", text},
      {"context", text},
      // The copy task's digits are their own vocabulary; the encoder-only tasks, and the decoder-only
      // ones other than text, read words for now.
      {"tokenizer", text || planned},
      {"vocab_size", text || planned},
      {"shared_vocab", planned},
      {"labelled", toy_labels},
      {"max_tokens", planned},
      {"batching", planned},
      {"pieces", planned},
      {"beam", planned},
      {"batches_per_epoch", o.task == "copy" || o.task == "toy-lm"}};
  const auto given = texts(o), defaults = texts(default_train_options(o.task, o.arch));
  for (const auto& [field, is_used] : used)
    if (!is_used && given.at(field) != defaults.at(field))
      throw TrainOptionError(field, message("is not used by ", architecture_name(o.arch), " ", o.task));
  if (data.required && o.data_path.empty())
    throw TrainOptionError("data_path", message("is empty: ", architecture_name(o.arch), " ", o.task, " trains on the ",
                                                data.kind, " of a file"));
  if (sft && o.init_path.empty())
    throw TrainOptionError("init_path", "is empty: decoder-only sft fine-tunes a trained decoder-only model (--init)");
  if (o.block.lora.rank != 0 && !sft)
    throw TrainOptionError("lora_rank", message("is for fine-tuning a trained model (decoder-only sft), not ",
                                                architecture_name(o.arch), " ", o.task));
  if (sft && !o.chat_template.empty() && o.chat_template != "chatml" && o.chat_template != "llama3")
    throw TrainOptionError("chat_template", message("must be chatml or llama3, got '", o.chat_template, "'"));
  if (text && o.text_path.empty())
    throw TrainOptionError("text_path", "is empty: decoder-only text trains on a text file");
  if (o.data_path.empty() && (!o.valid_path.empty() || !o.test_path.empty()))
    throw TrainOptionError(o.valid_path.empty() ? "test_path" : "valid_path",
                           message("is for a run on your own data (data_path), not the built-in ", o.task));
}

// The tokenizer and its vocabulary, and the text task's blocks.
void validate_text(const TrainOptions& o) {
  if (o.tokenizer != "words" && o.tokenizer != "bytes" && o.tokenizer != "bpe")
    throw TrainOptionError("tokenizer", message("must be words, bytes or bpe, got '", o.tokenizer, "'"));
  if (o.vocab_size < 0 || o.vocab_size > TransformerConfig::max_vocab)
    throw TrainOptionError("vocab_size", message("must be from 0 to ", TransformerConfig::max_vocab,
                                                 " (0: the default), got ", o.vocab_size));
  if (o.task != "text") return;
  if (o.context < 1 || o.context > o.max_len)
    throw TrainOptionError("context", message("must be from 1 to max_len ", o.max_len,
                                              " (the model reads context tokens at once), got ", o.context));
  // A text file is a stream of bytes: its line ends and spacing are part of it, and its bits per
  // byte are counted on every byte. Words would drop both, and make an unseen word <unk>, bytes unknown.
  if (o.tokenizer == "words")
    throw TrainOptionError("tokenizer",
                           "words is not for decoder-only text, whose file is read as bytes (its line "
                           "ends and spaces are text too; a word unseen in training would be <unk>): "
                           "use bytes or bpe");
  if (o.tokenizer == "bytes" && o.vocab_size != 0)
    throw TrainOptionError("vocab_size", message("is not used by the bytes tokenizer (its vocabulary is the 4 specials "
                                                 "and the 256 bytes), got ",
                                                 o.vocab_size));
  if (o.tokenizer == "bpe" && o.vocab_size != 0 && o.vocab_size < 260)
    throw TrainOptionError("vocab_size", message("must be at least 260 for bpe (the 4 specials and the 256 bytes; ",
                                                 "0: ", kDefaultBpeVocab, "), got ", o.vocab_size));
}

}  // namespace

void validate(const TrainOptions& o, bool new_model) {
  const std::pair<const char*, int64_t> at_least_one[] = {{"epochs", o.epochs},
                                                          {"batch_size", o.batch_size},
                                                          {"warmup", o.warmup},
                                                          {"log_every", o.log_every},
                                                          {"beam", o.beam},
                                                          {"pieces", o.pieces},
                                                          {"batches_per_epoch", o.batches_per_epoch}};
  for (const auto& [field, value] : at_least_one)
    if (value < 1) throw TrainOptionError(field, message("must be at least 1, got ", value));
  const std::pair<const char*, int64_t> bounded[] = {
      {"epochs", o.epochs},         {"steps", o.steps},   {"batch_size", o.batch_size},
      {"max_tokens", o.max_tokens}, {"pieces", o.pieces}, {"batches_per_epoch", o.batches_per_epoch},
      {"labelled", o.labelled}};
  for (const auto& [field, value] : bounded)
    if (value > kMostOfAnyCount)
      throw TrainOptionError(field, message("must be at most ", kMostOfAnyCount, ", got ", value));
  const std::pair<const char*, int64_t> not_negative[] = {{"steps", o.steps},           {"max_tokens", o.max_tokens},
                                                          {"eval_every", o.eval_every}, {"save_every", o.save_every},
                                                          {"keep_last", o.keep_last},   {"stop_after", o.stop_after}};
  for (const auto& [field, value] : not_negative)
    if (value < 0) throw TrainOptionError(field, message("must be at least 0, got ", value));
  if (o.labelled < 1) throw TrainOptionError("labelled", message("must be at least 1, got ", o.labelled));
  // Written so that NaN fails too.
  if (!(o.label_smoothing >= 0 && o.label_smoothing < 1))
    throw TrainOptionError("label_smoothing", message("must be in [0, 1), got ", o.label_smoothing));
  if (!(o.lr > 0 && std::isfinite(o.lr))) throw TrainOptionError("lr", message("must be positive, got ", o.lr));
  if (!(o.clip >= 0 && std::isfinite(o.clip)))
    throw TrainOptionError("clip", message("must be at least 0 (0: no clipping), got ", o.clip));
  for (const auto& [field, path] : {std::pair<const char*, const std::string&>{"data_path", o.data_path},
                                    {"valid_path", o.valid_path},
                                    {"test_path", o.test_path},
                                    {"text_path", o.text_path},
                                    {"init_path", o.init_path},
                                    {"chat_template", o.chat_template},
                                    {"out_dir", o.out_dir},
                                    {"metrics_path", o.metrics_path}})
    require_utf8_path(field, path);
  const std::vector<std::string> tasks = architecture_tasks(o.arch);
  if (std::find(tasks.begin(), tasks.end(), o.task) == tasks.end())
    throw TrainOptionError("task",
                           message("must be one of the ", architecture_name(o.arch), "'s tasks, got '", o.task, "'"));
  validate_use(o);
  if (new_model) validate_model(o);
  validate_text(o);
}

}  // namespace gradformer
