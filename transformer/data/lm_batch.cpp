#include "transformer/data/lm_batch.h"

#include <algorithm>

#include "tensor/support/profiler.h"
#include "tensor/support/saved_state.h"
#include "transformer/data/toy_corpus.h"

namespace gradformer {

LmSequence scored_from(std::vector<int64_t> tokens, int64_t first_scored) {
  std::vector<bool> scored(tokens.size(), false);
  for (size_t i = static_cast<size_t>(std::max<int64_t>(first_scored, 1)); i < scored.size(); ++i) scored[i] = true;
  return {std::move(tokens), std::move(scored)};
}

LmSequence sentence_sequence(const std::vector<int64_t>& words) {
  std::vector<int64_t> tokens{Vocab::bos};
  tokens.insert(tokens.end(), words.begin(), words.end());
  tokens.push_back(Vocab::eos);
  return scored_from(std::move(tokens));
}

LmSequence translation_sequence(const std::vector<int64_t>& source, const std::vector<int64_t>& target, int64_t sep) {
  std::vector<int64_t> tokens{Vocab::bos};
  tokens.insert(tokens.end(), source.begin(), source.end());
  tokens.push_back(sep);
  const auto first_target = static_cast<int64_t>(tokens.size());
  tokens.insert(tokens.end(), target.begin(), target.end());
  tokens.push_back(Vocab::eos);
  return scored_from(std::move(tokens), first_target);
}

LmBatch make_lm_batch(const std::vector<LmSequence>& sequences, const std::vector<int64_t>& indices, int64_t pad) {
  if (indices.empty()) throw ValueError("make_lm_batch: no sequences");
  const int64_t B = static_cast<int64_t>(indices.size());
  int64_t L = 0;
  for (int64_t i : indices) L = std::max(L, static_cast<int64_t>(sequences.at(static_cast<size_t>(i)).tokens.size()));
  if (L < 2)
    throw ValueError(message("make_lm_batch: a sequence needs at least 2 tokens (<s> and one to predict), got ", L));
  std::vector<int64_t> tokens(static_cast<size_t>(B * L), std::max<int64_t>(pad, 0)), scored(tokens.size(), pad);
  for (int64_t b = 0; b < B; ++b) {
    const LmSequence& s = sequences[static_cast<size_t>(indices[static_cast<size_t>(b)])];
    if (s.scored.size() != s.tokens.size())
      throw ValueError(message("make_lm_batch: sequence ", indices[static_cast<size_t>(b)], " has ", s.tokens.size(),
                               " tokens but ", s.scored.size(), " scored flags"));
    for (size_t t = 0; t < s.tokens.size(); ++t) {
      tokens[static_cast<size_t>(b * L) + t] = s.tokens[t];
      if (s.scored[t] && t > 0) scored[static_cast<size_t>(b * L) + t] = s.tokens[t];
    }
  }
  const Tensor all = from_vector(tokens, {B, L}), targets_all = from_vector(scored, {B, L});  // [B, L]
  // The shift of causal language modelling: position t reads token t and predicts token t + 1.
  LmBatch batch;
  batch.pad = pad;
  batch.inputs = all.narrow(1, 0, L - 1).contiguous();           // tokens[:, :-1]   [B, L-1]
  batch.targets = targets_all.narrow(1, 1, L - 1).contiguous();  // tokens[:, 1:]    [B, L-1], <pad> where not scored
  for (int64_t v : batch.targets.to_vector<int64_t>()) batch.ntokens += v != pad;
  return batch;
}

std::vector<LmBatch> lm_batches(const std::vector<LmSequence>& sequences, int64_t size, int64_t pad) {
  std::vector<LmBatch> out;
  const auto n = static_cast<int64_t>(sequences.size());
  for (int64_t start = 0; start < n; start += size) {
    std::vector<int64_t> indices;
    for (int64_t i = start; i < std::min(start + size, n); ++i) indices.push_back(i);
    out.push_back(make_lm_batch(sequences, indices, pad));
  }
  return out;
}

FreshToySentences::FreshToySentences(const Vocab& vocab, int64_t batch_size, uint64_t seed)
    : vocab_(vocab), batch_size_(batch_size), gen_(seed, 4) {}

LmBatch FreshToySentences::next() {
  const profiler::Scope event("language-model batch", profiler::Phase::Data);
  std::vector<LmSequence> sequences;
  std::vector<int64_t> indices;
  for (int64_t i = 0; i < batch_size_; ++i) {
    sequences.push_back(sentence_sequence(vocab_.encode(sample_toy_pair(gen_).source)));
    indices.push_back(i);
  }
  return make_lm_batch(sequences, indices);
}

std::map<std::string, std::string> FreshToySentences::state() const {
  return {{"data.generator", generator_state_text(gen_)}};
}

void FreshToySentences::restore(const std::map<std::string, std::string>& state, const std::string& source) {
  restore_generator(gen_, SavedState(state, source).text("data.generator"), source);
}

LmEpochs::LmEpochs(std::vector<LmSequence> sequences, int64_t batch_size, uint64_t seed, int64_t pad)
    : sequences_(std::move(sequences)), batch_size_(batch_size), pad_(pad), gen_(seed, 4) {
  shuffle();
}

int64_t LmEpochs::batches_per_epoch() const {
  return (static_cast<int64_t>(sequences_.size()) + batch_size_ - 1) / batch_size_;
}

LmBatch LmEpochs::next() {
  const profiler::Scope event("language-model batch", profiler::Phase::Data);
  if (position_ == batches_per_epoch()) ++epoch_, position_ = 0, shuffle();
  const int64_t start = position_++ * batch_size_;
  const auto end = std::min<int64_t>(start + batch_size_, static_cast<int64_t>(order_.size()));
  return make_lm_batch(sequences_, std::vector<int64_t>(order_.begin() + start, order_.begin() + end), pad_);
}

std::map<std::string, std::string> LmEpochs::state() const {
  Generator before(0);
  before.set_state(epoch_start_);
  return {{"data.epoch", std::to_string(epoch_)},
          {"data.position", std::to_string(position_)},
          {"data.epoch_generator", generator_state_text(before)}};
}

void LmEpochs::restore(const std::map<std::string, std::string>& state, const std::string& source) {
  const SavedState saved(state, source);
  epoch_ = saved.integer("data.epoch"), position_ = saved.integer("data.position");
  restore_generator(gen_, saved.text("data.epoch_generator"), source);
  shuffle();
  // A data file that changed since the checkpoint can leave the position past its end.
  if (epoch_ < 0) throw CheckpointError(message(source, ": data.epoch ", epoch_, " is negative"));
  if (position_ < 0 || position_ > batches_per_epoch())
    throw CheckpointError(
        message(source, ": data.position ", position_, " is outside the epoch's ", batches_per_epoch(), " batches"));
}

void LmEpochs::shuffle() {
  epoch_start_ = gen_.state();
  order_.resize(sequences_.size());
  for (size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<int64_t>(i);
  for (size_t i = order_.size(); i > 1; --i)
    std::swap(order_[i - 1], order_[static_cast<size_t>(gen_.integer(0, static_cast<int64_t>(i)))]);
}

}  // namespace gradformer
