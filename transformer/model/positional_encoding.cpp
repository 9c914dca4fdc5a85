#include "transformer/model/positional_encoding.h"

#include <cmath>
#include <vector>

#include "autograd/all.h"
#include "nn/init.h"

namespace gradformer {

// PE(pos, 2i) = sin(pos / 10000^(2i/d)),  PE(pos, 2i+1) = cos(pos / 10000^(2i/d))
Tensor sinusoidal_encoding(int64_t max_len, int64_t d_model, DType dtype) {
  if (max_len <= 0 || d_model <= 0 || d_model % 2 != 0)
    throw ValueError(
        message("sinusoidal_encoding: max_len must be positive and d_model positive and even, got max_len ", max_len,
                ", d_model ", d_model));
  std::vector<double> pe(static_cast<size_t>(max_len * d_model));
  for (int64_t pos = 0; pos < max_len; ++pos)
    for (int64_t i = 0; 2 * i < d_model; ++i) {
      const double angle =
          static_cast<double>(pos) / std::pow(10000.0, static_cast<double>(2 * i) / static_cast<double>(d_model));
      pe[static_cast<size_t>(pos * d_model + 2 * i)] = std::sin(angle);
      pe[static_cast<size_t>(pos * d_model + 2 * i + 1)] = std::cos(angle);
    }
  return from_vector(pe, {max_len, d_model}).to(dtype);
}

// sin(p + a) = sin p cos a + cos p sin a,  cos(p + a) = cos p cos a - sin p sin a
Tensor positional_rotation(int64_t k, int64_t d_model, DType dtype) {
  if (d_model <= 0 || d_model % 2 != 0)
    throw ValueError(message("positional_rotation: d_model must be positive and even, got ", d_model));
  std::vector<double> r(static_cast<size_t>(d_model * d_model), 0.0);
  for (int64_t i = 0; 2 * i < d_model; ++i) {
    const double a =
        static_cast<double>(k) / std::pow(10000.0, static_cast<double>(2 * i) / static_cast<double>(d_model));
    const int64_t s = 2 * i, c = 2 * i + 1;
    r[static_cast<size_t>(s * d_model + s)] = std::cos(a);
    r[static_cast<size_t>(s * d_model + c)] = std::sin(a);
    r[static_cast<size_t>(c * d_model + s)] = -std::sin(a);
    r[static_cast<size_t>(c * d_model + c)] = std::cos(a);
  }
  return from_vector(r, {d_model, d_model}).to(dtype);
}

PositionalEncoding::PositionalEncoding(int64_t d_model, int64_t max_len, double dropout_p,
                                       std::shared_ptr<Generator> dropout_gen, DType dtype, Positions positions)
    : d_model_(d_model), max_len_(max_len), positions_(positions) {
  if (positions == Positions::Learned) {
    if (max_len <= 0 || d_model <= 0)
      throw ValueError(message("PositionalEncoding: max_len and d_model must be positive, got max_len ", max_len,
                               ", d_model ", d_model));
    weight = register_parameter("weight", zeros({max_len, d_model}, dtype));
  } else if (positions == Positions::Sinusoidal) {
    table_ = sinusoidal_encoding(max_len, d_model, dtype);
  }
  dropout_ = register_module("dropout", std::make_shared<Dropout>(dropout_p, std::move(dropout_gen)));
}

void PositionalEncoding::reset_parameters(Generator& init_gen) {
  if (learned()) normal_(weight, 0.0, 0.02, init_gen);
}

// x: [B, T, d] + PE[start : start + T] (broadcast over the batch) -> dropout
Variable PositionalEncoding::forward(const Variable& x, int64_t start) const {
  if (x.dim() != 3 || x.size(2) != d_model_)
    throw ShapeError(message("PositionalEncoding: input must be [B, T, ", d_model_, "], got ", x.shape()));
  if (start < 0 || start + x.size(1) > max_len())
    throw ShapeError(message("PositionalEncoding: positions ", start, " to ", start + x.size(1) - 1,
                             " exceed the maximum length ", max_len(), " (input ", x.shape(), ")"));
  if (rotary()) return dropout_->forward(x);  // the attention turns queries and keys instead
  // [T, d]: rows start .. start + T - 1 of the table, or of the learned matrix (its gradient flows back)
  const Variable pe = learned() ? narrow(weight, 0, start, x.size(1)) : Variable(table_.narrow(0, start, x.size(1)));
  return dropout_->forward(x + pe);
}

}  // namespace gradformer
