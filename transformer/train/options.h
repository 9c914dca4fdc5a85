// The settings of a training run, for every architecture and task: one options type, one table of
// each architecture's and task's defaults, one validation, and one list of the options by name
// (visit_options) that the checkpoint, the metrics file and the command line all read.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tensor/support/error.h"
#include "tensor/support/utf8.h"
#include "transformer/data/batch_plan.h"
#include "transformer/model/config.h"

namespace gradformer {

struct TrainOptions {
  /// Which member of the family, and what it learns (architecture_tasks lists each one's tasks).
  /// Ignored when resuming: the checkpoint's config.arch wins.
  Architecture arch = Architecture::EncoderDecoder;
  std::string task = "copy";
  /// The user's data: pairs (source<TAB>target), sentences (one per line) or labelled sentences
  /// (label<TAB>sentence), as the task reads (task_data_kind).
  std::string data_path, valid_path, test_path;
  /// decoder-only text: any file, read as one stream of tokens (text_blocks.h); its last tenth held
  /// out for validation. `context` tokens per training block: the model reads blocks of context
  /// tokens, so context <= max_len.
  std::string text_path;
  int64_t context = 128;
  // encoder-only classify: start from this pre-trained checkpoint (empty: from scratch); decoder-only
  // sft: the language model to fine-tune (required).
  std::string init_path;
  // decoder-only sft: the chat template (chat_template.h) by name; empty: the one the model's
  // tokenizer implies, else chatml.
  std::string chat_template;
  int64_t labelled = 16;  // encoder-only classify on the toy corpus: the labelled training sentences
  // How text becomes tokens (transformer/data/tokenizer.h), learned from the training split only:
  // "words" (whitespace words, an unseen word <unk>), "bytes" (the 256 bytes) or "bpe" (byte-level
  // byte-pair encoding: merges learned until vocab_size ids, specials included; 0: kDefaultBpeVocab).
  std::string tokenizer = "words";
  int64_t vocab_size = 0;  // bpe: at least the 4 specials and 256 bytes, or 0 for the default; 0 for the others
  // Encoder-decoder translation: one tokenizer learned on the sources and targets together (the
  // paper's shared vocabulary, which tied embeddings need), or one per side. The program's default
  // is true with --tokenizer bpe or bytes, false with words (each side's own word list).
  bool shared_vocab = false;

  // The model (ignored when resuming, and with init_path: the checkpoint's configuration wins).
  int64_t d_model = 128, d_ff = 512, heads = 8, layers = 2;
  double dropout = 0.1;
  NormPlacement norm = NormPlacement::Post;
  bool tie_embeddings = false;
  int64_t max_len = 128;
  Activation activation = Activation::ReLU;  // of the feed-forward network
  Positions positions = Positions::Sinusoidal;
  // RMSNorm, key/value heads, head width, biases, the rotary base: the paper's unless set. Not among
  // the options visited below (a checkpoint keeps them in its config.* entries, written only when
  // they are not the paper's, so that earlier runs' checkpoints stay what they were).
  BlockOptions block = {};

  // Optimisation: Adam(0.9, 0.98, 1e-9), lr = this lr * NoamSchedule(d_model, warmup).
  int64_t batch_size = 80;  // sentences (sequences) per batch; a corpus batch holds at most this many
  int64_t max_tokens = 0;   // encoder-decoder corpus: padded tokens per batch, 0 for no budget
  // Encoder-decoder corpus: which sentences share a batch (batch_plan.h), and in how many
  // length-sorted pieces a batch is padded (the pieces' gradients add up to the batch's). Random
  // batches in 4 pieces learn as random batches do with a fraction of their padding; length
  // batches pad least but, where length tells what a sentence is, learn far less per epoch (chapter 12).
  Batching batching = Batching::Random;
  int64_t pieces = 4;
  // The Annotated Transformer runs the copy task for 20 epochs (400 steps) with a 400-step warmup,
  // so the rate is still rising at the last step: it (in PyTorch) and gradformer then copy 94-96 of
  // 100 fresh sequences. 30 epochs with a 200-step warmup (the rate peaks, then decays) copy 100.
  int64_t epochs = 30;
  int64_t steps = 0;               // if not 0, the run's length in steps, whatever epochs says
  int64_t batches_per_epoch = 20;  // tasks of fresh batches (copy, toy-lm); a corpus epoch is the whole corpus
  double lr = 0.5;
  int64_t warmup = 200;
  double label_smoothing = 0;
  double clip = 0;  // global gradient-norm clip, 0 for none
  uint64_t seed = 1;

