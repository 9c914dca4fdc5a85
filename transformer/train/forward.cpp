#include "transformer/train/forward.h"

#include "autograd/all.h"
#include "transformer/data/vocab.h"
#include "transformer/model/masks.h"

namespace gradformer {

Variable teacher_forced_logits(const EncoderDecoder& model, const Batch& batch) {
  return model.forward(batch.src, batch.tgt_in, padding_mask(batch.src, Vocab::pad),
                       target_mask(batch.tgt_in, Vocab::pad));
}

TrainBatch translation_batch(const EncoderDecoder& model, const std::vector<Batch>& pieces,
                             const CrossEntropyOptions& loss) {
  TrainBatch batch;
  for (const Batch& piece : pieces) {
    batch.pieces.push_back(
        {[&model, piece, loss] { return cross_entropy(teacher_forced_logits(model, piece), piece.tgt_out, loss); },
         piece.ntokens});
    const int64_t source_tokens =
        static_cast<int64_t>(sum(padding_mask(piece.src, Vocab::pad).to(DType::Int64)).item());
    batch.slots += piece.src.numel() + piece.tgt_out.numel();
    batch.real += source_tokens + piece.ntokens;
  }
  return batch;
}

// L_1 = -sum_i log P(u_i | u_<i), averaged over the scored tokens
Variable lm_loss(const DecoderOnly& model, const LmBatch& batch, double label_smoothing) {
  const Variable logits = model.forward(batch.inputs, target_mask(batch.inputs, Vocab::pad));  // [B, L-1, V]
  return cross_entropy(logits, batch.targets, {.ignore_index = Vocab::pad, .label_smoothing = label_smoothing});
}

}  // namespace gradformer
