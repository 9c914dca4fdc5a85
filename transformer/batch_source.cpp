#include "transformer/batch_source.h"

#include "transformer/checkpoint.h"

namespace gradformer {

CopyTaskSource::CopyTaskSource(int64_t batch_size, uint64_t seed, CopyTaskOptions options)
    : batch_size_(batch_size), gen_(seed, /*stream=*/1), options_(options) {
  if (batch_size < 1) throw ValueError(message("copy task: batch size must be at least 1, got ", batch_size));
}

Batch CopyTaskSource::next() { return copy_task_batch(batch_size_, gen_, options_); }

std::map<std::string, std::string> CopyTaskSource::state() const { return {{"data.generator", generator_state_text(gen_)}}; }

void CopyTaskSource::restore(const std::map<std::string, std::string>& state, const std::string& source) {
  const auto it = state.find("data.generator");
  if (it == state.end()) throw CheckpointError(message(source, ": no data.generator state to resume the copy task from"));
  restore_generator(gen_, it->second, source);
}

CorpusSource::CorpusSource(std::vector<EncodedPair> pairs, BatchingOptions options, uint64_t seed)
    : pairs_(std::move(pairs)), options_(options), gen_(seed, /*stream=*/1) {
  if (pairs_.empty()) throw ValueError("training data: no sentence pairs");
  plan_epoch();
}

void CorpusSource::plan_epoch() {
  epoch_start_state_ = gen_.state();
  plan_ = plan_batches(pairs_, options_, &gen_);
  position_ = 0;
}

Batch CorpusSource::next() {
  if (position_ == static_cast<int64_t>(plan_.size())) {
    ++epoch_;
    plan_epoch();
  }
  return collate(pairs_, plan_[static_cast<size_t>(position_++)]);
}

std::map<std::string, std::string> CorpusSource::state() const {
  return {{"data.epoch", std::to_string(epoch_)},
          {"data.position", std::to_string(position_)},
          {"data.epoch_generator", std::to_string(epoch_start_state_[0]) + " " + std::to_string(epoch_start_state_[1])}};
}

void CorpusSource::restore(const std::map<std::string, std::string>& state, const std::string& source) {
  for (const char* key : {"data.epoch", "data.position", "data.epoch_generator"})
    if (!state.count(key)) throw CheckpointError(message(source, ": no ", key, " state to resume the corpus from"));
  // Replay the epoch's plan from the generator as it was when the epoch began, then skip ahead.
  restore_generator(gen_, state.at("data.epoch_generator"), source);
  plan_epoch();
  epoch_ = std::stoll(state.at("data.epoch"));
  position_ = std::stoll(state.at("data.position"));
  if (position_ < 0 || position_ > static_cast<int64_t>(plan_.size()))
    throw CheckpointError(message(source, ": data.position ", position_, " is outside the epoch's ", plan_.size(), " batches"));
}

}  // namespace gradformer
