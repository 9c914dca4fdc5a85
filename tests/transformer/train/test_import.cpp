// Checkpoints both ways (transformer/store/import_weights.h, checkpoint.h): a gradformer checkpoint
// written out as a PyTorch-style state dict (tensors only) and imported again scores and translates
// bit for bit as before; every way an import can go wrong is a CheckpointError naming it; a file of
// tensors only is refused by the loaders with directions to `gradformer import`; and a checkpoint's
// data.source_eos decides whether the model is fed a </s> after each source.
#include <algorithm>
#include <cmath>

#include "nn/all.h"
#include "training_helpers.h"
#include "transformer/data/batch.h"
#include "transformer/evaluate/evaluate.h"
#include "transformer/inspect/trace.h"
#include "transformer/model/decoding.h"
#include "transformer/model/masks.h"
#include "transformer/store/checkpoint.h"
#include "transformer/store/import_weights.h"

using namespace gradformer;
using test::TempDir;

namespace {

std::vector<SentencePair> small_corpus() {
  return {{{"le", "chat", "noir", "mange", "."}, {"the", "black", "cat", "eats", "."}},
          {{"je", "suis", "heureux", "."}, {"i", "am", "happy", "."}},
          {{"le", "chat", "dort"}, {"the", "cat", "sleeps"}},
          {{"je", "mange", "une", "pomme", "verte", "."}, {"i", "eat", "a", "green", "apple", "."}},
          {{"noir", "."}, {"black", "."}}};
}

// A model of the variant under test with its vocabularies, built from the corpus.
struct Translator {
  Vocab source, target;
  TransformerConfig config;
  std::unique_ptr<EncoderDecoder> model;

  Translator(NormPlacement norm, bool tie, Positions positions, Activation activation, DType dtype) {
    std::vector<std::vector<std::string>> sources, targets;
    for (const SentencePair& p : small_corpus()) sources.push_back(p.source), targets.push_back(p.target);
    source = Vocab::build(sources);
    target = Vocab::build(targets);
    if (tie) {
      std::vector<std::vector<std::string>> both = sources;
      both.insert(both.end(), targets.begin(), targets.end());
      source = target = Vocab::build(both);
    }
    config = TransformerConfig::tutorial(source.size(), target.size());
    config.d_model = 16, config.d_ff = 24, config.heads = 4, config.layers = 2, config.max_len = 24;
    config.norm = norm, config.tie_embeddings = tie, config.positions = positions, config.activation = activation;
    config.dtype = dtype;
    model = std::make_unique<EncoderDecoder>(config, 3);
  }
  CheckpointInfo info() const { return {config, source, target, {}}; }
};

// What PyTorch's `save_file(model.state_dict(), path, metadata={"format": "pt"})` writes: the
// parameters under their names, nothing of gradformer's metadata; a tied matrix under each of its
// three names, as a state dict of tied modules lists it.
void write_state_dict(const std::string& path, const EncoderDecoder& model) {
  StateDict tensors = model.state_dict();
  if (model.config().tie_embeddings)
    tensors["tgt_embed.weight"] = tensors["generator.weight"] = tensors.at("src_embed.weight");
  save_safetensors(path, tensors, {{"format", "pt"}});
}

// What `gradformer import` does, given the flags that shapes cannot tell.
CheckpointInfo info_from_shapes(const WeightShapes& s, const Vocab& source, const Vocab& target, int64_t heads,
                                int64_t max_len, Activation activation, bool source_eos) {
  CheckpointInfo info;
  TransformerConfig& c = info.config;
  c.src_vocab = s.src_vocab, c.tgt_vocab = s.tgt_vocab, c.d_model = s.d_model, c.d_ff = s.d_ff, c.layers = s.layers;
  c.norm = s.norm, c.tie_embeddings = s.tie_embeddings, c.positions = s.positions, c.dtype = s.dtype;
  c.heads = heads, c.max_len = s.positions == Positions::Learned ? s.max_len : max_len, c.activation = activation;
  info.source_tokenizer = source, info.target_tokenizer = target, info.source_eos = source_eos;
  return info;
}

std::vector<Batch> batches_of(const std::vector<SentencePair>& pairs, const Vocab& source, const Vocab& target,
                              bool source_eos = true) {
  const std::vector<EncodedPair> encoded = encode_pairs(pairs, source, target);
  return {collate(encoded, {0, 1, 2}, source_eos), collate(encoded, {3, 4}, source_eos)};
}

}  // namespace

