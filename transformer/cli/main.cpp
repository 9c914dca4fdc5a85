// gradformer: train, use and inspect Transformers from the command line.
//   gradformer train --task copy          the Annotated Transformer's copy task, in seconds
//   gradformer train --task toy-translation
//   gradformer train --data train.tsv --valid valid.tsv
//   gradformer translate --checkpoint runs/toy-translation/model.safetensors < sources.txt
//   gradformer score --checkpoint model.safetensors --data pairs.tsv
//   gradformer gradcheck                   every op's and layer's gradient check, as a table
//   gradformer params --preset base        parameter count and FLOPs per token
//   gradformer generate --checkpoint runs/toy-lm/model.safetensors --prompt 'le chat'
//   gradformer train --arch encoder-only --task mlm     BERT-style pre-training (then --task classify)
//   gradformer classify --checkpoint runs/encoder-only-classify/model.safetensors < sentences.txt
//   gradformer import --weights w.safetensors --heads 8 ... --out m.safetensors   a PyTorch state dict in
//   gradformer average --run runs/toy-translation --last 5 --out average.safetensors
//   gradformer learn-bpe --vocab-size 1000 corpus.txt --out tokenizer.json
//   gradformer tokenize --tokenizer tokenizer.json < text.txt      the ids of a text (--decode: back)
// A mistake on the command line is one line on stderr and exit status 2; any other error
// (a bad file, a bad checkpoint) one line and status 1. Never a stack trace.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <map>
#include <new>
#include <sstream>
#include <string>

#include "tensor/kernels/parallel.h"
#include "tensor/support/memory.h"
#include "tensor/support/utf8.h"
#include "transformer/cli/commands.h"
#include "transformer/cli/flags.h"
#include "transformer/data/data_error.h"

namespace {

constexpr const char* kUsage =
    "usage: gradformer <command> [flags]\n"
    "\n"
    "commands:\n"
    "  train       train a Transformer (--arch encoder-decoder | decoder-only | encoder-only, --task ...)\n"
    "  translate   translate sentences from stdin with a trained checkpoint\n"
    "  score       log-probability of each target given its source under a checkpoint\n"
    "  trace       one sentence through every stage of a trained model, as text and an HTML page\n"
    "  gradcheck   run the gradient check of every op and layer and print a table\n"
    "  params      parameter count and FLOPs per token of a model configuration (--checkpoint: of a checkpoint)\n"
    "  generate    continue a prompt with a decoder-only checkpoint (sampling with temperature, top-k, top-p)\n"
    "  chat        talk with a model fine-tuned on conversations (train --task sft), turn by turn\n"
    "  classify    label sentences from stdin with an encoder-only classifier checkpoint\n"
    "  import      turn an encoder-decoder's weights saved from PyTorch (.safetensors) into a checkpoint;\n"
    "              --gpt2: GPT-2's released weights and tokenizer; --hf: a hub folder of Llama, Qwen2 or Mistral\n"
    "  average     average the parameters of a run's last checkpoints into one checkpoint\n"
    "  merge-lora  fold a LoRA fine-tuning's adapters into the weights beside them (train --lora-rank)\n"
    "  tokenize    the token ids of standard input's text (--pieces: the tokens; --decode: ids back to text)\n"
    "  learn-bpe   learn a byte-pair tokenizer from text files and write it for tokenize --tokenizer\n"
    "\n"
    "gradformer <command> --help describes each command's flags.\n";

// An error is one line on stderr; a message listing several problems (load_state_dict's, one per
// line) is joined with "; ".
std::string one_line(const std::string& text) {
  std::string out;
  for (size_t at = 0; at < text.size(); ++at) {
    if (text[at] != '\n') {
      out += text[at];
      continue;
    }
    if (at + 1 < text.size()) out += !out.empty() && out.back() == ':' ? " " : "; ";
    while (at + 1 < text.size() && text[at + 1] == ' ') ++at;  // the list's indentation
  }
  return out;
}

// What an allocation the system refused leaves to say: how much memory the program held at most, and
// the machine's. (A tensor too large says more itself: its shape and bytes, a MemoryError.)
std::string out_of_memory() {
  struct rusage usage {};
  const long pages = ::sysconf(_SC_PHYS_PAGES), page_size = ::sysconf(_SC_PAGESIZE);
  const double held_mb = ::getrusage(RUSAGE_SELF, &usage) == 0 ? static_cast<double>(usage.ru_maxrss) / 1024 : -1;
  const double machine_mb = pages > 0 && page_size > 0 ? static_cast<double>(pages) * page_size / (1 << 20) : -1;
  std::ostringstream out;
  out << std::fixed << std::setprecision(0) << "out of memory: the system refused an allocation";
  if (held_mb >= 0) out << " with " << held_mb << " MiB resident at most so far";
  if (machine_mb >= 0) out << ", of this machine's " << machine_mb << " MiB";
  out << " (an input or a model too large for it, or a limit on the process's memory)";
  return out.str();
}

}  // namespace

