// gradformer train: one command for the three architectures. Every option of a run (options.h,
// visit_options) is a flag of the same name with dashes, with the defaults of the architecture and
// task given; --resume continues a saved run exactly.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <thread>

#include "transformer/cli/commands.h"
#include "transformer/cli/flags.h"
#include "transformer/cli/train_output.h"
#include "transformer/train/run_directory.h"
#include "transformer/train/trainer.h"

namespace gradformer {
namespace {

// A flag's value before the flags are declared ("" if absent).
std::string early_value(int argc, char** argv, const std::string& flag) {
  for (int i = 2; i < argc; ++i) {
    if (argv[i] == flag && i + 1 < argc) return argv[i + 1];
    if (!std::strncmp(argv[i], (flag + "=").c_str(), flag.size() + 1)) return argv[i] + flag.size() + 1;
  }
  return "";
}

// The architecture and the task decide the defaults the help shows, so find them before declaring the flags.
Architecture arch_in(int argc, char** argv) {
  const std::string arch = early_value(argc, argv, "--arch");
  try {
    return arch.empty() ? Architecture::EncoderDecoder : parse_architecture(arch);
  } catch (const ValueError&) {
    throw UsageError(message("train: --arch must be encoder-decoder, decoder-only or encoder-only, got '", arch, "'"));
  }
}

std::string task_in(int argc, char** argv, Architecture arch) {
  const std::string task = early_value(argc, argv, "--task");
  if (!task.empty()) return task;
  for (int i = 2; i < argc; ++i)
    if (arch == Architecture::DecoderOnly && (!std::strcmp(argv[i], "--text") || !std::strncmp(argv[i], "--text=", 7)))
      return "text";
  for (int i = 2; i < argc; ++i)
    if (!std::strcmp(argv[i], "--data") || !std::strncmp(argv[i], "--data=", 7)) return data_task(arch);
  return architecture_tasks(arch).front();
}

std::string joined(const std::vector<std::string>& words, const char* separator) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : separator) + w;
  return out;
}

