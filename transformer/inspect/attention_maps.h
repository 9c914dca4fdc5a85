// Pictures of what a model attends to: the attention weights kept for as long as a guard lives,
// and one SVG heatmap per layer and head.
#pragma once

#include <string>
#include <vector>

#include "transformer/data/batch.h"
#include "transformer/model/encoder_decoder.h"

namespace gradformer {

/// For as long as it lives, every encoder and decoder layer keeps the attention weights of its
/// last forward pass (EncoderLayer::attention, DecoderLayer::self_attention and cross_attention);
/// on the way out, even by an exception, they stop keeping them and the weights are dropped.
class KeepAttention {
 public:
  explicit KeepAttention(EncoderDecoder& model) : model_(model) { keep(true); }
  ~KeepAttention() { keep(false); }
  KeepAttention(const KeepAttention&) = delete;
  KeepAttention& operator=(const KeepAttention&) = delete;

 private:
  void keep(bool on);
  EncoderDecoder& model_;
};

/// The file name of one attention map: "encoder-layer0-head1.svg" (kind encoder, decoder-self or
/// decoder-cross), and whether a file name is one of those (what a replaced run removes).
std::string attention_map_name(const std::string& kind, int64_t layer, int64_t head);
bool is_attention_map_name(const std::string& file_name);

/// SVG heatmaps of every layer and head for a batch of one sentence pair, teacher-forced: encoder
/// self-attention, decoder self-attention and cross-attention, labelled with one label per
/// position of src and tgt_in, written as
/// `directory`/{encoder,decoder-self,decoder-cross}-layer<L>-head<H>.svg. Returns the paths.
/// The layers keep their weights only during the call, also when it throws (a DataError if the
/// directory cannot be created or a file written).
std::vector<std::string> write_attention_maps(EncoderDecoder& model, const Batch& one,
                                              const std::vector<std::string>& source_labels,
                                              const std::vector<std::string>& target_labels,
                                              const std::string& directory);

}  // namespace gradformer
