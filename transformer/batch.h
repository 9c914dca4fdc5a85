// Batches for the encoder-decoder: token ids padded to a rectangle, and the masks that keep
// attention off the padding and off the future.
//
// MASK CONVENTION (the whole transformer/ layer relies on it): a bool mask is TRUE WHERE ATTENTION
// IS ALLOWED, as in the Annotated Transformer. Masks are [B, Tq or 1, Tk]; unsqueeze(1) makes them
// broadcast against attention scores [B, H, Tq, Tk], and attention sets scores to -inf where the
// mask is false.
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/all.h"
#include "transformer/tsv.h"
#include "transformer/vocab.h"

namespace gradformer {

struct Batch {
  Tensor src;       // [B, S] int64: source ids, each sentence ending in </s>, then <pad>
  Tensor tgt_in;    // [B, T] int64: decoder input, <s> then the target (teacher forcing)
  Tensor tgt_out;   // [B, T] int64: what the decoder must predict, the target then </s>
  Tensor src_mask;  // [B, 1, S] bool: true on real source tokens (keys any query may attend to)
  Tensor tgt_mask;  // [B, T, T] bool: padding AND causal: query i sees non-pad keys j <= i
  int64_t ntokens = 0;  // non-pad tokens in tgt_out: what the loss is averaged over
  int64_t size() const { return src.size(0); }
};

/// [T, T] bool, lower-triangular true: position i may attend to positions j <= i.
/// "We ... modify the self-attention sub-layer in the decoder stack to prevent positions from
/// attending to subsequent positions." (Vaswani et al., 2017, section 3.1)
Tensor causal_mask(int64_t length);
/// ids: [B, S] int64 -> [B, 1, S] bool, true where ids != pad.
Tensor padding_mask(const Tensor& ids, int64_t pad = Vocab::pad);
/// tgt_in: [B, T] int64 -> [B, T, T] bool: padding_mask(tgt_in) AND causal_mask(T).
Tensor target_mask(const Tensor& tgt_in, int64_t pad = Vocab::pad);

/// A batch from already-padded id tensors (src [B, S], tgt_in and tgt_out [B, T], all int64):
/// computes the masks and ntokens. ShapeError/DTypeError for inconsistent inputs.
Batch make_batch(const Tensor& src, const Tensor& tgt_in, const Tensor& tgt_out, int64_t pad = Vocab::pad);

/// A sentence pair as ids, without specials (Vocab::encode of each side).
struct EncodedPair {
  std::vector<int64_t> source;
  std::vector<int64_t> target;
};

/// Each side encoded with its vocabulary (unknown words become <unk>).
std::vector<EncodedPair> encode_pairs(const std::vector<SentencePair>& pairs, const Vocab& source_vocab,
                                      const Vocab& target_vocab);

/// Pads pairs[indices] into one batch: src = source + </s>, tgt_in = <s> + target,
/// tgt_out = target + </s>, each padded with <pad> to the longest in the batch.
Batch collate(const std::vector<EncodedPair>& pairs, const std::vector<int64_t>& indices);

}  // namespace gradformer
