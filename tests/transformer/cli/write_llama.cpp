// write_llama DIR TOKENIZER_JSON: a small random Llama in the hub's folder layout, as `gradformer
// import --hf` reads it: DIR/config.json (model_type llama, V 16, d 16, 4 heads, 2 key/value heads of
// 4, d_ff 24, 2 layers, untied, eos_token_id 15), DIR/model.safetensors (float32) and a copy of
// TOKENIZER_JSON (a tokenizer of those 16 ids) as DIR/tokenizer.json.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "../store/tiny_hub_model.h"

int main(int argc, char** argv) {
  using namespace gradformer;
  if (argc != 3) {
    std::cerr << "usage: write_llama DIR TOKENIZER_JSON\n";
    return 2;
  }
  try {
    const std::filesystem::path dir = argv[1];
    std::filesystem::create_directories(dir);
    const hub_test::Case tiny{
        "tiny", "llama", {.d = 16, .heads = 4, .kv_heads = 2, .head_dim = 4, .ff = 24, .layers = 2}};
    constexpr int64_t vocab = 16;
    std::ofstream(dir / "config.json") << hub_test::config_text(tiny, vocab, /*eos=*/15);
    save_safetensors(dir / "model.safetensors", hub_test::random_state(tiny, vocab, 11));
    std::filesystem::copy_file(argv[2], dir / "tokenizer.json", std::filesystem::copy_options::overwrite_existing);
  } catch (const std::exception& e) {
    std::cerr << "write_llama: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