TEST_CASE("import: a checkpoint written as a PyTorch state dict and imported scores and translates bit for bit") {
  struct Variant {
    const char* name;
    NormPlacement norm;
    bool tie;
    Positions positions;
    Activation activation;
    DType dtype;
  };
  for (const Variant& v :
       {Variant{"post-LN, untied", NormPlacement::Post, false, Positions::Sinusoidal, Activation::ReLU, DType::Float32},
        Variant{"pre-LN, tied (the matrix listed thrice)", NormPlacement::Pre, true, Positions::Sinusoidal,
                Activation::ReLU, DType::Float32},
        Variant{"learned positions, GELU, float64", NormPlacement::Post, false, Positions::Learned, Activation::GELU,
                DType::Float64}}) {
    INFO(v.name);
    TempDir dir("import-round-trip");
    Translator t(v.norm, v.tie, v.positions, v.activation, v.dtype);
    const std::string original = dir / "original.safetensors", weights = dir / "weights.safetensors",
                      imported_path = dir / "imported.safetensors";
    save_checkpoint(original, *t.model, {}, t.info());
    LoadedCheckpoint before = load_checkpoint(original);
    write_state_dict(weights, *before.model);

    // The shapes tell everything but heads, the activation and (sinusoids) max_len.
    const SafetensorsFile file = read_weights(weights);
    const WeightShapes s = infer_shapes(file.tensors, weights);
    CHECK(s.src_vocab == t.config.src_vocab);
    CHECK(s.tgt_vocab == t.config.tgt_vocab);
    CHECK(s.d_model == 16);
    CHECK(s.d_ff == 24);
    CHECK(s.layers == 2);
    CHECK(s.norm == v.norm);
    CHECK(s.tie_embeddings == v.tie);
    CHECK(s.positions == v.positions);
    CHECK(s.max_len == (v.positions == Positions::Learned ? 24 : 0));
    CHECK(s.dtype == v.dtype);

    CheckpointInfo info = info_from_shapes(s, t.source, t.target, 4, 24, v.activation, true);
    info.config.dropout = t.config.dropout;  // stored for further training, like --dropout
    const LoadedCheckpoint imported = import_weights(file.tensors, info, weights);
    save_checkpoint(imported_path, *imported.model, {}, imported.info);
    LoadedCheckpoint after = load_checkpoint(imported_path);

    CHECK(config_to_metadata(after.info.config) == config_to_metadata(before.info.config));
    CHECK(after.info.source_tokenizer.vocab() == t.source);
    CHECK(after.info.target_tokenizer.vocab() == t.target);
    CHECK(after.info.source_eos);
    const StateDict x = after.model->state_dict(), y = before.model->state_dict();
    REQUIRE(x.size() == y.size());
    for (const auto& [name, tensor] : y) {
      INFO(name);
      CHECK(test::bitwise_equal(x.at(name), tensor));
    }

    const std::vector<Batch> batches = batches_of(small_corpus(), t.source, t.target);
    const double loss_before = teacher_forced_loss(*before.model, batches);
    const double loss_after = teacher_forced_loss(*after.model, batches);
    CHECK(test::same_bits({loss_after}, {loss_before}));
    CHECK(std::isfinite(loss_before));
    CHECK(test::same_bits(sentence_log_probs(*after.model, batches[0]), sentence_log_probs(*before.model, batches[0])));
    for (const int64_t beam : {int64_t{1}, int64_t{3}}) {
      const auto hyp_before = evaluate_translation(*before.model, small_corpus(), t.source, t.target, beam).hypotheses;
      CHECK(evaluate_translation(*after.model, small_corpus(), t.source, t.target, beam).hypotheses == hyp_before);
    }

    // Heads are not in any shape, and they matter: the same tensors read with 2 heads score otherwise.
    const LoadedCheckpoint two_heads =
        import_weights(file.tensors, info_from_shapes(s, t.source, t.target, 2, 24, v.activation, true), weights);
    CHECK(teacher_forced_loss(*two_heads.model, batches) != loss_before);
  }
}

