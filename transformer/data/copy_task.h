// The Annotated Transformer's copy task: the model must reproduce a random sequence. It needs no
// data files and trains in seconds, so it is the first thing to run.
//
//   data = torch.randint(1, V, size=(batch_size, 10)); data[:, 0] = 1
//   src = tgt = data;  Batch(src, tgt, pad=0): tgt_in = tgt[:, :-1], tgt_out = tgt[:, 1:]
//
// Token 1 doubles as the start symbol (it is <s> in our vocabulary) and 0 is padding, which the
// task never produces, so src_mask is all true and tgt_mask is the plain causal mask.
#pragma once

#include <cstdint>

#include "tensor/random.h"
#include "transformer/data/batch.h"

namespace gradformer {

struct CopyTaskOptions {
  int64_t vocab_size = 11;  // tokens 1..vocab_size-1 appear; 0 is padding
  int64_t length = 10;      // tokens per sequence, the leading 1 included
};

/// One batch: src [B, length], tgt_in and tgt_out [B, length - 1], ntokens = B * (length - 1).
Batch copy_task_batch(int64_t batch_size, Generator& gen, const CopyTaskOptions& options = {});

}  // namespace gradformer
