#include "transformer/data/batch.h"

#include <algorithm>

namespace gradformer {

Batch make_batch(const Tensor& src, const Tensor& tgt_in, const Tensor& tgt_out, int64_t pad) {
  for (const Tensor* t : {&src, &tgt_in, &tgt_out}) {
    if (t->dim() != 2) throw ShapeError(message("make_batch: ids must be [B, length], got ", t->shape()));
    if (t->dtype() != DType::Int64) throw DTypeError(message("make_batch: ids must be int64, got ", t->dtype()));
  }
  if (src.size(0) != tgt_in.size(0) || !(tgt_in.shape() == tgt_out.shape()))
    throw ShapeError(message("make_batch: src is ", src.shape(), ", tgt_in ", tgt_in.shape(), ", tgt_out ",
                             tgt_out.shape(), ": want src [B, S] and both targets [B, T]"));
  Batch batch;
  batch.src = src;
  batch.tgt_in = tgt_in;
  batch.tgt_out = tgt_out;
  batch.ntokens =
      static_cast<int64_t>(sum(ne(tgt_out, scalar(static_cast<double>(pad), DType::Int64)).to(DType::Int64)).item());
  return batch;
}

std::vector<EncodedPair> encode_pairs(const std::vector<SentencePair>& pairs, const Tokenizer& source_tokenizer,
                                      const Tokenizer& target_tokenizer) {
  std::vector<EncodedPair> encoded;
  encoded.reserve(pairs.size());
  for (const SentencePair& pair : pairs)
    encoded.push_back(
        {source_tokenizer.encode(join_words(pair.source)), target_tokenizer.encode(join_words(pair.target))});
  return encoded;
}

std::vector<int64_t> encode_source(const Tokenizer& tokenizer, const std::vector<std::string>& words, bool source_eos) {
  std::vector<int64_t> ids = tokenizer.encode(join_words(words));
  if (source_eos) ids.push_back(Vocab::eos);
  return ids;
}

Batch collate(const std::vector<EncodedPair>& pairs, const std::vector<int64_t>& indices, bool source_eos) {
  const size_t source_end = source_eos ? 1 : 0;  // the </s> after each source, or nothing
  if (indices.empty()) throw ValueError("collate: no sentences to batch");
  size_t src_len = 0, tgt_len = 0;
  for (int64_t i : indices) {
    if (i < 0 || i >= static_cast<int64_t>(pairs.size()))
      throw IndexError(message("collate: index ", i, " is outside [0, ", pairs.size(), ")"));
    const EncodedPair& pair = pairs[static_cast<size_t>(i)];
    if (pair.source.empty() || pair.target.empty()) throw DataError(message("collate: pair ", i, " has an empty side"));
    src_len = std::max(src_len, pair.source.size() + source_end);
    tgt_len = std::max(tgt_len, pair.target.size() + 1);  // + <s> (input) or </s> (output)
  }
  const size_t batch = indices.size();
  std::vector<int64_t> src(batch * src_len, Vocab::pad), tgt_in(batch * tgt_len, Vocab::pad),
      tgt_out(batch * tgt_len, Vocab::pad);
  for (size_t b = 0; b < batch; ++b) {
    const EncodedPair& pair = pairs[static_cast<size_t>(indices[b])];
    int64_t* s = &src[b * src_len];
    std::copy(pair.source.begin(), pair.source.end(), s);
    if (source_eos) s[pair.source.size()] = Vocab::eos;
    int64_t* in = &tgt_in[b * tgt_len];
    in[0] = Vocab::bos;
    std::copy(pair.target.begin(), pair.target.end(), in + 1);
    int64_t* out = &tgt_out[b * tgt_len];
    std::copy(pair.target.begin(), pair.target.end(), out);
    out[pair.target.size()] = Vocab::eos;
  }
  const auto B = static_cast<int64_t>(batch);
  return make_batch(from_vector(src, {B, static_cast<int64_t>(src_len)}),
                    from_vector(tgt_in, {B, static_cast<int64_t>(tgt_len)}),
                    from_vector(tgt_out, {B, static_cast<int64_t>(tgt_len)}));
}

}  // namespace gradformer
