// Fuzzes the reader of a hub model's config.json (transformer/store/hub_folder.h: parse_hub_config),
// which reads a file downloaded from anywhere. Arbitrary bytes must give a configuration or a
// gradformer::Error; a configuration it gives must hold what its readers rely on: every size
// positive, the key/value heads dividing the heads, an even head_dim, and a list of tensors
// (hub_tensor_specs) that can be built without overflow.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz.h"
#include "transformer/store/hub_folder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gradformer;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  HubConfig c;
  bool parsed = false;
  fuzz::guarded([&] {
    c = parse_hub_config(text, "config.json");
    parsed = true;
  });
  if (!parsed || c.model_type == HubModelType::Gpt2) return 0;
  for (int64_t n : {c.vocab_size, c.hidden_size, c.intermediate_size, c.num_hidden_layers, c.num_attention_heads,
                    c.num_key_value_heads, c.head_dim, c.max_position_embeddings})
    if (n <= 0) fuzz::fail("a size that is not positive was accepted: " + std::string(text));
  if (c.num_attention_heads % c.num_key_value_heads != 0 || c.head_dim % 2 != 0)
    fuzz::fail("heads or head_dim that do not fit were accepted: " + std::string(text));
  if (!(c.rms_norm_eps > 0) || !(c.rope_theta > 0)) fuzz::fail("a non-positive number was accepted");
  try {
    int64_t numbers = 0;
    for (const ParameterSpec& spec : hub_tensor_specs(c, DType::Float32, true)) numbers += spec.shape.numel();
    (void)numbers;
  } catch (const std::exception& e) {
    fuzz::fail(std::string("the tensors of an accepted configuration threw: ") + e.what());
  }
  return 0;
}