TEST_CASE(
    "import: weights that are not an encoder-decoder's, or not gradformer's names, are refused saying what they are") {
  const std::string src = "w.safetensors";
  CHECK_THROWS_MSG(
      infer_shapes({{"embed.weight", zeros({9, 8})}, {"decoder.layers.0.linear1.weight", zeros({4, 8})}}, src),
      CheckpointError,
      "w.safetensors: these are a decoder-only model's (embed.weight) weights; import takes an "
      "encoder-decoder's");
  CHECK_THROWS_MSG(infer_shapes({{"tok_embed.weight", zeros({9, 8})}}, src), CheckpointError,
                   "w.safetensors: these are an encoder-only model's (tok_embed.weight) weights");
  // Hugging Face's names, say: the first few are listed.
  const StateDict foreign = {{"model.shared.weight", zeros({9, 8})},
                             {"model.encoder.layers.0.fc1.weight", zeros({4, 8})},
                             {"model.encoder.layers.0.fc2.weight", zeros({8, 4})},
                             {"model.encoder.layers.0.fc3.weight", zeros({8, 4})},
                             {"model.encoder.layers.0.fc4.weight", zeros({8, 4})}};
  CHECK_THROWS_MSG(infer_shapes(foreign, src), CheckpointError,
                   "w.safetensors: no src_embed.weight: these are not the names of gradformer's encoder-decoder (the "
                   "file holds model.encoder.layers.0.fc1.weight, model.encoder.layers.0.fc2.weight, "
                   "model.encoder.layers.0.fc3.weight, model.encoder.layers.0.fc4.weight, ...)");
  CHECK_THROWS_MSG(infer_shapes({}, src), CheckpointError, "(the file holds no tensors at all)");
}

TEST_CASE("import: a tensor the shapes depend on that is missing or no float matrix, and stacks of unequal depth") {
  TempDir dir("import-shapes");
  Translator t(NormPlacement::Post, false, Positions::Sinusoidal, Activation::ReLU, DType::Float32);
  const StateDict good = t.model->state_dict();
  const std::string src = "w.safetensors";
  auto without = [&](const std::string& prefix) {
    StateDict s;
    for (const auto& [name, tensor] : good)
      if (name.rfind(prefix, 0) != 0) s.emplace(name, tensor);
    return s;
  };
  auto with = [&](const std::string& name, const Tensor& tensor) {
    StateDict s = good;
    s[name] = tensor;
    return s;
  };
  CHECK_THROWS_MSG(infer_shapes(with("src_embed.weight", zeros({16})), src), CheckpointError,
                   "w.safetensors: src_embed.weight is [16] float32, but it should be a float32 or float64 matrix "
                   "(its shape tells the source vocabulary and d_model)");
  CHECK_THROWS_MSG(infer_shapes(with("src_embed.weight", zeros({9, 16}, DType::Int64)), src), CheckpointError,
                   "src_embed.weight is [9, 16] int64, but it should be a float32 or float64 matrix");
  CHECK_THROWS_MSG(infer_shapes(without("encoder.layers.0.linear1.weight"), src), CheckpointError,
                   "w.safetensors: no tensor encoder.layers.0.linear1.weight, whose shape tells d_ff");
  CHECK_THROWS_MSG(infer_shapes(without("decoder.layers.1."), src), CheckpointError,
                   "w.safetensors: 2 encoder layers but 1 decoder layers; gradformer's encoder-decoder has as many "
                   "on both sides");
  CHECK_THROWS_MSG(infer_shapes(without("encoder.layers."), src), CheckpointError,
                   "w.safetensors: 0 encoder and 2 decoder layers (encoder.layers.{i}.*, decoder.layers.{i}.*): an "
                   "encoder-decoder needs both");
  // Without tgt_embed.weight but with generator.weight the embeddings are untied, and the target
  // vocabulary is the generator's rows.
  const WeightShapes s = infer_shapes(without("tgt_embed."), src);
  CHECK_FALSE(s.tie_embeddings);
  CHECK(s.tgt_vocab == t.target.size());
  // A gradformer checkpoint is not imported again.
  const std::string ckpt = dir / "ckpt.safetensors";
  save_checkpoint(ckpt, *t.model, {}, t.info());
  CHECK_THROWS_MSG(read_weights(ckpt), CheckpointError,
                   ckpt +
                       ": already a gradformer checkpoint (metadata format 'gradformer-checkpoint-1'): use it as "
                       "it is, no import needed");
}

