// Chapter 21: from a language model to an assistant. The companion program of
// tutorials/21-assistant.md: every listing of the chapter is a piece of this file (or of the library
// file it names), and every output the chapter shows is what this program (or a gradformer run the
// chapter lists) prints. It exits non-zero if a claim does not hold.
//
//   21-assistant           the chapter's run (a minute or two on two cores): a small language model
//                          of the book's text, then fine-tuned to answer, fully and with LoRA
//   21-assistant --quick   the same steps, each model trained for a few steps (seconds); its
//                          numbers are not the chapter's
//
// Nothing here needs a download: the model is one the program trains, on data the program writes.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/all.h"
#include "claims.h"
#include "nn/adam.h"
#include "nn/lora.h"
#include "tensor/support/memory.h"
#include "transformer/data/chat_template.h"
#include "transformer/evaluate/chat_session.h"
#include "transformer/inspect/diagram.h"
#include "transformer/inspect/svg.h"
#include "transformer/model/decoder_only.h"
#include "transformer/store/checkpoint.h"
#include "transformer/train/forward.h"
#include "transformer/train/sft.h"
#include "transformer/train/trainer.h"

#ifndef GRADFORMER_TUTORIAL_DATA
#define GRADFORMER_TUTORIAL_DATA "tutorials/data"
#endif

using namespace gradformer;
using namespace tutorial;

