#include "transformer/inspect/attention_maps.h"

#include <filesystem>
#include <regex>

#include "autograd/all.h"
#include "transformer/data/data_error.h"
#include "transformer/inspect/svg.h"
#include "transformer/model/masks.h"

namespace gradformer {

// A model left keeping its attention weights would hold on to every later forward pass's weights.
void KeepAttention::keep(bool on) {
  for (auto& layer : *model_.encoder->layers) {
    layer->keep_attention = on;
    if (!on) layer->attention = Tensor();
  }
  for (auto& layer : *model_.decoder->layers) {
    layer->keep_attention = on;
    if (!on) layer->self_attention = Tensor(), layer->cross_attention = Tensor();
  }
}

// The three kinds of map, in the order they are written.
static const char* const kAttentionKinds[] = {"encoder", "decoder-self", "decoder-cross"};

std::string attention_map_name(const std::string& kind, int64_t layer, int64_t head) {
  return message(kind, "-layer", layer, "-head", head, ".svg");
}

bool is_attention_map_name(const std::string& file_name) {
  for (const char* kind : kAttentionKinds) {
    // KIND-layer<L>-head<H>.svg: the name attention_map_name gives, whatever L and H.
    const std::regex pattern(std::string(kind) + "-layer[0-9]+-head[0-9]+\\.svg");
    if (std::regex_match(file_name, pattern)) return true;
  }
  return false;
}

std::vector<std::string> write_attention_maps(EncoderDecoder& model, const Batch& b,
                                              const std::vector<std::string>& src_labels,
                                              const std::vector<std::string>& tgt_labels,
                                              const std::string& directory) {
  if (b.size() != 1 || static_cast<int64_t>(src_labels.size()) != b.src.size(1) ||
      static_cast<int64_t>(tgt_labels.size()) != b.tgt_in.size(1))
    throw ShapeError(message("write_attention_maps: need one sentence pair and a label per position, got src ",
                             b.src.shape(), " with ", src_labels.size(), " labels and tgt_in ", b.tgt_in.shape(),
                             " with ", tgt_labels.size()));

  const KeepAttention keeping(model);
  {
    InferenceGuard inference(model);
    (void)model.forward(b.src, b.tgt_in, padding_mask(b.src, Vocab::pad), target_mask(b.tgt_in, Vocab::pad));
  }
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error)
    throw DataError(message("write_attention_maps: cannot create directory ", directory, ": ", error.message()));
  std::vector<std::string> paths;
  auto write = [&](const Tensor& weights, const std::string& kind, size_t layer, const std::vector<std::string>& rows,
                   const std::vector<std::string>& cols) {
    for (int64_t h = 0; h < weights.size(1); ++h) {  // weights: [1, H, Tq, Tk]
      Heatmap map = heatmap_of(weights.select(0, 0).select(0, h), rows, cols,
                               message(kind, " attention, layer ", layer, ", head ", h));
      map.range = std::make_pair(0.0, 1.0);
      const std::string path = directory + "/" + attention_map_name(kind, static_cast<int64_t>(layer), h);
      write_svg(path, heatmap_svg(map));
      paths.push_back(path);
    }
  };
  size_t l = 0;
  for (auto& layer : *model.encoder->layers) write(layer->attention, kAttentionKinds[0], l++, src_labels, src_labels);
  l = 0;
  for (auto& layer : *model.decoder->layers) {
    write(layer->self_attention, kAttentionKinds[1], l, tgt_labels, tgt_labels);
    write(layer->cross_attention, kAttentionKinds[2], l++, tgt_labels, src_labels);
  }
  return paths;
}

}  // namespace gradformer