TEST_CASE("import: a layer index no model may have is a CheckpointError naming the tensor, not an overflow") {
  // Found by the checkpoint fuzz harness (UBSan: signed overflow in import_weights.cpp's depth(),
  // one more than the index 2^63 - 1); the reproducer replays in tests/fuzz/corpus/checkpoint.
  Translator t(NormPlacement::Post, false, Positions::Sinusoidal, Activation::ReLU, DType::Float32);
  for (const char* index : {"9223372036854775807", "18446744073709551616", "1024"}) {
    INFO(index);
    StateDict tensors = t.model->state_dict();
    const std::string name = std::string("encoder.layers.") + index + ".norm1.weight";
    tensors[name] = zeros({16});
    CHECK_THROWS_MSG(
        infer_shapes(tensors, "w.safetensors"), CheckpointError,
        "w.safetensors: tensor " + name + " has layer index " + index + ", but a model has at most 1024 layers");
  }
  // The largest index a model may have is read as a depth; what it describes is checked against
  // the file before anything is built: 1024 layers of d_model 16 over a file of 2.
  StateDict deep = t.model->state_dict();
  deep["encoder.layers.1023.norm1.weight"] = zeros({16});
  deep["decoder.layers.1023.norm1.weight"] = zeros({16});
  const WeightShapes s = infer_shapes(deep, "w.safetensors");
  CHECK(s.layers == 1024);
  const CheckpointInfo info = info_from_shapes(s, t.source, t.target, 4, 24, Activation::ReLU, true);
  const std::string refused =
      test::error_message<CheckpointError>([&] { import_weights(deep, info, "w.safetensors"); });
  INFO(refused);
  CHECK(refused.find("w.safetensors: the tensors are not those of an encoder-decoder with d_model 16, d_ff 24, 1024 "
                     "layers, post-LN:\n  missing: encoder.layers.2.self_attn.in_proj_weight [48, 16]") == 0);
}