namespace {

long long ll(int64_t v) { return static_cast<long long>(v); }

// A text for printing: each line end written as \n, so a template's output fits on one line.
std::string shown(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '\n' ? std::string("\\n") : std::string(1, c);
  return out;
}

// ---- 1. a conversation as one sequence ------------------------------------------------------------

const std::vector<Message> kExample = {{Role::User, "Reverse: sun dog"}, {Role::Assistant, "dog sun"}};

// One rendered conversation's tokens in rows, the ones the loss scores filled (21-scored-tokens.svg).
void draw_scored_tokens(const Tokenizer& tokenizer, const ChatTokens& tokens, const std::string& path) {
  const int per_row = 16;
  const double cell = 56, top = 60;
  const int rows = static_cast<int>((tokens.ids.size() + per_row - 1) / per_row);
  Diagram d(per_row * cell + 40, top + rows * 50 + 70);
  d.text(20 + per_row * cell / 2, 28, "One conversation as the model reads it (chatml, bytes): what the loss scores",
         {.size = 16});
  for (size_t i = 0; i < tokens.ids.size(); ++i) {
    const double x = 20 + static_cast<double>(i % per_row) * cell, y = top + static_cast<double>(i / per_row) * 50;
    std::string label = tokenizer.decode({tokens.ids[i]});
    const std::map<std::string, std::string> shorter = {
        {"<|im_start|>", "start"}, {"<|im_end|>", "end"}, {"\n", "\\n"}, {" ", "space"}};
    if (shorter.contains(label)) label = shorter.at(label);
    d.rect(x, y, cell - 4, 34, tokens.scored[i] ? "#f0a35e" : "#eeeeee", "#888", 4);
    d.text(x + (cell - 4) / 2, y + 22, label, {.size = label.size() > 2 ? 11.0 : 15.0, .bold = tokens.scored[i]});
  }
  const double y = top + rows * 50 + 14;
  d.text(20, y, "start, end: the special tokens <|im_start|> and <|im_end|>, one id each.",
         {.size = 13, .anchor = "start"});
  d.text(20, y + 22,
         "Orange: scored, each predicted from every token before it: the answer and its <|im_end|>. Grey: read, "
         "never predicted.",
         {.size = 13, .anchor = "start"});
  write_svg(path, d.svg());
}

void one_sequence() {
  section("a conversation as one sequence");
  for (const ChatTemplate t : {ChatTemplate::ChatML, ChatTemplate::Llama3})
    std::printf("%-7s %s\n", chat_template_name(t), shown(chat_text(render_chat(t, kExample))).c_str());
  const Tokenizer tokenizer = Tokenizer::bytes().with_added(chat_template_specials(ChatTemplate::ChatML));
  const ChatTokens tokens = encode_chat(tokenizer, render_chat(ChatTemplate::ChatML, kExample));
  std::vector<int64_t> scored;
  for (size_t i = 0; i < tokens.ids.size(); ++i)
    if (tokens.scored[i]) scored.push_back(tokens.ids[i]);
  std::printf("bytes and chatml: %zu tokens, %zu scored: %s\n", tokens.ids.size(), scored.size(),
              shown(tokenizer.decode(scored)).c_str());
  claim(scored.size() == std::string("dog sun").size() + 1, "the answer's tokens and its end-of-turn are scored");
  draw_scored_tokens(tokenizer, tokens, output_path("21-scored-tokens.svg"));
}

// ---- 2. LoRA: its gradient and its count -----------------------------------------------------------

double largest(const Tensor& t) {
  double m = 0;
  for (double v : t.to(DType::Float64).contiguous().to_vector<double>()) m = std::max(m, std::abs(v));
  return m;
}

void lora_gradient() {
  section("LoRA's gradient");
  Generator gen(3);
  Linear lin(6, 5, gen, /*bias=*/true, DType::Float64);
  lin.add_lora(/*rank=*/2, /*alpha=*/4, &gen);
  const Variable x(randn({3, 6}, gen, DType::Float64));
  Tensor B = lin.lora->B.value();               // a handle to its storage
  B.copy_(randn({5, 2}, gen, DType::Float64));  // B = 0 would make dL/dA = 0: check both
  const GradcheckResult check = gradcheck([&] { return lin.forward(x); }, lin.parameters());
  std::printf("gradcheck of W, b, A and B (float64, central differences): %s, %zu elements\n",
              check.ok ? "passes" : "FAILS", check.elements_checked);
  claim(check.ok, "LoRA's gradients are the central differences'");

  lin.lora->reset_parameters(gen);  // as training starts: A drawn, B = 0
  lin.zero_grad();
  const Variable h = lin.forward(x);
  sum(h * h).backward();
  std::printf("at the first step, B = 0: largest |dL/dA| %.1f, largest |dL/dB| %.3f\n", largest(lin.lora->A.grad()),
              largest(lin.lora->B.grad()));
  claim(largest(lin.lora->A.grad()) == 0 && largest(lin.lora->B.grad()) > 0, "B = 0 gives A no gradient, B one");
}

void lora_count() {
  section("what LoRA trains in GPT-2 small");
  TransformerConfig c = gpt2_small_config();
  const int64_t all = decoder_only_parameter_count(c);
  c.block.lora = {.rank = 8, .alpha = 8};  // q, k, v, o: the targets' defaults
  const int64_t adapters = c.layers * layer_parameter_count(c.layer(), false).lora;
  std::printf("GPT-2 small: %lld parameters; LoRA rank 8 on W^Q, W^K, W^V, W^O of its %lld layers: %lld (%.2f%%)\n",
              ll(all), ll(c.layers), ll(adapters), 100.0 * static_cast<double>(adapters) / static_cast<double>(all));
  claim(adapters == c.layers * 4 * 8 * (768 + 768), "r (in + out) per adapter");
  const int64_t embedding = c.tgt_vocab * c.d_model;  // tied: the output layer is the same matrix
  std::printf("its embedding, %lld x %lld: %lld (%.1f%%)\n", ll(c.tgt_vocab), ll(c.d_model), ll(embedding),
              100.0 * static_cast<double>(embedding) / static_cast<double>(all));
}

// ---- 3. the data and the model to fine-tune -------------------------------------------------------

// The words of the book's text written in lower case, of 2 to 6 letters, each once, in order.
std::vector<std::string> book_words() {
  std::ifstream in(GRADFORMER_TUTORIAL_DATA "/chapters.txt");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::set<std::string> words;
  const std::regex word("[A-Za-z]+");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), word); it != std::sregex_iterator(); ++it) {
    const std::string w = it->str();
    if (w.size() >= 2 && w.size() <= 6 && std::all_of(w.begin(), w.end(), [](char c) { return c >= 'a' && c <= 'z'; }))
      words.insert(w);
  }
  return {words.begin(), words.end()};
}

// An instruction "Reverse: w1 w2 [w3]" and its answer, "[w3] w2 w1", as a user's and an assistant's turn.
std::vector<Message> reversal(std::mt19937_64& draw) {
  static const std::vector<std::string> words = book_words();
  if (words.empty()) throw std::runtime_error("no words in " GRADFORMER_TUTORIAL_DATA "/chapters.txt");
  std::vector<std::string> picked(2 + draw() % 2);
  for (std::string& w : picked) w = words[draw() % words.size()];
  std::string asked = "Reverse:", answer;
  for (size_t j = 0; j < picked.size(); ++j)
    asked += " " + picked[j], answer += (j ? " " : "") + picked[picked.size() - 1 - j];
  return {{Role::User, asked}, {Role::Assistant, answer}};
}

