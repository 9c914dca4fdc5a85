// Supervised fine-tuning: a trained language model taught to answer, on conversations written with a
// chat template (transformer/data/chat_template.h). The loss is the language model's, counted on the
// assistant's answers and their end-of-turn tokens only: the model learns to write answers, not to
// predict what users ask. A model whose tokenizer lacks the template's special tokens gets them
// (Tokenizer::with_added), and its embedding (and a separate output layer) one row for each.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nn/module.h"
#include "transformer/data/chat_template.h"
#include "transformer/data/lm_batch.h"
#include "transformer/model/decoder_only.h"

namespace gradformer {

/// Each conversation rendered with the template and encoded, its answers scored. DataError naming
/// the conversation (its source) for one longer than max_len + 1 tokens (the model reads all but the
/// last).
std::vector<LmSequence> chat_sequences(const std::vector<Conversation>& conversations, const Tokenizer& tokenizer,
                                       ChatTemplate chat_template, int64_t max_len);

/// The parameters of a decoder-only model whose tokenizer grows from `ids` to `grown` ids, its
/// embedding (and a separate output layer and its bias) holding `rows` rows (more than ids when an
/// imported model pads its embedding): afterwards max(rows, grown) rows, and rows [ids, grown) each the
/// mean of rows [0, ids) (a new token starts as the average token: its logit is the average logit, so
/// the model's predictions do not change until it learns the token). ValueError unless
/// ids <= rows and ids <= grown.
StateDict grow_vocabulary(StateDict parameters, int64_t ids, int64_t rows, int64_t grown);

/// A model and the tokenizer it reads, ready for a chat template.
struct ChatModel {
  std::unique_ptr<DecoderOnly> model;
  Tokenizer tokenizer;
};

/// The model and its tokenizer given the template's special tokens the tokenizer lacks: the tokens
/// after its ids (Tokenizer::with_added), the embedding (and a separate output layer) grown by a row
/// each, the mean row (grow_vocabulary; an imported model's spare rows are used first). A copy of the
/// model, unchanged, when the tokenizer has them all. The copy's dropout draws from `seed`, as a model
/// built with that seed would.
ChatModel with_chat_tokens(const DecoderOnly& model, const Tokenizer& tokenizer, ChatTemplate chat_template,
                           uint64_t seed);

/// The model with LoRA adapters (nn/lora.h) beside the projections `lora` names: its weights as they
/// are, each adapter's A drawn from `seed` and its B zero, so that it computes what it computed. The
/// caller freezes the rest (freeze_all_but_lora). ValueError for adapters the model cannot take (a
/// rank wider than a projection) or when it has adapters already.
std::unique_ptr<DecoderOnly> with_lora(const DecoderOnly& model, const LoraOptions& lora, uint64_t seed);

/// A model with adapters made ready to fine-tune them: every parameter frozen but the adapters' and,
/// with target embed, the embedding's and a separate output layer's (freeze_all_but_lora). Returns
/// the numbers left to train (a tied embedding once).
int64_t freeze_all_but_adapters(const DecoderOnly& model);

/// How a model answers the last user turn of conversations, greedily, each answer written until the
/// end-of-turn token or twice the expected answer's tokens (and 16 more).
struct AnswerCheck {
  int64_t conversations = 0;
  int64_t ended = 0;                 // answers the model ended with the end-of-turn token
  int64_t exact = 0;                 // answers equal to the conversation's, byte for byte (llama3: both trimmed)
  std::vector<std::string> answers;  // as the model wrote them, without the end-of-turn token
};

/// The answer check of at most `most` conversations (those whose last message is the assistant's).
AnswerCheck check_answers(DecoderOnly& model, const Tokenizer& tokenizer, ChatTemplate chat_template,
                          const std::vector<Conversation>& conversations, int64_t most);

}  // namespace gradformer
