#include "nn/layers.h"

#include "autograd/all.h"
#include "nn/functional.h"

namespace gradformer {

Linear::Linear(int64_t in_features, int64_t out_features, SkipInit, bool with_bias, DType dtype) {
  if (in_features <= 0 || out_features <= 0)
    throw ValueError(message("Linear: sizes must be positive, got in ", in_features, ", out ", out_features));
  weight = register_parameter("weight", zeros({out_features, in_features}, dtype));
  if (with_bias) bias = register_parameter("bias", zeros({out_features}, dtype));
}

Linear::Linear(int64_t in_features, int64_t out_features, Generator& gen, bool with_bias, DType dtype)
    : Linear(in_features, out_features, skip_init, with_bias, dtype) {
  reset_parameters(gen);
}

void Linear::reset_parameters(Generator& gen) {
  const int64_t in = weight.size(1);
  linear_default_(weight, in, gen);
  if (bias.defined()) linear_default_(bias, in, gen);
  if (lora) lora->reset_parameters(gen);
}

Variable Linear::forward(const Variable& x) const {
  const Variable y = linear(x, weight, bias);
  return lora ? y + lora->forward(x) : y;
}

void Linear::add_lora(int64_t rank, double alpha, Generator* gen) {
  if (lora) throw ValueError("Linear: it has a LoRA update already");
  const int64_t in = weight.size(1), out = weight.size(0);
  const DType dtype = weight.value().dtype();
  lora = register_module("lora", gen ? std::make_shared<LoraAdapter>(in, out, rank, alpha, *gen, dtype)
                                     : std::make_shared<LoraAdapter>(in, out, rank, alpha, skip_init, dtype));
}

Embedding::Embedding(int64_t num_embeddings, int64_t dim, SkipInit, DType dtype) {
  if (num_embeddings <= 0 || dim <= 0)
    throw ValueError(message("Embedding: sizes must be positive, got ", num_embeddings, " x ", dim));
  weight = register_parameter("weight", zeros({num_embeddings, dim}, dtype));
}

Embedding::Embedding(int64_t num_embeddings, int64_t dim, Generator& gen, DType dtype)
    : Embedding(num_embeddings, dim, skip_init, dtype) {
  reset_parameters(gen);
}

void Embedding::reset_parameters(Generator& gen) { normal_(weight, 0.0, 1.0, gen); }

Variable Embedding::forward(const Tensor& ids) const { return embedding(weight, ids); }

LayerNorm::LayerNorm(int64_t dim, double eps_, DType dtype) {
  eps = eps_;
  if (dim <= 0) throw ValueError(message("LayerNorm: size must be positive, got ", dim));
  weight = register_parameter("weight", ones({dim}, dtype));
  bias = register_parameter("bias", zeros({dim}, dtype));
}

void LayerNorm::reset_parameters() {
  fill_(weight, 1.0);
  fill_(bias, 0.0);
}

Variable LayerNorm::forward(const Variable& x) const { return layer_norm(x, weight, bias, eps); }

RMSNorm::RMSNorm(int64_t dim, double eps_, DType dtype) {
  eps = eps_;
  if (dim <= 0) throw ValueError(message("RMSNorm: size must be positive, got ", dim));
  weight = register_parameter("weight", ones({dim}, dtype));
}

void RMSNorm::reset_parameters() { fill_(weight, 1.0); }

Variable RMSNorm::forward(const Variable& x) const { return rms_norm(x, weight, eps); }

Dropout::Dropout(double p_, std::shared_ptr<Generator> gen) : p(p_), gen_(std::move(gen)) {
  if (!(p >= 0 && p < 1)) throw ValueError(message("Dropout: p must be in [0, 1), got ", p));
  if (!gen_) throw ValueError("Dropout: needs a generator");
}

Variable Dropout::forward(const Variable& x) const {
  if (!is_training() || p == 0) return x;
  return dropout(x, p, *gen_, true);
}

Variable ReLU::forward(const Variable& x) const { return relu(x); }

}  // namespace gradformer