  // Output (a resumed run takes these from the caller, the rest from its checkpoint).
  std::string out_dir = "runs/copy";                       // model.safetensors, loss.svg, attention/*.svg
  std::string metrics_path;                                // one JSON object per logging step
  int64_t log_every = 20, eval_every = 0, save_every = 0;  // 0: evaluate / save only at the end
  int64_t keep_last = 0;   // also keep the last this many saves as model-step-N.safetensors (average.h)
  int64_t stop_after = 0;  // stop after this step, as an interruption would (0: run to the end)
  int64_t beam = 1;        // encoder-decoder: beam size of the final translation evaluation
  bool quiet = false;      // no progress output
  // Profile a few steps after warm-up (step_profile.h), print the profiler's table and write the
  // Chrome trace here ("": no profiling).
  std::string profile_path;
  // Resuming: train to this many epochs or steps instead of the checkpoint's (0: its own), and keep
  // this many saves instead of the checkpoint's keep_last (none: its own; a resume goes on keeping).
  int64_t resume_epochs = 0, resume_steps = 0;
  std::optional<int64_t> resume_keep_last;
};

/// The vocabulary of a bpe tokenizer when vocab_size is 0: the 4 specials, the 256 bytes and 764
/// merges, small enough to learn in seconds from a book and to give each merge many examples.
constexpr int64_t kDefaultBpeVocab = 1024;

/// The most epochs, steps or sentences a batch any option may ask for: far beyond any CPU run, and
/// small enough that epochs x batches per epoch cannot overflow nor a batch be an allocation of terabytes.
constexpr int64_t kMostOfAnyCount = int64_t{1} << 30;
/// The most steps a run can have (epochs x batches per epoch, each at most kMostOfAnyCount): a step
/// read from a checkpoint beyond it was not written by a run, and arithmetic on it could overflow.
constexpr int64_t kMostSteps = kMostOfAnyCount * kMostOfAnyCount;

/// A TrainOptions field train() cannot use. what(): "train: <field> <requirement>", e.g.
/// "train: epochs must be at least 1, got 0"; field() and requirement() separately, so a front end
/// can say it in its own terms (the program names its flag, --epochs).
class TrainOptionError : public ValueError {
 public:
  TrainOptionError(const std::string& field, const std::string& requirement)
      : ValueError("train: " + field + " " + requirement), field_(field), requirement_(printable(requirement)) {}
  const std::string& field() const { return field_; }
  const std::string& requirement() const { return requirement_; }