// `n` conversations of reversals as JSON Lines: one turn each in the instruction form, or with
// `two_turns` two each in the messages form.
void write_reversals(const std::string& path, int64_t n, uint64_t seed, bool two_turns) {
  std::mt19937_64 draw(seed);
  std::ofstream out(path);
  for (int64_t i = 0; i < n; ++i) {
    std::vector<Message> turns = reversal(draw);
    if (!two_turns) {
      out << "{\"instruction\": \"" << turns[0].content << "\", \"output\": \"" << turns[1].content << "\"}\n";
      continue;
    }
    const std::vector<Message> second = reversal(draw);
    turns.insert(turns.end(), second.begin(), second.end());
    out << "{\"messages\": [";
    for (size_t j = 0; j < turns.size(); ++j)
      out << (j ? ", " : "") << "{\"role\": \"" << role_name(turns[j].role) << "\", \"content\": \"" << turns[j].content
          << "\"}";
    out << "]}\n";
  }
}

// A byte-level language model of the book's text, as in chapter 20: d 64, 2 blocks, 4 heads, trained on
// blocks of 64 bytes; it reads up to 256, room for a conversation of a few turns.
TrainReport train_base(bool quick) {
  TrainOptions o = default_train_options("text", Architecture::DecoderOnly);
  o.text_path = GRADFORMER_TUTORIAL_DATA "/chapters.txt", o.tokenizer = "bytes", o.context = 64, o.max_len = 256;
  o.d_model = 64, o.d_ff = 256, o.heads = 4, o.layers = 2, o.batch_size = 32;
  o.steps = quick ? 10 : 600, o.warmup = 100;
  o.eval_every = 0, o.log_every = 1000, o.quiet = true, o.out_dir = "runs/base";
  return train(o);
}

// ---- 4. fine-tuning, fully and with LoRA ------------------------------------------------------------

struct Tuning {
  const char* name;
  int64_t lora_rank;  // 0: every weight
  double lr;
  const char* data = "runs/reverse-train.jsonl";
};

TrainOptions sft_options(const Tuning& t, bool quick) {
  TrainOptions o = default_train_options("sft", Architecture::DecoderOnly);
  o.init_path = "runs/base/model.safetensors", o.data_path = t.data;
  o.test_path = "runs/reverse-test.jsonl";
  o.batch_size = 16, o.epochs = 6, o.lr = t.lr, o.seed = 1;
  if (quick) o.steps = 10;
  o.block.lora = {.rank = t.lora_rank, .alpha = static_cast<double>(t.lora_rank)};
  o.eval_every = 0, o.log_every = 1000, o.quiet = true;
  o.out_dir = std::string("runs/sft-") + t.name;
  return o;
}

std::map<std::string, AnswerCheck> fine_tuning(bool quick) {
  section("fine-tuning to reverse words: every weight, or LoRA");
  const std::vector<Tuning> runs = {
      {"full", 0, 0.5},     {"lora-1", 1, 1.0},          {"lora-4", 4, 1.0},
      {"lora-16", 16, 1.0}, {"lora-16-lr-0.5", 16, 0.5}, {"chat", 0, 0.5, "runs/reverse-chat.jsonl"}};
  std::printf("  run              turns     trained   of all   ms/step   valid loss   ended   exact (of 100)\n");
  std::map<std::string, AnswerCheck> checks;
  std::map<std::string, double> losses;
  for (const Tuning& t : runs) {
    const TrainReport r = train(sft_options(t, quick));
    LoadedDecoderOnly tuned = load_decoder_only_checkpoint(r.checkpoint_path);
    const ChatTemplate chat = chat_template_named(tuned.info.state.at("chat.template"));
    const AnswerCheck a = check_answers(*tuned.model, tuned.info.target_tokenizer, chat,
                                        read_conversations("runs/reverse-test.jsonl"), 100);
    const int64_t trained = t.lora_rank > 0 ? freeze_all_but_adapters(*tuned.model) : tuned.model->parameter_count();
    std::printf("  %-16s %5d   %9lld   %5.1f%%   %7.2f   %10.4f   %5lld   %5lld\n", t.name,
                std::strstr(t.data, "chat") ? 2 : 1, ll(trained),
                100.0 * static_cast<double>(trained) / static_cast<double>(tuned.model->parameter_count()),
                1e3 * r.train_seconds / static_cast<double>(r.steps), r.valid_loss, ll(a.ended), ll(a.exact));
    checks[t.name] = a, losses[t.name] = r.valid_loss;
  }
  if (!quick) {
    claim(checks["full"].exact > 40, "fine-tuned fully, the model reverses many held-out instructions");
    claim(checks["lora-16"].exact > checks["lora-4"].exact && checks["lora-4"].exact >= checks["lora-1"].exact,
          "a wider adapter learns more");
    claim(losses["lora-16"] < losses["lora-16-lr-0.5"], "at full fine-tuning's rate, LoRA learns less");
  }
  return checks;
}

