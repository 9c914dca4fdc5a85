// Batches for the encoder-decoder: token ids padded with Vocab::pad to a rectangle. The masks that
// keep attention off that padding are the model's business (transformer/model/masks.h).
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/all.h"
#include "transformer/data/tokenizer.h"
#include "transformer/data/tsv.h"
#include "transformer/data/vocab.h"

namespace gradformer {

struct Batch {
  Tensor src;           // [B, S] int64: source ids, each sentence ending in </s> (see collate), then <pad>
  Tensor tgt_in;        // [B, T] int64: decoder input, <s> then the target (teacher forcing)
  Tensor tgt_out;       // [B, T] int64: what the decoder must predict, the target then </s>
  int64_t ntokens = 0;  // non-pad tokens in tgt_out: what the loss is averaged over
  int64_t size() const { return src.size(0); }
};

/// A batch from already-padded id tensors (src [B, S], tgt_in and tgt_out [B, T], all int64):
/// counts ntokens. ShapeError/DTypeError for inconsistent inputs.
Batch make_batch(const Tensor& src, const Tensor& tgt_in, const Tensor& tgt_out, int64_t pad = Vocab::pad);

/// A sentence pair as ids, without specials (Tokenizer::encode of each side).
struct EncodedPair {
  std::vector<int64_t> source;
  std::vector<int64_t> target;
};

/// Each side encoded with its tokenizer, as the text of its words joined by spaces: a tokenizer of
/// words gives each word's id (an unknown word <unk>), one of bytes or BPE the ids of that text.
/// A Vocab converts to the tokenizer of its words.
std::vector<EncodedPair> encode_pairs(const std::vector<SentencePair>& pairs, const Tokenizer& source_tokenizer,
                                      const Tokenizer& target_tokenizer);

/// Pads pairs[indices] into one batch: src = source + </s>, tgt_in = <s> + target,
/// tgt_out = target + </s>, each padded with <pad> to the longest in the batch. With source_eos
/// false the source is its words only (src = source): for a model trained without the </s>, as a
/// checkpoint's data.source_eos records.
Batch collate(const std::vector<EncodedPair>& pairs, const std::vector<int64_t>& indices, bool source_eos = true);

/// One source sentence's ids as the model reads them: its words' ids (unknown words <unk>), or the
/// ids of their text for bytes or BPE, then </s> when source_eos, the convention gradformer trains with.
std::vector<int64_t> encode_source(const Tokenizer& tokenizer, const std::vector<std::string>& words,
                                   bool source_eos = true);

}  // namespace gradformer
