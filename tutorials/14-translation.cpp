// Chapter 14: translation. The companion program of tutorials/14-translation.md: every listing of
// the chapter is a piece of this file, and every output the chapter shows is what this program prints.
//
//   14-translation                          the corpus, BLEU, your own TSV, a checkpoint's names
//   14-translation --checkpoint MODEL       also translates with a model that `gradformer train
//                                           --task toy-translation` wrote, shows its cross-attention (and
//                                           draws it, 14-cross-attention.svg), and
//                                           averages the checkpoints the run kept (--keep-last)
//   14-translation --quick                  averages the checkpoints of a small run of its own
//
// It exits with a non-zero status if a claim the chapter makes does not hold.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "claims.h"
#include "nn/all.h"
#include "nn/safetensors.h"
#include "transformer/data/batch.h"
#include "transformer/data/batch_plan.h"
#include "transformer/data/toy_corpus.h"
#include "transformer/data/tsv.h"
#include "transformer/evaluate/bleu.h"
#include "transformer/evaluate/evaluate.h"
#include "transformer/inspect/svg.h"
#include "transformer/inspect/trace.h"
#include "transformer/store/average.h"
#include "transformer/store/checkpoint.h"
#include "transformer/train/trainer.h"

using namespace gradformer;
using namespace tutorial;
namespace fs = std::filesystem;