const char* const kTest = "runs/reverse-test.jsonl";

// The model of the book's text asked the same questions before fine-tuning, the template's tokens
// added to it as fine-tuning adds them (their rows the mean row).
AnswerCheck answers_before() {
  const LoadedDecoderOnly base = load_decoder_only_checkpoint("runs/base/model.safetensors");
  const ChatModel chat = with_chat_tokens(*base.model, base.info.target_tokenizer, ChatTemplate::ChatML, /*seed=*/1);
  return check_answers(*chat.model, chat.tokenizer, ChatTemplate::ChatML, read_conversations(kTest), 100);
}

std::string cut(const std::string& text, size_t most) {
  const std::string s = shown(text);
  return s.size() <= most ? s : s.substr(0, most - 3) + "...";
}

void before_and_after(const std::map<std::string, AnswerCheck>& checks, bool quick) {
  section("held-out questions, before and after");
  const AnswerCheck before = answers_before();
  const std::vector<Conversation> asked = read_conversations(kTest);
  std::printf("  %-26s %-22s %-20s %-20s\n", "asked", "before", "full", "lora-16");
  for (size_t i = 0; i < 5; ++i)
    std::printf("  %-26s %-22s %-20s %-20s\n", asked[i].messages[0].content.c_str(), cut(before.answers[i], 20).c_str(),
                cut(checks.at("full").answers[i], 20).c_str(), cut(checks.at("lora-16").answers[i], 20).c_str());
  std::printf("before: %lld of %lld answers end with <|im_end|>, %lld exact\n", ll(before.ended),
              ll(before.conversations), ll(before.exact));
  if (!quick) claim(before.exact == 0, "the language model does not answer before fine-tuning");
}

// ---- 5. memory: GPT-2 small, a full step against a LoRA step ---------------------------------------

// One process per measurement (a process's peak memory only grows): this program, run again with
// --step-memory RANK BATCH, builds GPT-2 small (LoRA rank RANK beside W^Q, W^K, W^V, W^O, or every
// weight trained for 0), takes two steps of BATCH sequences of 256 random tokens, and prints its peak
// resident memory in MiB and the second step's milliseconds.
int step_memory(int64_t rank, int64_t batch, bool quick) {
  TransformerConfig c = gpt2_small_config();
  if (quick) c.layers = 1, c.src_vocab = c.tgt_vocab = 1024;  // seconds, not the chapter's numbers
  if (rank > 0) c.block.lora = {.rank = rank, .alpha = static_cast<double>(rank)};
  DecoderOnly model(c, /*seed=*/1);
  if (rank > 0) freeze_all_but_lora(model);
  std::vector<Variable> trained;
  for (const Variable& p : model.parameters())
    if (p.requires_grad()) trained.push_back(p);
  Adam adam(trained, {.lr = 1e-4, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8});
  Generator gen(2);
  const Tensor ids = randint({batch, 257}, 1, c.tgt_vocab, gen);  // id 0, <pad>, never: every target scored
  std::vector<LmSequence> sequences;
  std::vector<int64_t> indices;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t* row = ids.data<int64_t>() + b * 257;
    sequences.push_back(scored_from({row, row + 257})), indices.push_back(b);
  }
  const LmBatch lm = make_lm_batch(sequences, indices);
  double ms = 0;
  for (int step = 0; step < 2; ++step) {
    const auto start = std::chrono::steady_clock::now();
    adam.zero_grad();
    const Variable loss = lm_loss(model, lm);
    loss.backward();
    adam.step();
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf("%.1f %.1f\n", static_cast<double>(usage.ru_maxrss) / 1024.0, ms);  // ru_maxrss: KiB on Linux
  return 0;
}

