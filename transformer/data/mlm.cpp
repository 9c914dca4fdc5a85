#include "transformer/data/mlm.h"

#include <algorithm>

namespace gradformer {

Vocab encoder_only_vocab(const std::vector<std::vector<std::string>>& sentences) {
  const Vocab words = Vocab::build(sentences);
  std::string text;
  for (int64_t id = 0; id < 4; ++id) text += words.token(id) + "\n";
  text += std::string(kMaskToken) + "\n";
  for (int64_t id = 4; id < words.size(); ++id) text += words.token(id) + "\n";
  return Vocab::from_text(text, "encoder_only_vocab");
}

void check_encoder_only_vocab(const Vocab& vocab, const std::string& source) {
  if (vocab.size() <= kFirstWordId || vocab.token(kMaskId) != kMaskToken)
    throw DataError(message(source, ": an encoder-only vocabulary needs <mask> at id ", kMaskId,
                            " and at least one word, got ", vocab.size(), " tokens",
                            vocab.size() > kMaskId ? message(" with '", vocab.token(kMaskId), "' at id 4") : ""));
}

Tensor encode_sequences(const std::vector<std::vector<int64_t>>& sentences) {
  if (sentences.empty()) throw ValueError("encode_sequences: no sentences");
  size_t length = 0;
  for (size_t i = 0; i < sentences.size(); ++i) {
    if (sentences[i].empty()) throw ValueError(message("encode_sequences: sentence ", i, " is empty"));
    length = std::max(length, sentences[i].size() + 2);  // + <s> and </s>
  }
  std::vector<int64_t> ids(sentences.size() * length, Vocab::pad);
  for (size_t b = 0; b < sentences.size(); ++b) {
    int64_t* row = &ids[b * length];
    row[0] = Vocab::bos;
    std::copy(sentences[b].begin(), sentences[b].end(), row + 1);
    row[sentences[b].size() + 1] = Vocab::eos;
  }
  return from_vector(ids, {static_cast<int64_t>(sentences.size()), static_cast<int64_t>(length)});
}

MlmBatch mask_tokens(const Tensor& ids, int64_t vocab_size, Generator& gen, const MlmOptions& o) {
  if (ids.dtype() != DType::Int64) throw DTypeError(message("mask_tokens: ids must be int64, got ", ids.dtype()));
  if (ids.dim() != 2) throw ShapeError(message("mask_tokens: ids must be [B, S], got ", ids.shape()));
  auto probability = [](const char* name, double p) {
    if (!(p >= 0 && p <= 1)) throw ValueError(message("mask_tokens: ", name, " must be in [0, 1], got ", p));
  };
  probability("select", o.select), probability("mask", o.mask), probability("random", o.random);
  if (o.mask + o.random > 1)
    throw ValueError(message("mask_tokens: mask ", o.mask, " + random ", o.random, " exceeds 1"));
  if (vocab_size <= kFirstWordId)
    throw ValueError(
        message("mask_tokens: vocab_size must exceed ", kFirstWordId, " (the specials and <mask>), got ", vocab_size));

  std::vector<int64_t> input = ids.contiguous().to_vector<int64_t>(), labels(input.size(), Vocab::pad);
  MlmBatch out;
  for (size_t i = 0; i < input.size(); ++i) {
    if (input[i] < kFirstWordId) continue;  // <pad> <s> </s> <unk> <mask> are never chosen
    ++out.candidates;
    // One draw u in [0, 1) per word: chosen when u < select, and u / select, uniform in [0, 1)
    // again, splits the chosen 80/10/10.
    const double u = gen.uniform();
    if (u >= o.select) continue;
    ++out.chosen;
    labels[i] = input[i];
    const double v = u / o.select;
    if (v < o.mask) {
      input[i] = kMaskId, ++out.masked;
    } else if (v < o.mask + o.random) {
      input[i] = gen.integer(kFirstWordId, vocab_size), ++out.randomized;
    } else {
      ++out.kept;
    }
  }
  out.input = from_vector(input, ids.shape());
  out.labels = from_vector(labels, ids.shape());
  return out;
}

std::vector<std::string> negation_labels() { return {"affirmative", "negated"}; }

int64_t negation_label(const std::vector<std::string>& french) {
  return std::find(french.begin(), french.end(), "pas") != french.end() ? 1 : 0;
}

std::vector<LabelledSentence> negation_task(const std::vector<SentencePair>& pairs) {
  std::vector<LabelledSentence> out;
  out.reserve(pairs.size());
  for (const SentencePair& p : pairs) out.push_back({p.source, negation_label(p.source)});
  return out;
}

ClassifyBatch collate_labelled(const std::vector<LabelledSentence>& examples, const std::vector<int64_t>& indices,
                               const Vocab& vocab) {
  std::vector<std::vector<int64_t>> sentences;
  std::vector<int64_t> labels;
  for (int64_t i : indices) {
    if (i < 0 || i >= static_cast<int64_t>(examples.size()))
      throw IndexError(message("collate_labelled: index ", i, " is outside [0, ", examples.size(), ")"));
    sentences.push_back(vocab.encode(examples[static_cast<size_t>(i)].tokens));
    labels.push_back(examples[static_cast<size_t>(i)].label);
  }
  return {encode_sequences(sentences), from_vector(labels, {static_cast<int64_t>(labels.size())})};
}

}  // namespace gradformer
