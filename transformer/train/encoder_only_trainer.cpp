// The encoder-only (BERT-style) trainer: the hook `gradformer train --arch encoder-only` calls.
// Its branch replaces this file (and lists its tasks in architecture_tasks, trainer.cpp).
#include "transformer/train/trainer.h"

namespace gradformer {

TrainReport train_encoder_only(const TrainOptions&, const std::string&) {
  throw TrainOptionError("arch", "encoder-only has no trainer in this build yet");
}

}  // namespace gradformer