// The flag that sets an option: its name with dashes, but for the paths and the output directory.
std::string flag_of(const std::string& option) {
  static const std::map<std::string, std::string> renamed = {
      {"data_path", "--data"}, {"valid_path", "--valid"},       {"test_path", "--test"},
      {"init_path", "--init"}, {"chat_template", "--template"}, {"text_path", "--text"},
      {"out_dir", "--out"},    {"metrics_path", "--metrics"},   {"profile_path", "--profile"}};
  if (const auto it = renamed.find(option); it != renamed.end()) return it->second;
  std::string flag = "--" + option;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

// The help lines of the flags of tokenizers and of the text task.
const std::map<std::string, std::string>& text_help() {
  static const std::map<std::string, std::string> help = {
      {"text_path",
       "decoder-only text: a language model of this file, any text (with --tokenizer bpe, UTF-8), read as one stream "
       "of tokens; its last 10% of bytes held out for validation (bits per byte)"},
      {"context",
       "decoder-only text: tokens per training block, at most --max-len (either follows the other when only one is "
       "given)"},
      {"tokenizer",
       "how text becomes tokens, learned from the training data: words (whitespace words; an unseen word is <unk>), "
       "bytes (the 256 bytes) or bpe (byte-level byte-pair encoding: frequent pieces, an unseen word is spelled from "
       "seen ones; UTF-8); encoder-decoder translation takes all three, decoder-only text bytes or bpe"},
      {"vocab_size", "bpe: the vocabulary's size, specials included (0: " + std::to_string(kDefaultBpeVocab) + ")"},
      {"shared_vocab",
       "encoder-decoder translation: one vocabulary learned on the sources and targets together (yes: the paper's, "
       "what --tie-embeddings needs) or one per side (no); its default follows --tokenizer: yes for bpe and bytes, no "
       "for words"}};
  return help;
}

// The help lines of the flags of the data and of the model a run starts from.
const std::map<std::string, std::string>& data_help() {
  static const std::map<std::string, std::string> help = {
      {"data_path",
       "your training data: pairs source<TAB>target (encoder-decoder, decoder-only corpus), sentences one per line "
       "(decoder-only lm, encoder-only mlm) or label<TAB>sentence (encoder-only classify), whitespace tokens; or "
       "conversations (decoder-only sft: JSON Lines of {\"messages\": [{\"role\", \"content\"}, ...]} or "
       "{\"instruction\", \"input\", \"output\"}, or one JSON array of them)"},
      {"valid_path", "validation data (same format)"},
      {"test_path", "test data (same format), scored at the end"},
      {"init_path",
       "encoder-only classify: start from this pre-trained encoder-only checkpoint; decoder-only sft: the "
       "decoder-only model to fine-tune (required)"},
      {"chat_template",
       "decoder-only sft: how conversations are written, chatml (<|im_start|>role\\n...<|im_end|>) or llama3 "
       "(<|start_header_id|>role<|end_header_id|>...<|eot_id|>); default: the one the model's tokenizer holds the "
       "tokens of, else chatml (its tokens then added, the embedding grown by their rows)"},
      {"labelled",
       "encoder-only classify on the toy corpus: labelled training sentences (the first of its train split)"},
  };
  return help;
}

// The help line of each option's flag.
std::string help_of(const std::string& option) {
  if (const auto it = text_help().find(option); it != text_help().end()) return it->second;
  if (const auto it = data_help().find(option); it != data_help().end()) return it->second;
  static const std::map<std::string, std::string> help = {
      {"arch", "encoder-decoder (tasks " + joined(architecture_tasks(Architecture::EncoderDecoder), ", ") +
                   "), decoder-only (tasks " + joined(architecture_tasks(Architecture::DecoderOnly), ", ") +
                   "), encoder-only (tasks " + joined(architecture_tasks(Architecture::EncoderOnly), ", ") + ")"},
      {"d_model", "model width"},
      {"d_ff", "feed-forward width (4 x d-model when only --d-model is given)"},
      {"heads", "attention heads (h)"},
      {"layers", "layers of each stack (N)"},
      {"dropout", "dropout probability"},
      {"norm", "post (the paper's LayerNorm(x + Sublayer(x))) or pre"},
      {"tie_embeddings", "share the embedding and the output projection: true or false"},
      {"max_len", "longest sequence, in tokens, the model takes"},
      {"activation",
       "feed-forward nonlinearity: relu (the paper), gelu (GPT, BERT), gelu-tanh (GPT-2's approximation) or swiglu "
       "(Llama's gated network down(silu(gate(x)) * up(x)): three d x d-ff matrices where the others have two, so "
       "d-ff 2/3 as wide holds as many parameters)"},
      {"positions",
       "sinusoidal (the paper), learned (GPT-2, BERT: a trained [max-len, d] matrix) or rope (Llama: each "
       "self-attention turns its queries and keys by their positions; nothing added to the embedding)"},
      {"batch_size", "sentences per batch"},
      {"max_tokens", "encoder-decoder corpus: padded tokens per batch (0: no budget)"},
      {"batching",
       "encoder-decoder corpus: random (each batch a random sample of the sentences) or length (sentences of similar "
       "length share a batch: least padding, but where length tells what a sentence is, e.g. one kind of sentence is "
       "short, it learns far less per epoch; chapter 12)"},
      {"pieces",
       "encoder-decoder corpus: pad each batch as this many length-sorted pieces, whose gradients add up to the "
       "batch's (same learning, less padding; 1: one padded rectangle)"},
      {"epochs", "epochs"},
      {"steps", "steps to train, instead of --epochs (0: epochs x batches per epoch)"},
      {"batches_per_epoch", "tasks of fresh batches (copy, toy-lm): batches per epoch"},
      {"lr", "factor in front of the paper's schedule d^-0.5 min(step^-0.5, step warmup^-1.5)"},
      {"warmup", "warmup steps"},
      {"label_smoothing", "label smoothing epsilon"},
      {"clip", "clip gradients to this global norm (0: off)"},
      {"seed", "seed of the initialisation, the data order, masking and dropout"},
      {"out_dir",
       "output directory (default runs/<task>, with --data runs/<the data file's name without its extension>; with "
       "--resume, the checkpoint's folder)"},
      {"metrics_path", "also write the run's settings and one JSON object per logging step to this file"},
      {"log_every", "steps between progress reports"},
      {"eval_every", "steps between validation losses (0: at the end only)"},
      {"save_every", "steps between checkpoints (0: at the end only)"},
      {"keep_last",
       "also keep the last this many checkpoints as OUT/model-step-N.safetensors, for gradformer average (0: none)"},
      {"stop_after", "stop after this step, as if interrupted (then --resume)"},
      {"beam", "encoder-decoder: beam size of the final translation evaluation (1: greedy)"}};
  return help.at(option);
}

// A flag's default as the help shows it: numbers as typed, paths and the output folder unset.
template <class T>
std::string default_text(const std::string& option, const T& value) {
  if constexpr (std::is_same_v<T, bool>)
    if (option == "shared_vocab") return value ? "yes" : "no";
  if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
    return message(value);
  else
    return option == "out_dir" ? "" : option_text(value);
}

// The block's settings (not run options: the model's configuration keeps them) and --block.
void declare_block_flags(Flags& f) {
  f.add("--block", "",
        "a block by name, each of its settings unless given by its own flag: llama (--norm pre --normalization "
        "rmsnorm --positions rope --activation swiglu --bias false)");
  f.add("--normalization", "layernorm",
        "what each sub-layer is normalised by: layernorm (the paper) or rmsnorm (Llama: x / sqrt(mean(x^2) + eps) * g, "
        "no mean, no bias)");
  f.add("--kv-heads", "0",
        "key/value heads (grouped-query attention: each serves heads / kv-heads query heads; 1 is multi-query "
        "attention; 0: as many as --heads, multi-head attention); must divide --heads");
  f.add("--head-dim", "0", "each head's width d_k (0: d-model / heads)");
  f.add("--bias", "true",
        "which projections have biases: true (all, the paper), false (none, Llama), attention (q, k, v and the "
        "output) or qkv (Qwen2)");
  f.add("--rope-theta", "10000", "rope: the base of the rotation's frequencies, pair i turning by theta^(-2i/d_k)");
  f.add("--lora-rank", "0",
        "decoder-only sft: train low-rank adapters of this rank beside the --lora-targets, W + (alpha / rank) B A "
        "with A random and B zero, every other weight frozen (0: fine-tune every weight)");
  f.add("--lora-alpha", "", "decoder-only sft: the adapters' alpha (the update scaled by alpha / rank; default: rank)");
  f.add("--lora-targets", "q,k,v,o",
        "decoder-only sft: the projections given adapters, a comma-separated list of q, k, v, o (the attention's "
        "W^Q, W^K, W^V, W^O) and ffn (the feed-forward network's matrices); embed also trains the embedding in full "
        "(added when the template's tokens are: their rows must learn)");
}

// --lora-rank, --lora-alpha (default: the rank) and --lora-targets.
void read_lora_flags(const Flags& f, LoraOptions& lora) {
  if (!f.given("--lora-rank") && !f.given("--lora-alpha") && !f.given("--lora-targets")) return;
  lora.rank = f.integer("--lora-rank");
  if (lora.rank < 1)
    throw UsageError(
        message("train: --lora-rank must be at least 1 (leave it out to fine-tune every weight), got ", lora.rank));
  lora.alpha = f.given("--lora-alpha") ? f.number("--lora-alpha") : static_cast<double>(lora.rank);
  try {
    lora = parse_lora_targets(f.text("--lora-targets"), lora);
  } catch (const ValueError& e) {
    throw UsageError(message("train: --lora-targets: ", e.what()));
  }
}

// --block's settings, then the block flags given, over `o`'s.
void read_block_flags(const Flags& f, TrainOptions& o) {
  if (f.given("--block") && f.choice("--block", {"llama"}) == "llama") {
    if (!f.given("--norm")) o.norm = NormPlacement::Pre;
    if (!f.given("--positions")) o.positions = Positions::Rotary;
    if (!f.given("--activation")) o.activation = Activation::SwiGLU;
    o.block.normalization = Normalization::RMSNorm, o.block.bias = Bias::None;
  }
  if (f.given("--normalization"))
    o.block.normalization = f.choice("--normalization", {"layernorm", "rmsnorm"}) == "rmsnorm"
                                ? Normalization::RMSNorm
                                : Normalization::LayerNorm;
  if (f.given("--kv-heads")) o.block.kv_heads = f.integer("--kv-heads");
  if (f.given("--head-dim")) o.block.head_dim = f.integer("--head-dim");
  if (f.given("--bias")) {
    const std::string name = f.choice("--bias", {"true", "false", "attention", "qkv"});
    for (Bias b : {Bias::All, Bias::None, Bias::Attention, Bias::QKV})
      if (name == bias_name(b)) o.block.bias = b;
  }
  if (f.given("--rope-theta")) o.block.rope_theta = f.number("--rope-theta");
  read_lora_flags(f, o.block.lora);
}

// Every flag of a run, with the defaults `d` of one task.
void declare_train_flags(Flags& f, const TrainOptions& d) {
  visit_options(d, [&](const char* option, const auto& value) {
    const std::string help = option == std::string("task")
                                 ? joined(architecture_tasks(d.arch), ", ") + " (or give --data for your own data)"
                                 : help_of(option);
    f.add(flag_of(option), default_text(option, value), help);
  });
  declare_block_flags(f);
  f.add("--threads", "0", "threads (0: GRADFORMER_THREADS or all cores)");
  f.add_switch("--force",
               "replace the run already in the output directory (only the files gradformer wrote there), and an "
               "existing --metrics or --profile file");
  declare_profile_flag(f);
  f.add("--resume", "",
        "continue the run saved in this checkpoint (then only --epochs or --steps, --out, --force, --metrics, "
        "--log-every, --stop-after, --keep-last, --threads, --quiet, --profile, and the run's own --text, --data, "
        "--valid, --test: read from where the run found them, from any folder, and refused if their bytes changed, "
        "unless named again)");
  f.add_switch("--quiet", "print no progress, only the results");
}

// Each task's defaults where they differ, from the table train() uses (default_train_options).
std::string task_defaults(Architecture arch) {
  std::vector<std::pair<std::string, Flags>> columns;
  for (const std::string& task : architecture_tasks(arch)) {
    Flags column("train", "");
    declare_train_flags(column, default_train_options(task, arch));
    columns.emplace_back(task, column);
  }
  return message("\nthe defaults of each ", architecture_name(arch), " task, where they differ:\n",
                 defaults_table(columns, {"--task", "--out"}));
}

// An option's value from its flag, as the flag's type reads it.
void read_flag(const Flags& f, const std::string& flag, std::string& value) { value = f.text(flag); }
void read_flag(const Flags& f, const std::string& flag, int64_t& value) { value = f.integer(flag); }
void read_flag(const Flags& f, const std::string& flag, uint64_t& value) {
  value = static_cast<uint64_t>(f.integer_in(flag, 0));  // -1 must not become 2^64 - 1
}
void read_flag(const Flags& f, const std::string& flag, double& value) { value = f.number(flag); }
void read_flag(const Flags& f, const std::string& flag, bool& value) {
  value = f.choice(flag, {"true", "false"}) == "true";
}
void read_flag(const Flags& f, const std::string& flag, Architecture& value) {
  value = parse_architecture(f.choice(flag, {"encoder-decoder", "decoder-only", "encoder-only"}));
}
void read_flag(const Flags& f, const std::string& flag, Batching& value) {
  value = parse_batching(f.choice(flag, {"random", "length"}));
}
void read_flag(const Flags& f, const std::string& flag, NormPlacement& value) {
  value = f.choice(flag, {"post", "pre"}) == "pre" ? NormPlacement::Pre : NormPlacement::Post;
}
void read_flag(const Flags& f, const std::string& flag, Activation& value) {
  const std::string name = f.choice(flag, {"relu", "gelu", "gelu-tanh", "swiglu"});
  for (Activation a : {Activation::ReLU, Activation::GELU, Activation::GELUTanh, Activation::SwiGLU})
    if (name == activation_name(a)) value = a;
}
void read_flag(const Flags& f, const std::string& flag, Positions& value) {
  const std::string name = f.choice(flag, {"sinusoidal", "learned", "rope"});
  for (Positions p : {Positions::Sinusoidal, Positions::Learned, Positions::Rotary})
    if (name == positions_name(p)) value = p;
}

// A resumed run continues as it began: only these flags may differ from the original run's; any
// other is refused rather than silently ignored.
void check_resume_flags(const Flags& f) {
  const std::vector<std::string> allowed = {
      "--resume",    "--epochs",  "--steps", "--out",     "--force", "--metrics", "--log-every", "--stop-after",
      "--keep-last", "--threads", "--quiet", "--profile", "--text",  "--data",    "--valid",     "--test"};
  for (const std::string& flag : f.given_names())
    if (std::find(allowed.begin(), allowed.end(), flag) == allowed.end())
      throw UsageError(message("train: ", flag,
                               " cannot change when resuming (the run goes on with its checkpoint's); with --resume "
                               "only ",
                               joined({allowed.begin() + 1, allowed.end()}, ", ")));
}

// The options the flags give, over the defaults `d` of the task.
TrainOptions options_of(const Flags& f, const TrainOptions& d, const std::string& resume) {
  TrainOptions o = d;
  visit_options(o, [&](const char* option, auto& value) {
    if (!f.given(flag_of(option))) return;
    if constexpr (std::is_same_v<decltype(value), bool&>)
      if (option == std::string("shared_vocab")) {
        value = f.choice("--shared-vocab", {"yes", "no"}) == "yes";
        return;
      }
    read_flag(f, flag_of(option), value);
  });
  o.task = f.choice("--task", architecture_tasks(d.arch));
  read_block_flags(f, o);
  // 4 x d_model only for a d_model in range: 4 x 2^62 would overflow before the check names --d-model.
  const bool sane_width = o.d_model > 0 && o.d_model <= TransformerConfig::max_d_model;
  if (!f.given("--d-ff")) o.d_ff = !sane_width ? 1 : o.d_model == d.d_model ? d.d_ff : 4 * o.d_model;
  if (f.given("--epochs") && f.given("--steps"))
    throw UsageError("train: give --epochs or --steps, not both (--steps counts the run's steps, whatever the epochs)");
  if (f.given("--epochs")) o.steps = 0;
  // A text model's blocks and its positions go together: one given, the other follows it.
  if (f.given("--context") && !f.given("--max-len")) o.max_len = o.context;
  if (f.given("--max-len") && !f.given("--context") && o.task == "text") o.context = o.max_len;
  // Resumed, the run writes where its checkpoint is, whatever its task, unless told otherwise.
  const std::string resume_dir = std::filesystem::path(resume).parent_path().string();
  o.out_dir = f.has("--out")    ? f.text("--out")
              : !resume.empty() ? (resume_dir.empty() ? "." : resume_dir)
              : f.has("--data") ? run_directory_for_data(o.data_path)
              : f.has("--text") ? run_directory_for_data(o.text_path)
                                : default_train_options(o.task, o.arch).out_dir;
  if (!resume.empty()) {
    if (f.given("--epochs")) o.resume_epochs = o.epochs;
    if (f.given("--steps")) o.resume_steps = o.steps;
    if (f.given("--keep-last")) o.resume_keep_last = o.keep_last;
    for (const auto& [flag, value] : {std::pair{"--epochs", o.resume_epochs}, {"--steps", o.resume_steps}})
      if (f.given(flag) && value < 1) throw UsageError(message("train: ", flag, " must be at least 1, got ", value));
  }
  o.quiet = f.on("--quiet");
  o.profile_path = profile_path(f, o.out_dir);
  return o;
}

constexpr const char* kFirstUseDir = "runs/trace-model";

// The first-use model: the toy-translation task's recipe at a quarter of its width, small enough
// to train in seconds on two cores and still translate the toy corpus's sentences right.
TrainOptions first_use_options(int64_t steps) {
  TrainOptions o = default_train_options("toy-translation", Architecture::EncoderDecoder);
  o.d_model = 64, o.d_ff = 256, o.layers = 2, o.epochs = 8;  // 1256 steps; test BLEU 99.5
  o.out_dir = kFirstUseDir, o.quiet = true;
  if (steps > 0) o.steps = steps;
  return o;
}

}  // namespace

