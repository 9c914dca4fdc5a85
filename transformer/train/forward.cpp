#include "transformer/train/forward.h"

#include "autograd/all.h"
#include "transformer/data/vocab.h"
#include "transformer/model/masks.h"

namespace gradformer {

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

}  // namespace gradformer
