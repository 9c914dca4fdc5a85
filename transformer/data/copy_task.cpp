#include "transformer/data/copy_task.h"

namespace gradformer {

Batch copy_task_batch(int64_t batch_size, Generator& gen, const CopyTaskOptions& options) {
  if (batch_size < 1) throw ValueError(message("copy_task_batch: batch_size must be positive, got ", batch_size));
  if (options.vocab_size < 3)
    throw ValueError(
        message("copy_task_batch: vocab_size must be at least 3 (pad, start, one symbol), got ", options.vocab_size));
  if (options.length < 2) throw ValueError(message("copy_task_batch: length must be at least 2, got ", options.length));

  Tensor data = randint({batch_size, options.length}, 1, options.vocab_size, gen);  // [B, L] int64
  data.select(1, 0).fill_(1);  // every sequence starts with the start symbol
  const int64_t L = options.length;
  return make_batch(data, data.slice(1, 0, L - 1).contiguous(), data.slice(1, 1, L).contiguous(), /*pad=*/0);
}

}  // namespace gradformer