TEST_CASE("import: vocabularies, a configuration and tensors that do not fit are CheckpointErrors listing them") {
  Translator t(NormPlacement::Post, false, Positions::Sinusoidal, Activation::ReLU, DType::Float32);
  const StateDict good = t.model->state_dict();
  const std::string src = "w.safetensors";
  const WeightShapes s = infer_shapes(good, src);
  const CheckpointInfo info = info_from_shapes(s, t.source, t.target, 4, 24, Activation::ReLU, true);

  CheckpointInfo small = info;
  small.source_tokenizer = Vocab();
  CHECK_THROWS_MSG(import_weights(good, small, src), CheckpointError,
                   message("w.safetensors: the source vocabulary has 4 tokens, but src_embed.weight has ",
                           t.source.size(), " rows (one per token)"));
  small = info;
  small.target_tokenizer = t.source;
  CHECK_THROWS_MSG(import_weights(good, small, src), CheckpointError,
                   message("w.safetensors: the target vocabulary has ", t.source.size(),
                           " tokens, but tgt_embed.weight has ", t.target.size(), " rows (one per token)"));
  CheckpointInfo heads = info;
  heads.config.heads = 3;
  CHECK_THROWS_MSG(import_weights(good, heads, src), CheckpointError,
                   "w.safetensors: the configuration is invalid: TransformerConfig: d_model 16 is not divisible by "
                   "heads 3");

  // One error lists a missing, an unexpected and a mis-shaped tensor together.
  StateDict broken = good;
  broken.erase("decoder.layers.1.norm3.weight");
  broken["optimizer.adam.m.0"] = zeros({3});
  broken["generator.bias"] = zeros({3});
  const std::string all = test::error_message<CheckpointError>([&] { import_weights(broken, info, src); });
  INFO(all);
  CHECK(all.find("w.safetensors: the tensors are not those of an encoder-decoder with d_model 16, d_ff 24, 2 layers, "
                 "post-LN:\n  ") == 0);
  CHECK(all.find("missing: decoder.layers.1.norm3.weight [16]") != std::string::npos);
  CHECK(all.find("unexpected: optimizer.adam.m.0 [3]") != std::string::npos);
  CHECK(all.find(message("mismatched: generator.bias is [", t.target.size(),
                         "] float32 by the configuration, [3] float32 in the file")) != std::string::npos);
  // Float64 tensors for a float32 model: each one listed, the list capped.
  StateDict wide;
  for (const auto& [name, tensor] : good) wide.emplace(name, tensor.to(DType::Float64));
  CheckpointInfo narrow = info;
  narrow.config.dtype = DType::Float32;
  const std::string capped = test::error_message<CheckpointError>([&] { import_weights(wide, narrow, src); });
  CHECK(capped.find("float32 by the configuration, [") != std::string::npos);
  CHECK(capped.find("\n  ... and ") != std::string::npos);

  // Tied embeddings share one vocabulary.
  Translator tied(NormPlacement::Pre, true, Positions::Sinusoidal, Activation::ReLU, DType::Float32);
  CheckpointInfo tied_info = info_from_shapes(infer_shapes(tied.model->state_dict(), src), tied.source, tied.source, 4,
                                              24, Activation::ReLU, true);
  std::vector<std::string> other_tokens;
  for (int64_t i = 4; i < tied.source.size(); ++i) other_tokens.push_back("other" + std::to_string(i));
  tied_info.target_tokenizer = Vocab::build({other_tokens});
  REQUIRE(tied_info.target_tokenizer.vocab().size() == tied.source.size());
  CHECK_THROWS_MSG(import_weights(tied.model->state_dict(), tied_info, src), CheckpointError,
                   "w.safetensors: tied embeddings (one matrix for both sides) need one vocabulary, but the source and "
                   "target vocabularies differ");
}

TEST_CASE("checkpoint: a file of tensors only is refused with what is missing and the import command") {
  TempDir dir("import-refusal");
  Translator t(NormPlacement::Post, false, Positions::Sinusoidal, Activation::ReLU, DType::Float32);
  const std::string bare = dir / "bare.safetensors", pt = dir / "pt.safetensors";
  save_safetensors(bare, t.model->state_dict(), {});
  save_safetensors(pt, t.model->state_dict(), {{"format", "pt"}});
  const std::string hint =
      "; a file of tensors only (a PyTorch state dict) has no configuration or vocabularies: bring an "
      "encoder-decoder's weights in with gradformer import --weights ";
  CHECK_THROWS_MSG(load_checkpoint(bare), CheckpointError,
                   bare + ": not a gradformer checkpoint: no metadata 'format'" + hint + bare +
                       " --src-vocab FILE --tgt-vocab FILE --heads H --source-eos yes|no --out FILE (see gradformer "
                       "import --help)");
  CHECK_THROWS_MSG(load_checkpoint(pt), CheckpointError,
                   pt + ": unknown checkpoint format 'pt' (expected gradformer-checkpoint-1)" + hint + pt);
}