// A standard stream the caller closed (`<&-`) would be taken by the next file the program opens,
// which would then be read as the input or written as the output. Each closed one is held by
// /dev/null opened the wrong way round, so using it fails as a closed stream does (EBADF). In
// order: open() takes the lowest free descriptor, the one just found closed.
static void hold_closed_standard_streams() {
  for (const int fd : {0, 1, 2})
    if (::fcntl(fd, F_GETFD) == -1 && errno == EBADF) (void)::open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
}

int main(int argc, char** argv) {
  using namespace gradformer;
  hold_closed_standard_streams();
  // Training frees and allocates the same tensors every step: keep that memory for the next step
  // instead of faulting in fresh pages each time (tensor/support/memory.h; the environment may say no).
  keep_freed_memory();
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    std::cout << kUsage << std::flush;
    if (!std::cout) {
      std::cerr << "gradformer: error: writing standard output failed: " << std::strerror(errno) << "\n";
      return 1;
    }
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  const std::map<std::string, int (*)(int, char**)> commands = {
      {"train", train_command},         {"translate", translate_command},
      {"score", score_command},         {"gradcheck", gradcheck_command},
      {"params", params_command},       {"trace", trace_command},
      {"generate", generate_command},   {"chat", chat_command},
      {"classify", classify_command},   {"import", import_command},
      {"average", average_command},     {"tokenize", tokenize_command},
      {"learn-bpe", learn_bpe_command}, {"merge-lora", merge_lora_command}};
  const auto found = commands.find(command);
  if (found == commands.end()) {
    std::cerr << "gradformer: unknown command '" << printable(command)
              << "' (see gradformer --help)\n";  // the usage is --help's
    return 2;
  }
  const bool help = asks_for_help(argc, argv);
  try {
    // The environment, checked once for every command before any work (but --help): GRADFORMER_THREADS=abc
    // is refused by each alike, not only by those that happen to start the thread pool.
    if (!help) (void)threads_from_environment();
    const int status = found->second(argc, argv);
    // Output that never arrived is a failure, not a success: flush both ways of writing to
    // stdout (iostreams and printf) and check them, so `gradformer params > /dev/full` exits 1.
    std::cout.flush();
    if (std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout)
      throw DataError(
          message("writing standard output failed: ", errno != 0 ? std::strerror(errno) : "the stream failed"));
    return status;
  } catch (const UsageError& e) {
    std::cerr << "gradformer " << one_line(e.what()) << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "gradformer " << command << ": error: " << out_of_memory() << "\n";
    return 1;
  } catch (const std::exception& e) {
    // printable: an error of the standard library (a path in a filesystem_error) quotes bytes too
    std::cerr << "gradformer " << command << ": error: " << one_line(printable(e.what())) << "\n";
    return 1;
  }
}
