// One training step of the copy-task model — forward, label-free cross-entropy over the targets,
// backward, Adam — as `gradformer train --task copy` takes it: N 2, h 8, d_ff 4 d, dropout 0.1,
// batches of 80 sequences of 10 tokens (9 target tokens each, 720 a step), at d_model 128 (the
// default) and 512 (where the matrix products dominate). Compare with a PyTorch model of the same
// architecture on the same machine, run right after this one.
//   tokens/s = 720 target tokens / time per step
//   GFLOP/s  = the step's floating-point operations (counted once, by the profiler, as the kernels
//              report them: the matmuls' 2 M N K and attention's) / time per step; against the
//              machine's peak (chapter 18's program measures it) this is the step's share of peak.
// BM_Gpt2SmallStep: one step of GPT-2 small (bench/gpt2_step.h) on 4 x 256 random tokens, the
// causal language-modelling loss, backward, Adam; its PyTorch twin is bench/torch_gpt2_step.py and
// its peak memory is printed by gpt2_step_memory. tokens/s = 1024 scored tokens / time per step.
// lora:0 trains every weight; lora:8 fine-tunes with LoRA (rank 8 on W^Q, W^K, W^V, W^O, the rest
// frozen): no gradient for the frozen weights and no Adam update of them (target: <= 0.7 x the time).
//   build/bench/bench_training_step --benchmark_filter=Gpt2 --benchmark_min_time=5
// BM_BlockStep/llama:0 and :1: one step of a decoder-only model of d 512, 4 layers, 8 heads, V 8192 on
// 4 x 256 random tokens with today's block (pre-LN LayerNorm, GELU, learned positions, d_ff 4 d) and
// with Llama's (RMSNorm, rope, SwiGLU with d_ff 8 d / 3 (1368), no biases): GFLOP/s, the flops the
// profiler counts over the step's time, says whether the Llama block is as fast per flop.
#include <benchmark/benchmark.h>

#include <vector>

#include "bench/gpt2_step.h"
#include "nn/all.h"
#include "nn/schedule.h"
#include "tensor/support/profiler.h"
#include "transformer/data/copy_task.h"
#include "transformer/evaluate/evaluate.h"
#include "transformer/model/encoder_decoder.h"
#include "transformer/train/task.h"

using namespace gradformer;

namespace {

void BM_TrainingStep(benchmark::State& state) {
  const int64_t d = state.range(0), batch_size = 80;
  TransformerConfig config{.src_vocab = 11,
                           .tgt_vocab = 11,
                           .d_model = d,
                           .d_ff = 4 * d,
                           .heads = 8,
                           .layers = 2,
                           .dropout = 0.1,
                           .max_len = 64};
  EncoderDecoder model(config, /*seed=*/1);
  model.train();
  Adam adam(model.parameters(), {.lr = 0, .beta1 = 0.9, .beta2 = 0.98, .eps = 1e-9});
  const NoamSchedule schedule(d, /*warmup=*/400, /*factor=*/0.5);
  Generator gen(1);
  std::vector<Batch> batches;
  for (int i = 0; i < 20; ++i) batches.push_back(copy_task_batch(batch_size, gen));  // made outside the timing
  int64_t step = 0, tokens = 0;
  auto train_step = [&] {
    const Batch& batch = batches[static_cast<size_t>(step % 20)];
    adam.set_lr(schedule.rate(++step));
    const Variable logits = teacher_forced_logits(model, batch);
    const Variable loss = cross_entropy(logits, batch.tgt_out, {.ignore_index = Vocab::pad});
    adam.zero_grad();
    loss.backward();
    adam.step();
    benchmark::DoNotOptimize(loss.item());
    return batch.ntokens;
  };
  profiler::start();  // one step outside the timing, to count its flops (every batch has the same shapes)
  train_step();
  int64_t flops_per_step = 0;
  for (const profiler::Event& e : profiler::stop().events) flops_per_step += e.flops;
  for (auto _ : state) tokens += train_step();
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
  state.counters["GFLOP/s"] =
      benchmark::Counter(1e-9 * static_cast<double>(flops_per_step) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_TrainingStep)->ArgName("d_model")->Arg(128)->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Gpt2SmallStep(benchmark::State& state) {
  const std::unique_ptr<DecoderOnly> trained = bench::gpt2_model(/*lora_rank=*/state.range(0));
  const DecoderOnly& model = *trained;
  Adam adam = bench::gpt2_adam(model);
  Generator gen(1);
  const LmBatch batch = bench::gpt2_random_batch(model.config().tgt_vocab, gen);
  bench::gpt2_train_step(model, adam, batch);  // warm-up: Adam's moments and the freed memory kept for reuse
  int64_t tokens = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(bench::gpt2_train_step(model, adam, batch));
    tokens += batch.ntokens;
  }
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
}
// lora 0: every weight trained; lora 8: LoRA's adapters of rank 8 on W^Q, W^K, W^V, W^O, the rest frozen.
BENCHMARK(BM_Gpt2SmallStep)->ArgName("lora")->Arg(0)->Arg(8)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_BlockStep(benchmark::State& state) {
  const bool llama = state.range(0) == 1;
  TransformerConfig c = llama ? llama_config(8192) : decoder_only_config(8192);
  c.d_model = 512, c.layers = 4, c.heads = 8, c.max_len = 256, c.dropout = 0.1;
  c.d_ff = llama ? 1368 : 2048;  // SwiGLU's three matrices at 8 d / 3 hold as many weights as two at 4 d
  if (!llama) c.activation = Activation::GELU, c.positions = Positions::Learned, c.tie_embeddings = true;
  if (llama) c.tie_embeddings = true;
  DecoderOnly model(c, /*seed=*/1);
  model.train();
  Adam adam = bench::gpt2_adam(model);
  Generator gen(1);
  const LmBatch batch = bench::gpt2_random_batch(c.tgt_vocab, gen);
  bench::gpt2_train_step(model, adam, batch);  // warm-up
  profiler::start();
  bench::gpt2_train_step(model, adam, batch);
  int64_t flops_per_step = 0;
  for (const profiler::Event& e : profiler::stop().events) flops_per_step += e.flops;
  for (auto _ : state) benchmark::DoNotOptimize(bench::gpt2_train_step(model, adam, batch));
  state.counters["GFLOP/s"] =
      benchmark::Counter(1e-9 * static_cast<double>(flops_per_step) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
  state.counters["GFLOP/step"] = 1e-9 * static_cast<double>(flops_per_step);
}
BENCHMARK(BM_BlockStep)->ArgName("llama")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
