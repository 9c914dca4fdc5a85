#include "transformer/data/batch_stream.h"

#include "tensor/support/profiler.h"
#include "tensor/support/saved_state.h"

namespace gradformer {

CopyTaskStream::CopyTaskStream(int64_t batch_size, uint64_t seed, CopyTaskOptions options)
    : batch_size_(batch_size), gen_(seed, /*stream=*/1), options_(options) {
  if (batch_size < 1) throw ValueError(message("copy task: batch size must be at least 1, got ", batch_size));
}

std::vector<Batch> CopyTaskStream::next() {
  const profiler::Scope event("copy task batch", profiler::Phase::Data);
  return {copy_task_batch(batch_size_, gen_, options_)};
}

std::map<std::string, std::string> CopyTaskStream::state() const {
  return {{"data.generator", generator_state_text(gen_)}};
}

void CopyTaskStream::restore(const std::map<std::string, std::string>& state, const std::string& source) {
  restore_generator(gen_, SavedState(state, source).text("data.generator"), source);
}

CorpusStream::CorpusStream(std::vector<EncodedPair> pairs, BatchingOptions options, uint64_t seed)
    : pairs_(std::move(pairs)), options_(options), gen_(seed, /*stream=*/1) {
  if (pairs_.empty()) throw ValueError("training data: no sentence pairs");
  if (options_.pieces < 1) throw ValueError(message("training data: pieces must be at least 1, got ", options_.pieces));
  plan_epoch();
}

void CorpusStream::plan_epoch() {
  epoch_start_state_ = gen_.state();
  plan_ = plan_batches(pairs_, options_, &gen_);
  position_ = 0;
}

std::vector<Batch> CorpusStream::next() {
  const profiler::Scope event("corpus batch", profiler::Phase::Data);
  if (position_ == static_cast<int64_t>(plan_.size())) {
    ++epoch_;
    plan_epoch();
  }
  std::vector<Batch> pieces;
  for (const auto& piece : split_by_length(pairs_, plan_[static_cast<size_t>(position_++)], options_.pieces))
    pieces.push_back(collate(pairs_, piece));
  return pieces;
}

std::map<std::string, std::string> CorpusStream::state() const {
  return {
      {"data.epoch", std::to_string(epoch_)},
      {"data.position", std::to_string(position_)},
      {"data.epoch_generator", std::to_string(epoch_start_state_[0]) + " " + std::to_string(epoch_start_state_[1])}};
}

void CorpusStream::restore(const std::map<std::string, std::string>& state, const std::string& source) {
  const SavedState saved(state, source);
  const int64_t epoch = saved.integer("data.epoch"), position = saved.integer("data.position");
  // Replay the epoch's plan from the generator as it was when the epoch began, then skip ahead.
  restore_generator(gen_, saved.text("data.epoch_generator"), source);
  plan_epoch();
  epoch_ = epoch;
  position_ = position;
  if (epoch_ < 0) throw CheckpointError(message(source, ": data.epoch ", epoch_, " is negative"));
  if (position_ < 0 || position_ > static_cast<int64_t>(plan_.size()))
    throw CheckpointError(
        message(source, ": data.position ", position_, " is outside the epoch's ", plan_.size(), " batches"));
}

}  // namespace gradformer