namespace {

fs::path scratch_dir() {
  const fs::path dir = fs::temp_directory_path() / ("gradformer-13-" + std::to_string(std::random_device{}()));
  fs::create_directories(dir);
  return dir;
}

// ---- 1. the toy corpus ------------------------------------------------------------------------------

void toy_corpus(const fs::path& dir) {
  section("the toy corpus");
  const ToyCorpus corpus = make_toy_corpus();  // 10,000 / 1,000 / 1,000 pairs, seed 2017
  for (size_t i = 0; i < 8; ++i)
    std::cout << join_words(corpus.train[i].source) << "  ->  " << join_words(corpus.train[i].target) << "\n";

  std::vector<std::vector<std::string>> sources, targets;
  size_t longest = 0, words = 0;
  for (const SentencePair& p : corpus.train) {
    sources.push_back(p.source), targets.push_back(p.target);
    longest = std::max({longest, p.source.size(), p.target.size()});
    words += p.source.size();
  }
  std::printf("train %zu, valid %zu, test %zu pairs; French vocabulary %lld, English %lld (with the 4 specials)\n",
              corpus.train.size(), corpus.valid.size(), corpus.test.size(),
              static_cast<long long>(Vocab::build(sources).size()),
              static_cast<long long>(Vocab::build(targets).size()));
  std::printf("%.1f French words a sentence on average, the longest side %zu tokens\n",
              static_cast<double>(words) / static_cast<double>(corpus.train.size()), longest);

  std::set<std::vector<std::string>> train_french(sources.begin(), sources.end());
  int shared = 0;
  for (const auto* split : {&corpus.valid, &corpus.test})
    for (const SentencePair& p : *split) shared += train_french.count(p.source) > 0;
  claim(shared == 0, "no French sentence of valid or test is in train");
  claim(corpus.train.size() >= 10000 && corpus.valid.size() == 1000 && corpus.test.size() == 1000, "the sizes");

  for (const std::string& path : write_toy_corpus(corpus, dir.string()))
    std::cout << "wrote " << fs::path(path).filename().string() << "\n";
}

// ---- 2. BLEU ------------------------------------------------------------------------------------------

void bleu() {
  section("BLEU");
  using Sentences = std::vector<std::vector<std::string>>;
  const Sentences hypotheses = {split_words("the black cat does not eat the apple ."), split_words("the black cat .")};
  const Sentences references = {split_words("the black cat does not eat any apples ."),
                                split_words("the black cat sleeps .")};
  // By hand, sentence 1: 7/9 words, 5/8 bigrams, 4/7 trigrams, 3/6 four-grams match; same length.
  const double by_hand = 100 * std::pow(7.0 / 9 * 5.0 / 8 * 4.0 / 7 * 3.0 / 6, 0.25);
  const BleuScore first = corpus_bleu(Sentences{hypotheses[0]}, Sentences{references[0]});
  const BleuScore second = corpus_bleu(Sentences{hypotheses[1]}, Sentences{references[1]});
  const BleuScore both = corpus_bleu(hypotheses, references);
  for (const auto& [name, s] :
       {std::pair{"sentence 1", first}, std::pair{"sentence 2", second}, std::pair{"corpus", both}})
    std::printf("%-10s  p1..p4 %lld/%lld %lld/%lld %lld/%lld %lld/%lld  c %lld r %lld  BP %.4f  BLEU %.2f\n", name,
                static_cast<long long>(s.matches[0]), static_cast<long long>(s.totals[0]),
                static_cast<long long>(s.matches[1]), static_cast<long long>(s.totals[1]),
                static_cast<long long>(s.matches[2]), static_cast<long long>(s.totals[2]),
                static_cast<long long>(s.matches[3]), static_cast<long long>(s.totals[3]),
                static_cast<long long>(s.hypothesis_length), static_cast<long long>(s.reference_length),
                s.brevity_penalty, s.bleu);
  std::printf("by hand, sentence 1: %.2f; the mean of the two sentence BLEUs: %.2f\n", by_hand,
              (first.bleu + second.bleu) / 2);
  claim(std::abs(first.bleu - by_hand) < 1e-9, "corpus_bleu of one sentence is the hand computation");
  claim(std::abs(second.brevity_penalty - std::exp(1 - 5.0 / 4)) < 1e-12, "a short hypothesis pays exp(1 - r/c)");
  claim(std::abs(both.bleu - (first.bleu + second.bleu) / 2) > 1, "corpus BLEU is not the mean of sentence BLEUs");
}

// ---- 3. your own data -------------------------------------------------------------------------------

void own_data(const fs::path& dir) {
  section("your own data");
  const std::string good = (dir / "mine.tsv").string(), bad = (dir / "broken.tsv").string();
  std::ofstream(good) << "le chat dort .\tthe cat sleeps .\nje mange une pomme .\ti eat an apple .\n";
  std::ofstream(bad) << "le chat dort .\tthe cat sleeps .\nje mange une pomme . i eat an apple .\n";
  const std::vector<SentencePair> pairs = read_tsv(good);
  std::cout << pairs.size() << " pairs; the second: " << join_words(pairs[1].source) << " | "
            << join_words(pairs[1].target) << "\n";
  try {
    read_tsv(bad);
  } catch (const DataError& e) {
    std::cout << fs::path(e.what()).filename().string() << "\n";  // the message starts with the path
    claim(std::string(e.what()).find("broken.tsv:2:") != std::string::npos, "the error names the file and the line");
  }
  try {
    read_tsv(good, /*max_tokens=*/4);  // the model's max_len - 1
  } catch (const DataError& e) {
    std::cout << fs::path(e.what()).filename().string() << "\n";
    claim(std::string(e.what()).find("mine.tsv:2:") != std::string::npos, "an over-long sentence names its line");
  }
}

// ---- 4. what a checkpoint holds --------------------------------------------------------------------

void checkpoint_names(const fs::path& dir) {
  section("a checkpoint's names");
  const Vocab vocab = Vocab::build({split_words("a b c")});
  TransformerConfig config{.src_vocab = vocab.size(),
                           .tgt_vocab = vocab.size(),
                           .d_model = 8,
                           .d_ff = 16,
                           .heads = 2,
                           .layers = 1,
                           .dropout = 0.1,
                           .max_len = 16};
  const EncoderDecoder model(config, /*seed=*/1);
  const std::string path = (dir / "tiny.safetensors").string();
  save_checkpoint(path, model, /*optimizer_state=*/{}, {config, vocab, vocab, {}});
  const SafetensorsFile file = load_safetensors(path);
  for (const auto& [name, tensor] : file.tensors) std::cout << name << " " << tensor.shape() << "\n";
  std::cout << "metadata:";
  for (const auto& [key, value] : file.metadata)
    if (key.rfind("vocab.", 0) != 0) std::cout << " " << key << "=" << value;
  std::cout << "\nvocab.source: " << file.metadata.at("vocab.source").size() << " bytes, one token a line\n";
  claim(file.tensors.count("encoder.layers.0.self_attn.in_proj_weight") == 1 &&
            file.tensors.at("encoder.layers.0.self_attn.in_proj_weight").shape() == Shape{24, 8},
        "PyTorch's stacked q, k, v projection [3d, d]");
  claim(file.tensors.count("encoder.norm.weight") == 0, "post-LN: no final norm");
}

// ---- 5. a trained model: translations and cross-attention -------------------------------------------

void trained(const std::string& path) {
  section("a trained model");
  LoadedCheckpoint loaded = load_checkpoint(path);
  EncoderDecoder& model = *loaded.model;
  const Vocab &fr = loaded.info.source_tokenizer.vocab(), &en = loaded.info.target_tokenizer.vocab();
  for (const char* sentence :
       {"le chat noir mange une pomme verte .", "les petites souris ne cherchent pas de gâteaux .",
        "nous regardons la grande maison blanche ."}) {
    const std::vector<std::string> source = split_words(sentence);
    std::cout << sentence << "\n  greedy: " << join_words(translate(model, source, fr, en))
              << "\n  beam 4: " << join_words(translate(model, source, fr, en, /*beam=*/4)) << "\n";
  }

  // Cross-attention of the last decoder layer, averaged over the heads: for each English token the
  // decoder predicts, the French token it looks at most.
  const std::vector<std::string> source = split_words("le chat noir mange une pomme verte .");
  const std::vector<std::string> target = translate(model, source, fr, en);
  const std::vector<EncodedPair> pair = encode_pairs({{source, target}}, fr, en);
  const Batch one = collate(pair, {0});
  DecoderLayer& last = (*model.decoder->layers)[model.decoder->layers->size() - 1];
  last.keep_attention = true;
  model.eval();
  {
    NoGradGuard no_grad;
    teacher_forced_logits(model, one);
  }
  const Tensor weights = mean(last.cross_attention.select(0, 0), {0});  // [H, T, S] -> [T, S]
  std::vector<std::string> source_labels = source;
  source_labels.push_back("</s>");
  std::vector<std::string> predicted = target;
  predicted.push_back("</s>");
  for (int64_t t = 0; t < weights.size(0); ++t) {
    const int64_t s = static_cast<int64_t>(argmax(weights.select(0, t), 0).item());
    std::printf("  predicting %-8s looks most at %-8s (%.2f)\n", predicted[static_cast<size_t>(t)].c_str(),
                source_labels[static_cast<size_t>(s)].c_str(), weights.at({t, s}));
  }
  Heatmap picture = heatmap_of(weights, predicted, source_labels, "cross-attention, last layer, mean of the heads");
  picture.row_axis = "English token predicted", picture.column_axis = "French token";
  picture.range = std::make_pair(0.0, 1.0);
  write_svg(output_path("14-cross-attention.svg"), heatmap_svg(picture));
  last.keep_attention = false;
  model.train();

  // One sentence through every stage: what `gradformer trace` prints, and its page.
  section("one sentence, all the way through");
  const SentenceTrace walk = trace_sentence(model, fr, en, split_words("je suis heureux ."));
  std::cout << trace_text(walk);
  std::ofstream(output_path("trace.html")) << trace_html(walk);
  claim(join_words(walk.translation) == "i am happy .", "je suis heureux . is translated as i am happy .");
}

// ---- 6. averaging the last checkpoints ----------------------------------------------------------

struct Scores {
  double loss = 0, bleu = 0, exact_match = 0;
};

// Test loss (teacher-forced cross-entropy per token, no smoothing), BLEU and exact match (greedy).
Scores score(const std::string& path, const std::vector<SentencePair>& test) {
  LoadedCheckpoint loaded = load_checkpoint(path);
  const Vocab &fr = loaded.info.source_tokenizer.vocab(), &en = loaded.info.target_tokenizer.vocab();
  const std::vector<EncodedPair> encoded = encode_pairs(test, fr, en);
  std::vector<Batch> batches;
  for (const auto& indices : plan_batches(encoded, {.max_sentences = 64}, nullptr))
    batches.push_back(collate(encoded, indices));
  const TranslationReport translated = evaluate_translation(*loaded.model, test, fr, en);
  return {teacher_forced_loss(*loaded.model, batches), translated.bleu.bleu, translated.exact_match};
}

std::string step_of(const std::string& kept_path) {  // "model-step-1700.safetensors" -> "1700"
  const std::string name = fs::path(kept_path).stem().string();
  return name.substr(name.rfind('-') + 1);
}

// The run's last checkpoint against the averages of its last K kept ones.
void averaging(const std::string& run_dir, const std::vector<SentencePair>& test, bool check_claims) {
  section("averaging the last checkpoints");
  const std::vector<std::string> kept = kept_checkpoints(run_dir);
  std::cout << kept.size() << " checkpoints kept, steps " << step_of(kept.front()) << " to " << step_of(kept.back())
            << "; scored on " << test.size() << " test pairs\n";
  std::printf("%-34s %9s %7s %12s\n", "model", "test loss", "BLEU", "exact match");
  double best_single = INFINITY, last_bleu = 0;
  for (const std::string& path : kept) {
    const Scores s = score(path, test);
    best_single = std::min(best_single, s.loss), last_bleu = s.bleu;
    std::printf("%-34s %9.4f %7.2f %11.1f%%\n", ("step " + step_of(path)).c_str(), s.loss, s.bleu, 100 * s.exact_match);
  }
  std::vector<size_t> sizes = {std::min<size_t>(5, kept.size())};  // the paper's 5, and all that were kept
  if (kept.size() > 5) sizes.push_back(kept.size());
  for (const size_t k : sizes) {
    const std::vector<std::string> chosen(kept.end() - static_cast<std::ptrdiff_t>(k), kept.end());
    const std::string out = (fs::path(run_dir) / ("average-last-" + std::to_string(k) + ".safetensors")).string();
    average_checkpoints(chosen, out);
    const Scores s = score(out, test);
    std::printf("%-34s %9.4f %7.2f %11.1f%%\n",
                ("average of steps " + step_of(chosen.front()) + "-" + step_of(chosen.back())).c_str(), s.loss, s.bleu,
                100 * s.exact_match);
    if (check_claims) {
      claim(s.loss < best_single, "the average's test loss is below every checkpoint it averages");
      claim(s.bleu >= last_bleu, "the average's BLEU is at least the last checkpoint's");
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string checkpoint;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--checkpoint") == 0 && i + 1 < argc) checkpoint = argv[++i];
    quick = quick || std::strcmp(argv[i], "--quick") == 0;
  }
  const fs::path dir = scratch_dir();
  toy_corpus(dir);
  bleu();
  own_data(dir);
  checkpoint_names(dir);
  if (!checkpoint.empty()) {
    trained(checkpoint);
    const std::string run_dir = fs::path(checkpoint).parent_path().string();
    if (!kept_checkpoints(run_dir.empty() ? "." : run_dir).empty())
      averaging(run_dir.empty() ? "." : run_dir, make_toy_corpus().test, /*check_claims=*/true);
  }
  if (quick) {  // a small run of our own: 1 layer at d_model 32, 120 steps, a checkpoint kept every 20
    TrainOptions small = default_train_options("toy-translation");
    small.d_model = 32, small.d_ff = 64, small.heads = 2, small.layers = 1;
    small.stop_after = 120, small.save_every = 20, small.keep_last = 5, small.eval_every = 0, small.quiet = true;
    small.out_dir = (dir / "small-run").string();
    train(small);
    const ToyCorpus corpus = make_toy_corpus();
    averaging(small.out_dir, {corpus.test.begin(), corpus.test.begin() + 200}, /*check_claims=*/false);
  }
  fs::remove_all(dir);
  std::cout << "\n" << (failures == 0 ? "all claims hold" : "SOME CLAIMS FAILED") << "\n";
  return failures == 0 ? 0 : 1;
}