TEST_CASE("checkpoint: data.source_eos is written, read back, and means true when absent (older checkpoints)") {
  TempDir dir("source-eos");
  Translator t(NormPlacement::Post, false, Positions::Sinusoidal, Activation::ReLU, DType::Float32);
  for (const bool eos : {true, false}) {
    CheckpointInfo info = t.info();
    info.source_eos = eos;
    const std::string path = dir / "ckpt.safetensors";
    save_checkpoint(path, *t.model, {}, info);
    CHECK(load_safetensors(path).metadata.at("data.source_eos") == (eos ? "true" : "false"));
    CHECK(load_checkpoint(path).info.source_eos == eos);
  }
  const std::string path = dir / "ckpt.safetensors";
  SafetensorsFile file = load_safetensors(path);
  file.metadata.erase("data.source_eos");
  const std::string old = dir / "old.safetensors";
  save_safetensors(old, file.tensors, file.metadata);
  CHECK(load_checkpoint(old).info.source_eos);
  file.metadata["data.source_eos"] = "yes";
  save_safetensors(old, file.tensors, file.metadata);
  CHECK_THROWS_MSG(load_checkpoint(old), CheckpointError, old + ": data.source_eos must be true or false, got 'yes'");
}

TEST_CASE("source_eos false: score, translate and trace feed the model the source's words without </s>") {
  Translator t(NormPlacement::Post, false, Positions::Sinusoidal, Activation::ReLU, DType::Float32);
  const std::vector<std::string> words = {"le", "chat", "noir", "."};
  const std::vector<int64_t> ids = {t.source.id("le"), t.source.id("chat"), t.source.id("noir"), t.source.id(".")};
  REQUIRE(std::find(ids.begin(), ids.end(), Vocab::unk) == ids.end());
  const Tensor bare = from_vector(ids, {1, 4});  // the words' ids, by hand: no </s>
  std::vector<int64_t> with_end = ids;
  with_end.push_back(Vocab::eos);
  const Tensor ended = from_vector(with_end, {1, 5});

  // Score: the batch's source is the words only, and the log-probability is the model's on that.
  const std::vector<EncodedPair> pair = encode_pairs({{words, {"the", "black", "cat", "."}}}, t.source, t.target);
  const Batch fed = collate(pair, {0}, /*source_eos=*/false);
  CHECK(test::bitwise_equal(fed.src, bare));
  const Batch by_hand = make_batch(bare, fed.tgt_in, fed.tgt_out);
  const double without = sentence_log_probs(*t.model, fed)[0];
  CHECK(test::same_bits({without}, {sentence_log_probs(*t.model, by_hand)[0]}));
  CHECK(without != sentence_log_probs(*t.model, collate(pair, {0}))[0]);

  // Translate: greedy decoding of the words only.
  const auto greedy = [&](const Tensor& src) {
    InferenceGuard inference(*t.model);
    const Hypothesis h = greedy_decode(*t.model, src, padding_mask(src, Vocab::pad), {.max_len = 2 * 4 + 10}).front();
    return t.target.decode(strip_specials(h.tokens));
  };
  REQUIRE(greedy(bare) != greedy(ended));  // so the check below can tell which one translate fed
  CHECK(translate(*t.model, words, t.source, t.target, 1, 0.6, /*source_eos=*/false) == greedy(bare));
  CHECK(translate(*t.model, words, t.source, t.target, 1, 0.6, /*source_eos=*/true) == greedy(ended));
  const TranslationReport report = evaluate_translation(*t.model, {{words, {"x"}}}, t.source, t.target, 1, 0.6, 64,
                                                        /*source_eos=*/false);
  CHECK(report.hypotheses.front() == greedy(bare));

  // Trace: the walk starts from the words' ids, and says there is no </s>.
  const SentenceTrace walked = trace_sentence(*t.model, t.source, t.target, words, {.source_eos = false});
  CHECK(walked.source_ids == ids);
  CHECK(walked.source_tokens == words);
  CHECK(trace_text(walked).find("no </s> after the source: the model was trained without it") != std::string::npos);
  CHECK(trace_sentence(*t.model, t.source, t.target, words).source_ids == with_end);
}
