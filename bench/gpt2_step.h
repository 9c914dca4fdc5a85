// One training step of GPT-2 small (transformer/model/decoder_only.h, gpt2_small_config) on random
// tokens, shared by bench_training_step (its time) and gpt2_step_memory (its peak resident memory),
// and mirrored in PyTorch by bench/torch_gpt2_step.py:
//   d_model 768, 12 layers, 12 heads, d_ff 3072, V 50257, tied embeddings, pre-LN, GELU (tanh),
//   dropout 0.1; batches of 4 sequences of 256 input tokens (context 256), every target scored.
// The model keeps GPT-2's n_ctx 1024 learned positions (as `gradformer params --preset gpt2-small`
// counts them) and is run on the first 256. A step: zero_grad, the causal language-modelling
// loss (lm_loss), backward, Adam (no weight decay).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "nn/adam.h"
#include "tensor/random.h"
#include "transformer/data/lm_batch.h"
#include "transformer/model/decoder_only.h"
#include "transformer/train/forward.h"

namespace gradformer::bench {

inline constexpr int64_t kGpt2Batch = 4, kGpt2Context = 256;

/// `batch` (kGpt2Batch) random sequences of kGpt2Context + 1 token ids in [1, V): id 0 is <pad>, which
/// lm_loss would mask, so none is drawn and all batch * kGpt2Context targets are scored.
inline LmBatch gpt2_random_batch(int64_t vocab, Generator& gen, int64_t batch = kGpt2Batch) {
  const Tensor ids = randint({batch, kGpt2Context + 1}, 1, vocab, gen);
  const int64_t* p = ids.data<int64_t>();
  std::vector<LmSequence> sequences;
  std::vector<int64_t> indices;
  for (int64_t b = 0; b < batch; ++b) {
    sequences.push_back(scored_from({p + b * (kGpt2Context + 1), p + (b + 1) * (kGpt2Context + 1)}));
    indices.push_back(b);
  }
  return make_lm_batch(sequences, indices);  // inputs, targets [4, 256]
}

/// GPT-2 small, or with lora_rank > 0 GPT-2 small fine-tuned with LoRA as the LoRA paper fine-tuned
/// GPT-2 medium: adapters of that rank (alpha = rank) beside W^Q, W^K, W^V and W^O of every layer,
/// every other weight frozen (nn/lora.h).
inline std::unique_ptr<DecoderOnly> gpt2_model(int64_t lora_rank = 0) {
  TransformerConfig c = gpt2_small_config();
  if (lora_rank > 0) c.block.lora = {.rank = lora_rank, .alpha = static_cast<double>(lora_rank)};
  auto model = std::make_unique<DecoderOnly>(c, /*seed=*/1);
  if (lora_rank > 0) freeze_all_but_lora(*model);
  model->train();
  return model;
}

/// Adam as GPT-2 small would be trained: no weight decay (Adam has none), betas 0.9 and 0.999; over
/// the parameters that are trained (with LoRA, the adapters alone).
inline Adam gpt2_adam(const DecoderOnly& model) {
  std::vector<Variable> trained;
  for (const Variable& p : model.parameters())
    if (p.requires_grad()) trained.push_back(p);
  return Adam(std::move(trained), {.lr = 1e-4, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8});
}

/// One step as the trainer takes it (transformer/train/trainer.cpp): forget the last step's
/// gradients (before the forward pass, so they are not held beside its activations), the mean
/// loss, backward, Adam. Returns the loss. `at`, when given, is called after the forward pass
/// ("forward") and after backward ("backward") with the loss (gpt2_step_memory reports there).
using StepStage = std::function<void(const char* stage, const Variable& loss)>;
inline double gpt2_train_step(const DecoderOnly& model, Adam& adam, const LmBatch& batch, const StepStage& at = {}) {
  adam.zero_grad();
  const Variable loss = lm_loss(model, batch);
  if (at) at("forward", loss);
  loss.backward();
  if (at) at("backward", loss);
  adam.step();
  return loss.item();
}

}  // namespace gradformer::bench