 private:
  std::string field_, requirement_;
};

/// `config`, of any architecture, with the model options of `o`: the sizes, dropout, norm placement,
/// max_len, activation, positions and tied embeddings.
template <class Config>
Config with_model_options(Config c, const TrainOptions& o) {
  c.d_model = o.d_model, c.d_ff = o.d_ff, c.heads = o.heads, c.layers = o.layers, c.dropout = o.dropout;
  c.norm = o.norm, c.max_len = o.max_len, c.tie_embeddings = o.tie_embeddings, c.activation = o.activation;
  c.positions = o.positions, c.block = o.block;
  return c;
}

/// The tasks of an architecture, its default first: encoder-decoder {copy, toy-translation, corpus},
/// decoder-only {toy-lm, toy-translation, lm, corpus, text}, encoder-only {mlm, classify}.
std::vector<std::string> architecture_tasks(Architecture arch);

/// What data_path holds for a task: "pairs", "sentences", "labelled sentences", or "" for a task
/// that reads no file. `required`: the task has no data of its own (corpus, lm).
struct TaskData {
  std::string kind;
  bool required = false;
};
TaskData task_data_kind(Architecture arch, const std::string& task);
/// The task --data selects when no task is named: each architecture's first task that reads a file.
std::string data_task(Architecture arch);

/// The defaults of a task: the table every front end shows (train --help) and train() starts from.
/// ValueError for a task the architecture does not have.
TrainOptions default_train_options(const std::string& task, Architecture arch = Architecture::EncoderDecoder);

/// A TrainOptionError for an option out of range or one the task does not use; with `new_model`,
/// also for model sizes out of range (a resumed or initialised run takes its model's from the checkpoint).
void validate(const TrainOptions& options, bool new_model);

/// A TrainOptionError for `field` unless `path` is UTF-8 text: the paths a run uses are kept in its
/// checkpoint's metadata, which is UTF-8, so a path that is not is refused before training, not after.
void require_utf8_path(const std::string& field, const std::string& path);

/// An option's value as text, as a checkpoint and the metrics file keep it.
std::string option_text(const std::string& value);
std::string option_text(int64_t value);
std::string option_text(uint64_t value);
std::string option_text(double value);  // enough digits to read back the same double
std::string option_text(bool value);
std::string option_text(Architecture value);
std::string option_text(Batching value);
std::string option_text(NormPlacement value);
std::string option_text(Activation value);
std::string option_text(Positions value);

/// Calls visit(name, field) for each option a run is defined by, in one fixed order: the names
/// are the fields' (a checkpoint's state.options.<name>, a flag --<name with dashes>). The output
/// ones that do not define the run (quiet, profile_path, resume_*) are not visited.
template <class Options, class Visit>
void visit_options(Options& o, Visit&& visit) {
  visit("arch", o.arch), visit("task", o.task), visit("data_path", o.data_path), visit("valid_path", o.valid_path);
  visit("test_path", o.test_path), visit("init_path", o.init_path), visit("chat_template", o.chat_template);
  visit("labelled", o.labelled);
  visit("text_path", o.text_path), visit("context", o.context);
  visit("tokenizer", o.tokenizer), visit("vocab_size", o.vocab_size), visit("shared_vocab", o.shared_vocab);
  visit("d_model", o.d_model), visit("layers", o.layers), visit("heads", o.heads), visit("d_ff", o.d_ff);
  visit("dropout", o.dropout), visit("norm", o.norm), visit("activation", o.activation);
  visit("positions", o.positions), visit("tie_embeddings", o.tie_embeddings), visit("max_len", o.max_len);
  visit("batch_size", o.batch_size), visit("max_tokens", o.max_tokens), visit("batching", o.batching);
  visit("pieces", o.pieces), visit("epochs", o.epochs), visit("steps", o.steps);
  visit("batches_per_epoch", o.batches_per_epoch), visit("lr", o.lr), visit("warmup", o.warmup);
  visit("label_smoothing", o.label_smoothing), visit("clip", o.clip), visit("seed", o.seed);
  visit("out_dir", o.out_dir), visit("metrics_path", o.metrics_path), visit("log_every", o.log_every);
  visit("eval_every", o.eval_every), visit("save_every", o.save_every), visit("keep_last", o.keep_last);
  visit("stop_after", o.stop_after), visit("beam", o.beam);
}

/// The options as checkpoint state entries ("options.lr" -> "0.5", ...) with the thread count in
/// use ("options.threads"), and back: the defaults of the checkpoint's architecture (`arch`, its
/// config.arch) and saved task, then every entry the state holds (a checkpoint from before an
/// option existed keeps its default); the model's options (d_model, ..., max_len) are then those of
/// `config`, the checkpoint's config.* entries, where it has them. CheckpointError naming `source`
/// for an entry that does not read back.
std::map<std::string, std::string> options_to_state(const TrainOptions& options);
TrainOptions options_from_state(const std::map<std::string, std::string>& state, const std::string& source,
                                Architecture arch = Architecture::EncoderDecoder,
                                const std::map<std::string, std::string>& config = {});

}  // namespace gradformer
