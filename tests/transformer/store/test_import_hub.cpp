// import_hub: small random models in the hub's layout (a Llama with grouped-query attention and
// llama3 rotary scaling, untied; a Qwen2 with q, k, v biases and one key/value head, tied; a Llama
// whose head width is not d / H), imported and compared, logit by logit, with llama_reference.h's
// float64 model written from the published equations over the hub's own tensors.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "hub_folder_files.h"
#include "llama_reference.h"
#include "tensor/all.h"
#include "tiny_hub_model.h"
#include "transformer/model/masks.h"
#include "transformer/model/sampling.h"
#include "transformer/store/import_hub.h"

namespace {

using namespace gradformer;

using hub_test::Case;
using hub_test::config_text;
using hub_test::random_state;
constexpr int64_t kVocab = 13;  // the 4 specials and 9 words of the test's tokenizer

Tokenizer nine_words() {
  return Tokenizer(Vocab::build({{"a", "b", "c", "d", "e", "f", "g", "h", "i"}}));  // 4 specials + 9 = 13
}

const Case kCases[] = {
    // grouped-query attention (4 heads, 2 key/value heads), llama3 scaling over an original length of
    // 16 (so the 4 frequencies of hd 8 fall in all three bands), untied
    {"llama, grouped-query, llama3 scaling, untied",
     "llama",
     {.d = 16,
      .heads = 4,
      .kv_heads = 2,
      .head_dim = 4,
      .ff = 24,
      .layers = 2,
      .eps = 1e-5,
      .theta = 500000,
      .scale_factor = 8,
      .low = 1,
      .high = 4,
      .original = 16}},
    {"qwen2, q/k/v biases, multi-query, tied",
     "qwen2",
     {.d = 16,
      .heads = 4,
      .kv_heads = 1,
      .head_dim = 4,
      .ff = 20,
      .layers = 2,
      .eps = 1e-6,
      .theta = 1000000,
      .tied = true},
     true},
    {"llama, head width 8 with d 16 and 4 heads (H hd = 32 != d)",
     "llama",
     {.d = 16, .heads = 4, .kv_heads = 4, .head_dim = 8, .ff = 24, .layers = 3, .eps = 1e-5, .theta = 10000}},
};

}  // namespace

TEST_CASE("import_hub: each model's logits are the float64 reference's, from the hub's own tensors, to 1e-5") {
  for (const Case& c : kCases) {
    SECTION(c.name) {
      const test::TempDir dir("import-hub");
      const StateDict state = random_state(c, kVocab, 7);
      hub_test::write_single_file_folder(dir, state, config_text(c, kVocab));
      const HubImport imported =
          import_hub(read_hub_config(dir / "config.json"), open_hub_tensors(dir.path().string()), nine_words());
      const std::vector<int64_t> ids = {1, 5, 9, 12, 4, 7, 7, 2, 11, 6, 3, 8};
      const Tensor logits = imported.model
                                ->forward(from_vector(ids, {1, static_cast<int64_t>(ids.size())}),
                                          causal_mask(static_cast<int64_t>(ids.size())).unsqueeze(0))
                                .value();
      const llama_reference::Matrix expected = llama_reference::logits(state, ids, c.sizes);
      double worst = 0;
      for (size_t t = 0; t < ids.size(); ++t)
        for (int64_t v = 0; v < kVocab; ++v)
          worst = std::max(worst, std::abs(logits.at({0, static_cast<int64_t>(t), v}) - expected[t][v]));
      INFO("largest difference " << worst);
      CHECK(worst < 1e-5);
    }
  }
}

TEST_CASE("import_hub: config.json's eos_token_id is kept as data.end_of_text, and generation stops at it") {
  const test::TempDir dir("import-hub-eos");
  const Case& c = kCases[0];
  hub_test::write_single_file_folder(dir, random_state(c, kVocab, 3), config_text(c, kVocab, /*eos=*/11));
  const HubImport imported =
      import_hub(read_hub_config(dir / "config.json"), open_hub_tensors(dir.path().string()), nine_words());
  CHECK(imported.info.end_of_text == std::vector<int64_t>{11});
  save_checkpoint(dir / "model.gf.safetensors", *imported.model, imported.info.config, {}, imported.info);
  const CheckpointFile file = read_checkpoint_file(dir / "model.gf.safetensors");
  CHECK(file.metadata.at("data.end_of_text") == "11");
  const CheckpointInfo info = read_checkpoint(file).info;
  CHECK(info.end_of_text == std::vector<int64_t>{11});
  CHECK(info.config.block == imported.info.config.block);
  CHECK(info.config.positions == Positions::Rotary);
  CHECK(info.config.activation == Activation::SwiGLU);

  // Every id but 11 forbidden: the first token drawn is 11, which ends the generation when it is an
  // end id (also_stop), and does not when no end is set.
  SamplingOptions o;
  o.max_tokens = 5, o.temperature = 0, o.eos = -1;
  for (int64_t id = 0; id < kVocab; ++id)
    if (id != 11) o.never.push_back(id);
  Generator gen(1);
  CHECK(generate(*imported.model, {1, 5}, o, gen) == std::vector<int64_t>(5, 11));
  o.also_stop = {11};
  CHECK(generate(*imported.model, {1, 5}, o, gen) == std::vector<int64_t>{11});
}

TEST_CASE(
    "import_hub: a tokenizer with fewer ids than the embedding's rows (the hub's padding) is kept; more ids than rows "
    "are refused") {
  const test::TempDir dir("import-hub-padded");
  const Case& c = kCases[1];
  constexpr int64_t rows = 20;  // the tokenizer below has 16 ids
  hub_test::write_single_file_folder(dir, random_state(c, rows, 5), config_text(c, rows));
  const Tokenizer tokenizer = Tokenizer::read_hub_file(std::string(GRADFORMER_SOURCE_DIR) +
                                                       "/tests/transformer/cli/hub_tokenizer/tokenizer.json");
  REQUIRE(tokenizer.size() == 16);
  const HubImport imported =
      import_hub(read_hub_config(dir / "config.json"), open_hub_tensors(dir.path().string()), tokenizer);
  CHECK(imported.info.config.tgt_vocab == rows);
  save_checkpoint(dir / "padded.safetensors", *imported.model, imported.info.config, {}, imported.info);
  CHECK(read_checkpoint(dir / "padded.safetensors").info.target_tokenizer.size() == 16);
  // More ids than rows cannot be: the model could not score them.
  const test::TempDir small("import-hub-small");
  hub_test::write_single_file_folder(small, random_state(c, 12, 5), config_text(c, 12));
  CHECK_THROWS_MSG(
      import_hub(read_hub_config(small / "config.json"), open_hub_tensors(small.path().string()), tokenizer),
      CheckpointError, "the tokenizer has 16 ids, more than the model's vocabulary of 12");
}