std::string first_use_model_path() { return run_checkpoint_path(kFirstUseDir); }

// Trains the first-use model unless it is there; a second trace started meanwhile waits for the
// first one's run (the run folder's lock) and then reads what it saved.
std::string first_use_model(int64_t steps, const std::string& instead_of) {
  const std::string path = run_checkpoint_path(kFirstUseDir);
  for (bool said_waiting = false;;) {
    if (std::filesystem::exists(path)) return path;  // saved whole or not at all (renamed into place)
    try {
      refuse_busy_folder(kFirstUseDir);  // another trace training it: wait below, rather than say "training"
      std::cerr << "gradformer trace: no --checkpoint and no " << instead_of
                << ": training a small toy-translation model into " << kFirstUseDir
                << " (once; later traces reuse it)\n";
      const TrainReport report = train(first_use_options(steps));
      std::cerr << "gradformer trace: trained " << counted(report.steps, "step") << " in "
                << static_cast<int64_t>(report.train_seconds + 0.5) << " s; saved " << path << "\n";
      return path;
    } catch (const RunFolderBusy&) {
      if (!said_waiting)
        std::cerr << "gradformer trace: another gradformer started training the model in " << kFirstUseDir
                  << " first; waiting for it to finish\n";
      said_waiting = true;
      for (;;) {
        try {
          refuse_busy_folder(kFirstUseDir);
          break;
        } catch (const RunFolderBusy&) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
      }
    }
  }
}

