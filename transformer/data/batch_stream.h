// Where training batches come from, with a position that can be saved and restored, so that a run
// resumed from a checkpoint sees exactly the batches the uninterrupted run would have seen.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "transformer/data/batch.h"
#include "transformer/data/batch_plan.h"
#include "transformer/data/copy_task.h"

namespace gradformer {

/// Where a stream of training data stands: text entries for the checkpoint (e.g. "data.generator"),
/// and their inverse.
class Resumable {
 public:
  virtual ~Resumable() = default;
  virtual std::map<std::string, std::string> state() const = 0;
  virtual void restore(const std::map<std::string, std::string>& state, const std::string& source) = 0;
};

class BatchStream : public Resumable {
 public:
  /// One optimisation step's data: a batch, as one or more pieces whose gradients add up.
  virtual std::vector<Batch> next() = 0;
};

/// Fresh random copy-task batches forever.
class CopyTaskStream : public BatchStream {
 public:
  CopyTaskStream(int64_t batch_size, uint64_t seed, CopyTaskOptions options = {});
  std::vector<Batch> next() override;
  std::map<std::string, std::string> state() const override;
  void restore(const std::map<std::string, std::string>& state, const std::string& source) override;

 private:
  int64_t batch_size_;
  Generator gen_;
  CopyTaskOptions options_;
};

/// Epochs over a corpus: each epoch shuffles and re-plans its batches (plan_batches), each batch
/// in options.pieces length-sorted pieces (split_by_length).
class CorpusStream : public BatchStream {
 public:
  CorpusStream(std::vector<EncodedPair> pairs, BatchingOptions options, uint64_t seed);
  std::vector<Batch> next() override;
  std::map<std::string, std::string> state() const override;
  void restore(const std::map<std::string, std::string>& state, const std::string& source) override;
  /// Batches in one epoch (the same for every epoch: planning only reorders).
  int64_t batches_per_epoch() const { return static_cast<int64_t>(plan_.size()); }
  int64_t epoch() const { return epoch_; }

 private:
  void plan_epoch();

  std::vector<EncodedPair> pairs_;
  BatchingOptions options_;
  Generator gen_;
  std::array<uint64_t, 2> epoch_start_state_{};  // the generator before this epoch's plan
  std::vector<std::vector<int64_t>> plan_;
  int64_t epoch_ = 0, position_ = 0;
};

}  // namespace gradformer
