#include "transformer/evaluate/evaluate.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "autograd/all.h"
#include "transformer/data/batch_plan.h"
#include "transformer/data/copy_task.h"
#include "transformer/data/data_error.h"
#include "transformer/inspect/svg.h"
#include "transformer/model/masks.h"
#include "transformer/model/sampling.h"

namespace gradformer {

Variable teacher_forced_logits(const EncoderDecoder& model, const Batch& batch) {
  return model.forward(batch.src, batch.tgt_in, padding_mask(batch.src, Vocab::pad),
                       target_mask(batch.tgt_in, Vocab::pad));
}

// L_1 = -sum_i log P(u_i | u_<i), averaged over the scored tokens
Variable lm_loss(const DecoderOnly& model, const LmBatch& batch, double label_smoothing) {
  // Without a pad token (kNoToken), padding is only ever after a sequence's end: causal attention hides it.
  const Tensor mask =
      batch.pad >= 0 ? target_mask(batch.inputs, batch.pad) : causal_mask(batch.inputs.size(1)).unsqueeze(0);
  const Variable logits = model.forward(batch.inputs, mask);  // [B, L-1, V]
  return cross_entropy(logits, batch.targets, {.ignore_index = batch.pad, .label_smoothing = label_smoothing});
}

// The model knows nothing of vocabularies: its decoding defaults must be the data layer's ids.
static_assert(DecodeOptions::default_bos == Vocab::bos && DecodeOptions::default_eos == Vocab::eos);

std::vector<double> sentence_log_probs(EncoderDecoder& model, const Batch& batch) {
  InferenceGuard inference(model);
  const Tensor logp = log_softmax(teacher_forced_logits(model, batch), -1).value().to(DType::Float64);  // [B, T, V]
  const Tensor picked = gather(logp, 2, batch.tgt_out.unsqueeze(2)).squeeze(2);                         // [B, T]
  const Tensor real = ne(batch.tgt_out, scalar(static_cast<double>(Vocab::pad), DType::Int64));
  const Tensor per_sentence = sum(where(real, picked, zeros_like(picked)), {1});  // [B]
  return per_sentence.to_vector<double>();
}

double teacher_forced_loss(EncoderDecoder& model, const std::vector<Batch>& batches) {
  InferenceGuard inference(model);
  double total = 0;
  int64_t tokens = 0;
  for (const Batch& b : batches) {
    const Variable loss = cross_entropy(teacher_forced_logits(model, b), b.tgt_out, {.ignore_index = Vocab::pad});
    total += loss.item() * static_cast<double>(b.ntokens);
    tokens += b.ntokens;
  }
  return tokens ? total / static_cast<double>(tokens) : 0.0;
}

std::vector<std::string> hypothesis_words(const std::vector<int64_t>& ids, const Tokenizer& target_tokenizer) {
  return split_words(target_tokenizer.decode(strip_specials(ids)));
}

static DecodeOptions options_for(const EncoderDecoder& model, size_t source_length) {
  // A translation rarely runs past twice its source; the positional encoding caps it in any case.
  return {.max_len = std::min<int64_t>(model.config().max_len - 1, 2 * static_cast<int64_t>(source_length) + 10)};
}

std::vector<std::string> translate(EncoderDecoder& model, const std::vector<std::string>& source,
                                   const Tokenizer& source_tokenizer, const Tokenizer& target_tokenizer, int64_t beam,
                                   double alpha, bool source_eos) {
  std::vector<int64_t> ids;
  try {
    ids = encode_source(source_tokenizer, source, source_eos);
  } catch (const ValueError& e) {  // text a byte-level tokenizer cannot read: this sentence's problem
    throw DataError(message("translate: ", e.what()));
  }
  const size_t tokens = ids.size() - (source_eos ? 1 : 0);
  if (static_cast<int64_t>(ids.size()) > model.config().max_len)
    throw DataError(message("translate: the sentence has ", tokens, " tokens; this model takes at most ",
                            model.config().max_len - (source_eos ? 1 : 0)));
  const Tensor src = from_vector(ids, {1, static_cast<int64_t>(ids.size())});
  const Tensor mask = padding_mask(src, Vocab::pad);
  const DecodeOptions options = options_for(model, tokens);
  const Hypothesis h = beam == 1 ? greedy_decode(model, src, mask, options).front()
                                 : beam_search(model, src, mask, beam, alpha, options);
  return hypothesis_words(h.tokens, target_tokenizer);
}

TranslationReport evaluate_translation(EncoderDecoder& model, const std::vector<SentencePair>& pairs,
                                       const Tokenizer& source_tokenizer, const Tokenizer& target_tokenizer,
                                       int64_t beam, double alpha, int64_t batch_size, bool source_eos) {
  TranslationReport report;
  std::vector<std::vector<std::string>> references;
  if (beam == 1) {
    // Greedy decoding in batches of similar length (the batch plan's evaluation order), then put back in order.
    const std::vector<EncodedPair> encoded = encode_pairs(pairs, source_tokenizer, target_tokenizer);
    const auto source_tokens = [&](int64_t i) { return encoded[static_cast<size_t>(i)].source.size(); };
    report.hypotheses.resize(pairs.size());
    for (const auto& indices : plan_batches(encoded, {.max_sentences = batch_size}, nullptr)) {
      const Batch b = collate(encoded, indices, source_eos);
      size_t longest = 0;
      for (int64_t i : indices) longest = std::max(longest, source_tokens(i));
      auto hyps = greedy_decode(model, b.src, padding_mask(b.src, Vocab::pad), options_for(model, longest));
      for (size_t k = 0; k < indices.size(); ++k) {
        // Each sentence's own length cap, so its translation does not depend on its batch-mates
        // (greedy decoding of fewer steps gives the first tokens of more steps).
        std::vector<int64_t>& tokens = hyps[k].tokens;
        const auto cap = options_for(model, source_tokens(indices[k])).max_len;
        if (static_cast<int64_t>(tokens.size()) > cap) tokens.resize(static_cast<size_t>(cap));
        report.hypotheses[static_cast<size_t>(indices[k])] = hypothesis_words(tokens, target_tokenizer);
      }
    }
  } else {
    for (const SentencePair& p : pairs)
      report.hypotheses.push_back(
          translate(model, p.source, source_tokenizer, target_tokenizer, beam, alpha, source_eos));
  }
  for (const SentencePair& p : pairs) references.push_back(p.target);
  report.bleu = corpus_bleu(report.hypotheses, references);
  report.exact_match = exact_match_rate(report.hypotheses, references);
  return report;
}

int64_t copy_task_exact_match(EncoderDecoder& model, int64_t count, Generator& gen) {
  const Batch b = copy_task_batch(count, gen);
  // Start from the sequence's first token (1) and generate the other length - 1, never stopping early.
  const int64_t length = b.src.size(1);
  const auto hyps =
      greedy_decode(model, b.src, padding_mask(b.src, Vocab::pad), {.max_len = length - 1, .bos = 1, .eos = -1});
  int64_t exact = 0;
  for (int64_t i = 0; i < count; ++i) {
    std::vector<int64_t> decoded{1};
    decoded.insert(decoded.end(), hyps[static_cast<size_t>(i)].tokens.begin(),
                   hyps[static_cast<size_t>(i)].tokens.end());
    exact += decoded == b.src.select(0, i).to_vector<int64_t>();
  }
  return exact;
}

// ---- the decoder-only model ------------------------------------------------------------------------

double lm_eval_loss(DecoderOnly& model, const std::vector<LmBatch>& batches) {
  InferenceGuard guard(model);
  double total = 0;
  int64_t tokens = 0;
  for (const LmBatch& b : batches)
    total += lm_loss(model, b).item() * static_cast<double>(b.ntokens), tokens += b.ntokens;
  return total / static_cast<double>(tokens);
}

TextScore score_text(DecoderOnly& model, const Tokenizer& tokenizer, const std::vector<int64_t>& tokens,
                     int64_t context) {
  const int64_t pad = lm_pad(tokenizer);
  const double loss = lm_eval_loss(model, text_eval_batches(tokens, context, 16, pad));
  if (!std::isfinite(loss)) {  // finite weights whose arithmetic overflows: find where, a block at a time
    const std::vector<LmBatch> blocks = text_eval_batches(tokens, context, 1, pad);
    const auto n = static_cast<int64_t>(tokens.size());
    for (size_t b = 0; b < blocks.size(); ++b)
      if (const double block_loss = lm_eval_loss(model, {blocks[b]}); !std::isfinite(block_loss)) {
        const int64_t first = static_cast<int64_t>(b) * context;
        throw ValueError(message("score: the loss on tokens ", first, " to ", std::min(n - 1, first + context), " is ",
                                 block_loss, ": the model's scores overflow there (weights finite but too large?)"));
      }
  }
  return {loss, static_cast<int64_t>(tokens.size()) - 1, predicted_bytes(tokens, tokenizer)};
}

std::vector<std::string> translate_as_lm(DecoderOnly& model, const std::vector<std::string>& source,
                                         const Vocab& vocab) {
  std::vector<int64_t> prompt{Vocab::bos};
  for (int64_t id : vocab.encode(source)) prompt.push_back(id);
  prompt.push_back(vocab.id("<sep>"));
  Generator unused(0);  // greedy draws nothing
  const int64_t room = model.config().max_len - static_cast<int64_t>(prompt.size()) + 1;
  SamplingOptions o{.max_tokens = std::max<int64_t>(1, std::min<int64_t>(64, room)), .temperature = 0};
  std::vector<std::string> out;
  for (int64_t id : generate(model, prompt, o, unused)) {
    if (id == Vocab::eos) break;
    out.push_back(vocab.token(id));
  }
  return out;
}

// ---- the encoder-only model ----------------------------------------------------------------------

// Loss and accuracy of the MLM over sentences, masked with a fixed generator (the same draw every time).
MlmScore mlm_evaluate(const EncoderOnly& model, const Vocab& vocab,
                      const std::vector<std::vector<std::string>>& sentences, uint64_t seed) {
  InferenceGuard guard(const_cast<EncoderOnly&>(model));
  Generator gen(seed, 3);
  double loss = 0, right = 0, chosen = 0;
  for (size_t start = 0; start < sentences.size(); start += 100) {
    std::vector<std::vector<int64_t>> ids;
    for (size_t i = start; i < std::min(sentences.size(), start + 100); ++i) ids.push_back(vocab.encode(sentences[i]));
    const MlmBatch b = mask_tokens(encode_sequences(ids), vocab.size(), gen);
    const Variable logits = model.mlm_logits(model.encode(b.input));  // [B, S, V]
    loss += cross_entropy(logits, b.labels, {.ignore_index = Vocab::pad}).item() * static_cast<double>(b.chosen);
    const Tensor hit = logical_and(eq(argmax(logits.value(), -1), b.labels), ne(b.labels, scalar(0.0, DType::Int64)));
    right += sum(hit.to(DType::Float64)).item(), chosen += static_cast<double>(b.chosen);
  }
  return {loss / chosen, right / chosen};
}

std::vector<int64_t> classify(const EncoderOnly& model, const Vocab& vocab,
                              const std::vector<std::vector<std::string>>& sentences) {
  InferenceGuard guard(const_cast<EncoderOnly&>(model));
  std::vector<int64_t> out;
  for (size_t start = 0; start < sentences.size(); start += 100) {
    std::vector<std::vector<int64_t>> ids;
    for (size_t i = start; i < std::min(sentences.size(), start + 100); ++i) ids.push_back(vocab.encode(sentences[i]));
    const Tensor predicted = argmax(model.class_logits(model.encode(encode_sequences(ids))).value(), -1);  // [B]
    for (int64_t p : predicted.to_vector<int64_t>()) out.push_back(p);
  }
  return out;
}

double classify_accuracy(const EncoderOnly& model, const Vocab& vocab, const std::vector<LabelledSentence>& examples) {
  std::vector<std::vector<std::string>> sentences;
  for (const auto& e : examples) sentences.push_back(e.tokens);
  const std::vector<int64_t> predicted = classify(model, vocab, sentences);
  int64_t right = 0;
  for (size_t i = 0; i < examples.size(); ++i) right += predicted[i] == examples[i].label;
  return static_cast<double>(right) / static_cast<double>(examples.size());
}

double classify_loss(const EncoderOnly& model, const Vocab& vocab, const std::vector<LabelledSentence>& examples) {
  InferenceGuard guard(const_cast<EncoderOnly&>(model));
  double total = 0;
  for (size_t start = 0; start < examples.size(); start += 100) {
    std::vector<int64_t> indices;
    for (size_t i = start; i < std::min(examples.size(), start + 100); ++i) indices.push_back(static_cast<int64_t>(i));
    const ClassifyBatch b = collate_labelled(examples, indices, vocab);
    const double mean = cross_entropy(model.class_logits(model.encode(b.ids)), b.labels).item();  // [B, C] against [B]
    total += mean * static_cast<double>(indices.size());
  }
  return total / static_cast<double>(examples.size());
}

}  // namespace gradformer