int train_command(int argc, char** argv) {
  const Architecture arch = arch_in(argc, argv);
  const std::string task = task_in(argc, argv, arch);
  const std::vector<std::string> tasks = architecture_tasks(arch);
  const bool known = std::find(tasks.begin(), tasks.end(), task) != tasks.end();
  TrainOptions d = default_train_options(known ? task : tasks.front(), arch);
  // A learned tokenizer's default is one vocabulary for both sides (the paper's); words keep one per side.
  const std::string tokenizer = early_value(argc, argv, "--tokenizer");
  if (arch == Architecture::EncoderDecoder && d.task != "copy" && (tokenizer == "bpe" || tokenizer == "bytes"))
    d.shared_vocab = true;
  Flags f("train",
          "Train a Transformer and evaluate it: an encoder-decoder, a decoder-only language model or an encoder-only\n"
          "model, on a built-in task or on your own data (--data). Writes OUT/model.safetensors (every --save-every\n"
          "steps and at the end), OUT/loss.svg and (encoder-decoder) OUT/attention/*.svg, then prints the command\n"
          "that uses the model. Defaults shown are those of the architecture and task given (--arch, --task or\n"
          "--data); the table at the end gives each task's.");
  declare_train_flags(f, d);
  if (!f.parse(argc, argv)) {
    std::cout << f.help() << task_defaults(arch);
    return 0;
  }
  const std::string resume = f.text("--resume");
  if (!resume.empty()) check_resume_flags(f);
  TrainOptions o = options_of(f, d, resume);
  const std::vector<std::string> inputs = {o.data_path, o.valid_path, o.test_path, o.text_path, o.init_path, resume};
  refuse_output_over_input("train", "--metrics", o.metrics_path, inputs, "one of the run's inputs", "the metrics");
  refuse_output_over_input("train", "--profile", o.profile_path, inputs, "one of the run's inputs", "the profile");
  refuse_to_replace_run(o.out_dir, resume, f.on("--force"));
  // A file the user has is replaced only when told to; a resumed run appends to its metrics. (The
  // metrics file is written as the run goes, so it may be a device or a pipe; the profile is written
  // whole at the end, renamed into place, so it must be a regular file or nothing.)
  std::error_code error;
  if (resume.empty() && !o.metrics_path.empty() && std::filesystem::is_regular_file(o.metrics_path, error) &&
      !f.on("--force"))
    throw UsageError(message("train: --metrics ", o.metrics_path,
                             " exists; give --force to replace it (a resumed run appends to its metrics)"));
  if (!o.profile_path.empty()) check_output_flag("train", "--profile", o.profile_path, f.on("--force"));
  apply_threads(f);
  TrainReport report;
  try {
    report = train(o, resume);
  } catch (const TrainOptionError& e) {
    // A value from the command line is a usage error, named as the user typed it. When resuming,
    // only the output options come from the command line; the others are the checkpoint's.
    // The input files are named by flag either way: the resumer gave one, or may give one.
    const std::vector<std::string> resumer_fields = {"log_every", "stop_after",   "epochs",    "steps",
                                                     "keep_last", "metrics_path", "data_path", "valid_path",
                                                     "test_path", "text_path"};
    const bool from_flags =
        resume.empty() || std::find(resumer_fields.begin(), resumer_fields.end(), e.field()) != resumer_fields.end();
    if (!from_flags) throw;
    throw UsageError(message("train: ", flag_of(e.field()), " ", e.requirement()));
  }
  print_trained(report, o.quiet);
  return 0;
}

}  // namespace gradformer
