// Structure-aware fuzzing of checkpoint metadata. Random bytes rarely get past the safetensors
// layer, and byte mutations of a real checkpoint mostly break its JSON; this harness starts from a
// valid small checkpoint built here and lets the input choose edits that keep the file well formed
// but its contents hostile: replace or delete a metadata entry (config.*, vocab.*, format,
// state.*) with a value from a dictionary of edge cases, a 64-bit integer, a power of two or raw
// bytes; regrow a vocabulary; drop a tensor or change its shape or dtype. The edited checkpoint is
// saved and loaded: it must load or be a gradformer::Error, and what loads must round-trip.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include "fuzz/checkpoint_checks.h"
#include "fuzz/fuzz.h"

namespace {

using namespace gradformer;

struct Base {
  StateDict tensors;
  std::map<std::string, std::string> metadata;
};

// d_model 4, d_ff 8, 2 heads, 1 layer, 6-token vocabularies: a few hundred parameters, so a
// load costs microseconds and the fuzzer spends its time on the metadata.
const Base& base() {
  static const Base b = [] {
    TransformerConfig config;
    config.src_vocab = 6, config.tgt_vocab = 6, config.d_model = 4, config.d_ff = 8, config.heads = 2,
    config.layers = 1;
    config.max_len = 16, config.dropout = 0.0;
    EncoderDecoder model(config, 1);
    CheckpointInfo info;
    info.config = config;
    info.source_tokenizer = Vocab::build({{"a", "b"}});
    info.target_tokenizer = Vocab::build({{"x", "y"}});
    info.state = {{"train.step", "3"}, {"options.seed", "7"}, {"options.task", "copy"}};
    StateDict optimizer{{"adam.step", zeros({1}, DType::Int64)}, {"adam.m.0", zeros({6, 4})}};
    const std::string path = fuzz::scratch_path("checkpoint-meta-base");
    save_checkpoint(path, model, optimizer, info);
    SafetensorsFile file = load_safetensors(path);
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
    return Base{std::move(file.tensors), std::move(file.metadata)};
  }();
  return b;
}

const char* const kKeys[] = {"config.src_vocab", "config.tgt_vocab",      "config.d_model",   "config.d_ff",
                             "config.heads",     "config.layers",         "config.dropout",   "config.norm",
                             "config.max_len",   "config.tie_embeddings", "config.dtype",     "format",
                             "vocab.source",     "vocab.target",          "state.train.step", "state.options.seed",
                             "state.",           "config.unknown",        "data.source_eos",  ""};

const char* const kValues[] = {"0",
                               "1",
                               "-1",
                               "2",
                               "3",
                               "4",
                               "6",
                               "7",
                               "8",
                               "16",
                               "64",
                               "4096",
                               "65536",
                               "1000000",
                               "2147483647",
                               "2147483648",
                               "4294967296",
                               "4611686018427387904",
                               "9223372036854775807",
                               "-9223372036854775808",
                               "9223372036854775808",
                               "99999999999999999999",
                               "1e18",
                               "0.5",
                               "0.99999999999999989",
                               "1.0",
                               "nan",
                               "inf",
                               "-inf",
                               "-0",
                               "+4",
                               " 4",
                               "4 ",
                               "04",
                               "0x10",
                               "",
                               "pre",
                               "post",
                               "true",
                               "false",
                               "float32",
                               "float64",
                               "int64",
                               "bool",
                               "gradformer-checkpoint-1",
                               "gradformer-checkpoint-2",
                               "<pad>\n<s>\n</s>\n<unk>\n",
                               "<pad>\n<s>\n</s>\n<unk>\na\nb\n",
                               "<pad>\n<s>\n</s>\n<unk>\na\na\n",
                               "<pad>\n<s>\n</s>\n<unk>\na b\nc\n",
                               "<pad>\n<s>\n</s>\n<unk>\n\n\n"};

std::string value(fuzz::Input& in) {
  switch (in.below(5)) {
    case 0:
      return kValues[in.below(std::size(kValues))];
    case 1:
      return std::to_string(static_cast<int64_t>(in.below(UINT64_MAX)));
    case 2: {  // around a power of two: where products and shifts overflow
      const int64_t p = int64_t{1} << in.below(63);
      return std::to_string(p + static_cast<int64_t>(in.below(3)) - 1);
    }
    case 3: {  // a vocabulary of n tokens, n chosen (so it can match a fuzzed vocabulary size)
      std::string text = "<pad>\n<s>\n</s>\n<unk>\n";
      const uint64_t n = in.below(600);
      // Appended piece by piece: "t" + std::to_string(i) draws a false -Wrestrict from g++ 12 -O2
      // (GCC bug 105329), and the build is warning-clean.
      for (uint64_t i = 0; i < n; ++i) {
        text += 't';
        text += std::to_string(i);
        text += '\n';
      }
      return text;
    }
    default:
      return in.bytes(32);
  }
}

// A tensor of another shape or dtype in place of `t`: one dimension resized, a dimension added
// or removed, or the dtype changed.
Tensor reshaped(const Tensor& t, fuzz::Input& in) {
  std::vector<int64_t> shape(t.shape().begin(), t.shape().end());
  DType dtype = t.dtype();
  switch (in.below(4)) {
    case 0:
      if (!shape.empty()) shape[static_cast<size_t>(in.below(shape.size()))] = static_cast<int64_t>(in.below(9));
      break;
    case 1:
      if (shape.size() < 4) shape.push_back(static_cast<int64_t>(in.below(3)));
      break;
    case 2:
      if (!shape.empty()) shape.pop_back();
      break;
    default: {
      const DType dtypes[] = {DType::Float32, DType::Float64, DType::Int64, DType::Bool};
      dtype = dtypes[in.below(4)];
    }
  }
  return zeros(Shape(std::span<const int64_t>(shape)), dtype);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = [] {
    const std::string p = fuzz::scratch_path("checkpoint-meta");
    fuzz::remove_at_exit(p);
    return p;
  }();
  fuzz::Input in(data, size);
  StateDict tensors = base().tensors;
  std::map<std::string, std::string> metadata = base().metadata;
  // GRADFORMER_FUZZ_VERBOSE=1: print the edits, to turn a reproducer into a regression test.
  static const bool verbose = std::getenv("GRADFORMER_FUZZ_VERBOSE") != nullptr;
  const uint64_t edits = 1 + in.below(4);
  for (uint64_t e = 0; e < edits; ++e) {
    const uint64_t op = in.below(8);
    if (op < 5) {  // most edits replace an entry: that is where the values come in
      // The value's bytes come before the key's: the order C++17 gives metadata[key()] = value(),
      // which the first campaign used; keeping it keeps its reproducers meaning the same edits.
      std::string v = value(in);
      const char* key = kKeys[in.below(std::size(kKeys))];
      metadata[key] = std::move(v);
      if (verbose) std::fprintf(stderr, "edit: metadata \"%s\" = \"%s\"\n", key, metadata[key].c_str());
    } else if (op == 5) {
      const char* key = kKeys[in.below(std::size(kKeys))];
      metadata.erase(key);
      if (verbose) std::fprintf(stderr, "edit: metadata \"%s\" deleted\n", key);
    } else if (!tensors.empty()) {
      auto it = std::next(tensors.begin(), static_cast<std::ptrdiff_t>(in.below(tensors.size())));
      if (verbose)
        std::fprintf(stderr, "edit: tensor \"%s\" %s\n", it->first.c_str(), op == 6 ? "deleted" : "reshaped");
      if (op == 6)
        tensors.erase(it);
      else
        it->second = reshaped(it->second, in);
    }
  }
  bool saved = false;
  fuzz::guarded([&] {  // raw bytes may not be UTF-8, which save_safetensors rightly refuses
    save_safetensors(path, tensors, metadata);
    saved = true;
  });
  if (!saved) return 0;
  LoadedCheckpoint loaded;
  bool ok = false;
  fuzz::guarded([&] {
    loaded = load_checkpoint(path);
    ok = true;
  });
  if (ok) fuzz::check_round_trip(loaded, path);
  return 0;
}
