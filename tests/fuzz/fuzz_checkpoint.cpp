// Fuzzes the checkpoint loaders (transformer/store/checkpoint.h) on arbitrary files: the bytes go
// to a scratch file, which read_checkpoint_file reads and the loader of the architecture it names
// loads (load_checkpoint, load_decoder_only_checkpoint, load_encoder_only_checkpoint), or a
// gradformer::Error. Seeded with small valid checkpoints of the three architectures, so mutations
// reach past the safetensors layer into the metadata, the vocabularies and the model's tensors. A
// checkpoint that loads must survive a save/load round trip. The same bytes
// also go through gradformer import (transformer/store/import_weights.h) as a PyTorch state dict:
// the shapes read, then the tensors loaded into the model they describe, or a gradformer::Error.
#include <cstdint>
#include <optional>
#include <string>

#include "fuzz/checkpoint_checks.h"
#include "fuzz/fuzz.h"
#include "transformer/store/import_weights.h"

namespace {

// A vocabulary of `size` tokens: the specials, then made-up words.
gradformer::Vocab vocab_of_size(int64_t size) {
  std::string text = gradformer::Vocab().to_text();
  for (int64_t i = 4; i < size; ++i) text.append("w").append(std::to_string(i)).append("\n");
  return gradformer::Vocab::from_text(text);
}

void import_as_state_dict(const std::string& path) {
  using namespace gradformer;
  const SafetensorsFile file = load_safetensors(path);  // gradformer's own checkpoints too: their names are the same
  const WeightShapes s = infer_shapes(file.tensors, path);
  CheckpointInfo info;
  TransformerConfig& c = info.config;
  c.src_vocab = s.src_vocab, c.tgt_vocab = s.tgt_vocab, c.d_model = s.d_model, c.d_ff = s.d_ff, c.layers = s.layers;
  c.norm = s.norm, c.tie_embeddings = s.tie_embeddings, c.positions = s.positions, c.dtype = s.dtype;
  c.heads = 1, c.max_len = s.positions == Positions::Learned ? s.max_len : 16;
  c.validate();  // before the vocabularies: their sizes are now bounded
  info.source_tokenizer = vocab_of_size(c.src_vocab);
  info.target_tokenizer = c.tie_embeddings ? info.source_tokenizer.vocab() : vocab_of_size(c.tgt_vocab);
  import_weights(file.tensors, info, path);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gradformer;
  static const std::string path = [] {
    const std::string p = fuzz::scratch_path("checkpoint");
    fuzz::remove_at_exit(p);
    return p;
  }();
  fuzz::write_file(path, std::string_view(reinterpret_cast<const char*>(data), size));
  // Whichever architecture the file says it holds, through that architecture's loader.
  std::optional<LoadedCheckpoint> encoder_decoder;
  std::optional<LoadedDecoderOnly> decoder_only;
  std::optional<LoadedEncoderOnly> encoder_only;
  fuzz::guarded([&] {
    const CheckpointFile file = read_checkpoint_file(path);
    if (file.arch == Architecture::EncoderDecoder)
      encoder_decoder = load_checkpoint(file);
    else if (file.arch == Architecture::DecoderOnly)
      decoder_only = load_decoder_only_checkpoint(file);
    else
      encoder_only = load_encoder_only_checkpoint(file);
  });
  if (encoder_decoder) fuzz::check_round_trip(*encoder_decoder, path);
  if (decoder_only) fuzz::check_round_trip(*decoder_only, path);
  if (encoder_only) fuzz::check_round_trip(*encoder_only, path);
  fuzz::guarded([&] { import_as_state_dict(path); });
  return 0;
}