void memory(bool quick) {
  section("GPT-2 small: a full step and a LoRA step, peak resident memory");
#if !defined(__linux__)
  std::printf("measured on Linux only (this program finds itself through /proc/self/exe)\n");
  (void)quick;
  return;
#endif
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");  // this program (Linux)
  std::printf("  batch   full MiB   LoRA MiB   ratio   full ms   LoRA ms\n");
  for (const int64_t batch : {1, 4}) {
    double mib[2] = {0, 0}, ms[2] = {0, 0};
    for (const int rank : {0, 8}) {
      const std::string command = "'" + self.string() + "' --step-memory " + std::to_string(rank) + " " +
                                  std::to_string(batch) + (quick ? " --quick" : "");
      FILE* child = popen(command.c_str(), "r");
      const int i = rank > 0;
      const bool read = child && std::fscanf(child, "%lf %lf", &mib[i], &ms[i]) == 2;
      const bool ended = child && pclose(child) == 0;
      claim(read && ended, "the measuring process ran");
    }
    std::printf("  %5lld   %8.0f   %8.0f   %5.2f   %7.0f   %7.0f\n", ll(batch), mib[0], mib[1], mib[1] / mib[0], ms[0],
                ms[1]);
  }
}

// ---- 6. a conversation -----------------------------------------------------------------------------

void conversation() {
  section("a conversation, its cache kept across turns");
  for (const char* run : {"full", "chat"}) {
    const LoadedDecoderOnly tuned = load_decoder_only_checkpoint(std::string("runs/sft-") + run + "/model.safetensors");
    ChatSession session(*tuned.model, tuned.info.target_tokenizer, ChatTemplate::ChatML);
    Generator gen(1);
    const SamplingOptions greedy{.max_tokens = 40, .temperature = 0};
    std::printf("%s:\n", run);
    std::optional<ChatSession::Turn> last;  // the turn before, if the conversation has one
    for (const char* text : {"Reverse: tensor and graph", "Reverse: cat dog", "/reset", "Reverse: one more time"}) {
      if (std::strcmp(text, "/reset") == 0) {
        session.reset(), last.reset();
        std::printf("  /reset\n");
        continue;
      }
      const std::optional<ChatSession::Turn> turn = session.answer(text, greedy, gen);
      claim(turn.has_value(), "the turn fits the model's context");
      std::printf("  user: %-26s assistant: %-22s read %2lld tokens, %2lld cached\n", text,
                  cut(turn->answer, 22).c_str(), ll(turn->read), ll(turn->cached));
      // The cache holds every token before this turn's: the last turn's, and all it drew but the
      // last one (its end-of-turn, read first in this turn).
      const int64_t before = last ? last->cached + last->read + static_cast<int64_t>(last->written.size()) - 1 : 0;
      claim(turn->cached == before, "a turn reads only what the cache does not hold");
      last = turn;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  keep_freed_memory();  // as the gradformer program does: a step's freed memory kept for the next
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--step-memory") == 0 && i + 2 < argc) {
      const int64_t rank = std::atoll(argv[i + 1]), batch = std::atoll(argv[i + 2]);
      return step_memory(rank, batch, argc > i + 3 && std::strcmp(argv[i + 3], "--quick") == 0);
    } else {
      std::fprintf(stderr, "usage: 21-assistant [--quick]\n");
      return 2;
    }
  }
  one_sequence();
  lora_gradient();
  lora_count();
  section("the model to fine-tune, and the data");
  const TrainReport base = train_base(quick);
  std::printf("a byte-level model of the book's text: %lld steps, validation loss %.4f\n", ll(base.steps),
              base.valid_loss);
  write_reversals(output_path("reverse-train.jsonl"), quick ? 200 : 3000, 1, /*two_turns=*/false);
  write_reversals(output_path("reverse-chat.jsonl"), quick ? 100 : 1500, 3, /*two_turns=*/true);
  write_reversals(output_path("reverse-test.jsonl"), 100, 2, /*two_turns=*/false);
  std::printf("%s\n", read_conversations(kTest)[0].messages[0].content.c_str());
  const std::map<std::string, AnswerCheck> checks = fine_tuning(quick);
  before_and_after(checks, quick);
  conversation();
  memory(quick);
  return failures == 0 ? 0 : 1;
}
