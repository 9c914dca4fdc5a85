// Checks exercises::gpt2_block (tutorials/exercises/19_gpt2_block.cpp, or the reference solution):
// a small GPT-2-shaped model of the library, every parameter drawn at random (so a gain taken for a
// bias, or a weight left untransposed, shows), is written out in GPT-2's names and layout (the
// importer's name table, gpt2_names); each block read back by gpt2_block must be the model's own
// tensors, name for name and value for value; and a second model loaded from them computes the
// same logits. Prints what it found; exits 1 if a check fails or the file is still the stub.
#include <cstdio>
#include <string>

#include "exercises.h"
#include "transformer/model/decoder_only.h"
#include "transformer/model/masks.h"
#include "transformer/store/import_gpt2.h"

using namespace gradformer;

namespace {

TransformerConfig small_gpt2() {
  TransformerConfig c = gpt2_small_config();
  c.src_vocab = c.tgt_vocab = 20;
  c.max_len = 8, c.d_model = 16, c.heads = 2, c.layers = 2, c.d_ff = 64, c.dropout = 0;
  return c;
}

// GPT-2's file of the model, by the importer's name table: Conv1D weights are the Linear weights
// transposed.
StateDict as_gpt2_file(const DecoderOnly& model) {
  const TransformerConfig& c = model.config();
  const StateDict mine = model.state_dict();
  StateDict file;
  for (const Gpt2Name& name : gpt2_names({c.tgt_vocab, c.d_model, c.max_len, c.layers, c.d_ff}))
    file[name.gpt2] = name.conv1d ? mine.at(name.gradformer).transpose(0, 1).contiguous() : mine.at(name.gradformer);
  return file;
}

int checks() {
  int failed = 0;
  DecoderOnly model(small_gpt2(), /*seed=*/1);
  Generator gen(4);
  for (const auto& [name, p] : model.named_parameters()) normal_(p, 0.0, 0.5, gen);  // no two tensors alike
  const StateDict file = as_gpt2_file(model), mine = model.state_dict();

  StateDict loaded = mine;  // the embeddings and ln_f as they are; the blocks from gpt2_block
  for (const auto& [name, t] : loaded)
    if (name.rfind("decoder.layers.", 0) == 0) loaded[name] = Tensor();
  for (int64_t i = 0; i < model.config().layers; ++i) {
    const StateDict block = exercises::gpt2_block(file, i);
    const std::string prefix = "decoder.layers." + std::to_string(i) + ".";
    int expected_names = 0, right = 0;
    for (const auto& [name, t] : mine) {
      if (name.rfind(prefix, 0) != 0) continue;
      ++expected_names;
      const auto it = block.find(name);
      if (it == block.end()) {
        std::printf("block %lld: %s is missing\n", static_cast<long long>(i), name.c_str());
        continue;
      }
      const double difference = exercises::max_difference(it->second, t);
      if (difference == 0 && it->second.is_contiguous()) {
        ++right;
      } else {
        std::printf("block %lld: %s is %s, expected %s (largest difference %g%s)\n", static_cast<long long>(i),
                    name.c_str(), message(it->second.shape()).c_str(), message(t.shape()).c_str(), difference,
                    it->second.is_contiguous() ? "" : "; not contiguous");
      }
      loaded[name] = it->second;
    }
    const bool ok = right == expected_names && static_cast<int>(block.size()) == expected_names;
    std::printf("block %lld: %d of %d tensors right, %zu returned: %s\n", static_cast<long long>(i), right,
                expected_names, block.size(), ok ? "yes" : "NO");
    if (!ok) ++failed;
  }
  if (failed == 0) {
    DecoderOnly copy(small_gpt2(), /*seed=*/2, skip_init);
    copy.load_state_dict(loaded);
    const Tensor ids = from_vector(std::vector<int64_t>{3, 1, 4, 1, 5, 9, 2, 6}, {1, 8});
    const Tensor mask = causal_mask(8).unsqueeze(0);
    NoGradGuard no_grad;
    const double difference =
        exercises::max_difference(copy.forward(ids, mask).value(), model.forward(ids, mask).value());
    const bool same = difference == 0;
    std::printf("the model loaded from your blocks computes the same logits: %s\n", same ? "yes" : "NO");
    if (!same) ++failed;
  }
  std::printf(failed == 0 ? "gpt2 block: all checks pass\n" : "gpt2 block: %d check(s) FAILED\n", failed);
  return failed;
}

}  // namespace

int main() { return exercises::run_checks("19_gpt2_block.cpp", 18, checks); }
