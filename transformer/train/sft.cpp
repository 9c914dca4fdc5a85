#include "transformer/train/sft.h"

#include <algorithm>

#include "autograd/all.h"
#include "transformer/data/data_error.h"
#include "transformer/evaluate/chat_session.h"
#include "transformer/model/sampling.h"

namespace gradformer {

std::vector<LmSequence> chat_sequences(const std::vector<Conversation>& conversations, const Tokenizer& tokenizer,
                                       ChatTemplate chat_template, int64_t max_len) {
  std::vector<LmSequence> out;
  for (const Conversation& c : conversations) {
    ChatTokens t = encode_chat(tokenizer, render_chat(chat_template, c.messages));
    const auto read = static_cast<int64_t>(t.ids.size()) - 1;  // the model reads all but the last token
    if (read > max_len)
      throw DataError(message(c.source, ": the conversation is ", t.ids.size(), " tokens as the ",
                              chat_template_name(chat_template), " template writes it; the model reads at most ",
                              max_len, " (its max_len) and one more is predicted"));
    t.scored[0] = false;  // nothing predicts the first token (an answer's end-of-turn is always scored)
    out.push_back({std::move(t.ids), std::move(t.scored)});
  }
  return out;
}

StateDict grow_vocabulary(StateDict parameters, int64_t ids, int64_t rows, int64_t grown) {
  if (ids > rows || ids > grown || ids < 1)
    throw ValueError(message("grow_vocabulary: from ", ids, " ids in ", rows, " rows to ", grown,
                             " ids is no growth of a vocabulary"));
  for (const char* name : {"embed.weight", "generator.weight", "generator.bias"}) {
    const auto it = parameters.find(name);
    if (it == parameters.end() || it->second.dim() < 1 || it->second.size(0) != rows) continue;
    const Tensor& old = it->second;                                              // [rows, ...]
    const Tensor mean_row = mean(old.narrow(0, 0, ids), {0}, /*keepdim=*/true);  // [1, ...]
    Shape extra = old.shape();
    extra[0] = std::max<int64_t>(grown - rows, 0);
    Tensor out =
        concat(std::vector<Tensor>{old, zeros(extra, old.dtype())}, 0).contiguous();  // [max(rows, grown), ...]
    Shape added = old.shape();
    added[0] = grown - ids;
    out.narrow(0, ids, grown - ids).copy_(mean_row.expand(added));
    it->second = out;
  }
  return parameters;
}

ChatModel with_chat_tokens(const DecoderOnly& model, const Tokenizer& tokenizer, ChatTemplate chat_template,
                           uint64_t seed) {
  ChatModel out{.model = nullptr, .tokenizer = tokenizer.with_added(chat_template_specials(chat_template))};
  TransformerConfig c = model.config();
  const int64_t rows = c.tgt_vocab;
  c.src_vocab = c.tgt_vocab = std::max(rows, out.tokenizer.size());
  out.model = std::make_unique<DecoderOnly>(c, seed, skip_init);
  out.model->load_state_dict(grow_vocabulary(model.state_dict(), tokenizer.size(), rows, out.tokenizer.size()));
  return out;
}

std::unique_ptr<DecoderOnly> with_lora(const DecoderOnly& model, const LoraOptions& lora, uint64_t seed) {
  TransformerConfig c = model.config();
  if (c.block.lora.rank > 0)
    throw ValueError(message("with_lora: the model has adapters of rank ", c.block.lora.rank, " on ",
                             lora_targets_name(c.block.lora), " already"));
  c.block.lora = lora;
  auto adapted = std::make_unique<DecoderOnly>(c, seed, skip_init);  // validates the adapters' settings
  StateDict parameters = model.state_dict();
  for (const auto& [name, p] : adapted->named_parameters())
    if (is_lora_parameter(name)) parameters[name] = p.value();
  adapted->load_state_dict(parameters);
  Generator gen(seed, 2);  // a stream of its own: the model's weights came from stream 0
  reset_lora_adapters(*adapted, gen);
  return adapted;
}

int64_t freeze_all_but_adapters(const DecoderOnly& model) {
  int64_t trained = freeze_all_but_lora(model);
  if (model.config().block.lora.embed)
    for (Variable w : {model.embed->weight, model.output_projection->weight})
      if (!w.requires_grad()) w.set_requires_grad(true), trained += w.numel();  // tied: the same weight, once
  return trained;
}

AnswerCheck check_answers(DecoderOnly& model, const Tokenizer& tokenizer, ChatTemplate chat_template,
                          const std::vector<Conversation>& conversations, int64_t most) {
  AnswerCheck check;
  const int64_t end_of_turn_id = *tokenizer.special(end_of_turn(chat_template));
  const int64_t max_len = model.config().max_len;
  for (const Conversation& c : conversations) {
    if (check.conversations == most) break;
    if (c.messages.back().role != Role::Assistant) continue;
    const std::vector<Message> asked(c.messages.begin(), c.messages.end() - 1);
    const std::vector<int64_t> prompt = encode_chat(tokenizer, render_chat(chat_template, asked, true)).ids;
    // The answer as the template writes it (llama3 trims it): the last scored text piece.
    const std::vector<ChatPiece> pieces = render_chat(chat_template, c.messages);
    const auto answer =
        std::find_if(pieces.rbegin(), pieces.rend(), [](const ChatPiece& p) { return p.scored && !p.special; });
    const auto expected_tokens = static_cast<int64_t>(tokenizer.encode(answer->text).size());
    const int64_t room = max_len + 1 - static_cast<int64_t>(prompt.size());  // the last drawn is not read
    if (room < 1) continue;  // the question alone fills the model's context
    SamplingOptions options{.max_tokens = std::min(room, 2 * expected_tokens + 16),
                            .temperature = 0,
                            .eos = end_of_turn_id,
                            .never = not_in_answers(tokenizer, chat_template, model.config().tgt_vocab)};
    Generator gen(1);
    std::vector<int64_t> written = generate(model, prompt, options, gen);
    const bool ended = !written.empty() && written.back() == end_of_turn_id;
    if (ended) written.pop_back();
    const std::string text = tokenizer.decode(written);
    ++check.conversations;
    check.ended += ended;
    check.exact += ended && text == answer->text;
    check.answers.push_back(text);
  }
  return check;
}

}  // namespace gradformer
