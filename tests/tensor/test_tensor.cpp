#include <cmath>
#include <memory>
#include <vector>

#include "catch.h"
#include "tensor/all.h"

using namespace gradformer;

TEST_CASE("creation functions fill the right values, shapes and dtypes") {
  const Tensor z = zeros({2, 3});
  CHECK(z.shape() == Shape{2, 3});
  CHECK(z.dtype() == DType::Float32);
  CHECK(z.to_vector<float>() == std::vector<float>(6, 0.0f));
  CHECK(ones({4}, DType::Float64).to_vector<double>() == std::vector<double>(4, 1.0));
  CHECK(full({2}, 2.5).to_vector<float>() == std::vector<float>{2.5f, 2.5f});
  CHECK(full({3}, 7, DType::Int64).to_vector<int64_t>() == std::vector<int64_t>{7, 7, 7});
  CHECK(scalar(3.0).dim() == 0);
  CHECK(scalar(3.0).item() == 3.0);
  CHECK(arange(5).to_vector<float>() == std::vector<float>{0, 1, 2, 3, 4});
  CHECK(arange(1.0, 2.0, 0.25, DType::Float64).to_vector<double>() == std::vector<double>{1.0, 1.25, 1.5, 1.75});
  CHECK(arange(3.0, 0.0, -1.0, DType::Int64).to_vector<int64_t>() == std::vector<int64_t>{3, 2, 1});
  CHECK(arange(0).numel() == 0);
  const Tensor t = tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(t.at({1, 2}) == 6.0);
  CHECK(t.at({-1, 0}) == 4.0);
  CHECK(from_vector(std::vector<int64_t>{4, 5}, {2}).dtype() == DType::Int64);
  CHECK(from_vector(std::vector<bool>{true, false}, {2}).to_vector<bool>() == std::vector<bool>{true, false});
}

TEST_CASE("a new tensor is contiguous with row-major strides and 64-byte aligned storage") {
  const Tensor t = zeros({2, 3, 4});
  CHECK(t.strides() == Shape{12, 4, 1});
  CHECK(t.offset() == 0);
  CHECK(t.is_contiguous());
  CHECK(reinterpret_cast<uintptr_t>(t.storage()->data()) % 64 == 0);
  CHECK(t.storage()->bytes() == 24 * 4);
  CHECK(Tensor::empty({3}, DType::Float64).storage()->bytes() == 24);
}

TEST_CASE("zeros are zeros at every size, also in memory that held other values before") {
  // calloc hands back a reused block cleared and a fresh one as the kernel's zero pages: both zeros.
  for (const int64_t n : {int64_t{1}, int64_t{1000}, int64_t{1} << 22}) {
    INFO(n);
    { full({n}, 7.0); }  // a block of this size, freed dirty, for zeros to reuse
    const Tensor z = zeros({n});
    CHECK(sum(mul(z, z)).item() == 0.0);
    CHECK(z.to_vector<float>() == std::vector<float>(static_cast<size_t>(n), 0.0f));
    CHECK(reinterpret_cast<uintptr_t>(z.storage()->data()) % 64 == 0);
  }
  CHECK(zeros({3}, DType::Int64).to_vector<int64_t>() == std::vector<int64_t>{0, 0, 0});
  CHECK_THROWS_MSG(zeros({-2}), ValueError, "zeros: negative size -2 in shape [-2]");
}

TEST_CASE("Tensor::from_storage views borrowed bytes in place and keeps their owner alive") {
  auto owner = std::make_shared<std::vector<float>>(std::vector<float>{1, 2, 3, 4, 5, 6});
  const std::weak_ptr<std::vector<float>> watch = owner;
  auto* bytes = reinterpret_cast<std::byte*>(owner->data());
  Tensor t = Tensor::from_storage(Storage::borrow(bytes, 6 * sizeof(float), owner), {2, 3}, DType::Float32);
  owner.reset();
  REQUIRE_FALSE(watch.expired());  // the tensor's storage holds the vector
  CHECK(t.data<float>() == reinterpret_cast<float*>(bytes));
  CHECK(t.at({1, 2}) == 6.0);
  t.mul_(2.0);  // writes land in the borrowed bytes
  CHECK(watch.lock()->at(5) == 12.0f);
  t = Tensor();
  CHECK(watch.expired());

  auto block = std::make_shared<std::vector<double>>(4, 0.0);
  auto* b = reinterpret_cast<std::byte*>(block->data());
  const auto storage = Storage::borrow(b, 4 * sizeof(double), block);
  CHECK(Tensor::from_storage(storage, {2}, DType::Float64).to_vector<double>() == std::vector<double>{0, 0});
  CHECK_THROWS_MSG(Tensor::from_storage(storage, {5}, DType::Float64), ValueError,
                   "from_storage: a float64 tensor of shape [5] needs more than the 32 bytes of the storage");
  CHECK_THROWS_MSG(Tensor::from_storage(Storage::borrow(b + 1, 8, block), {2}, DType::Float32), ValueError,
                   "from_storage: the storage's data is not aligned to float32's 4 bytes");
  CHECK_THROWS_MSG(Tensor::from_storage(nullptr, {1}, DType::Float32), ValueError, "from_storage: the storage is null");
  CHECK_THROWS_MSG(Tensor::from_storage(storage, {-1}, DType::Float32), ValueError, "from_storage: negative size -1");
}

TEST_CASE("copying a tensor handle shares the storage, clone does not") {
  Tensor a = zeros({3});
  Tensor b = a;  // a handle, like a Python reference
  b.fill_(1.0);
  CHECK(a.to_vector<float>() == std::vector<float>{1, 1, 1});
  Tensor c = a.clone();
  c.fill_(2.0);
  CHECK(a.to_vector<float>() == std::vector<float>{1, 1, 1});
  CHECK(!c.shares_storage_with(a));
}

TEST_CASE("conversions between dtypes round toward zero for integers and keep bools 0/1") {
  const Tensor t = tensor({-1.5, 0.0, 2.7}, {3});
  CHECK(t.to(DType::Int64).to_vector<int64_t>() == std::vector<int64_t>{-1, 0, 2});
  CHECK(t.to(DType::Bool).to_vector<bool>() == std::vector<bool>{true, false, true});
  CHECK(t.to(DType::Float64).to_vector<double>()[2] == Approx(2.7).epsilon(1e-7));
  CHECK(t.to(DType::Float32).shares_storage_with(t));  // same dtype: no copy
}

TEST_CASE("in-place updates change the tensor's own elements, with broadcasting") {
  Tensor p = tensor({1, 2, 3, 4}, {2, 2});
  p.add_(tensor({10, 20}, {2}));
  CHECK(p.to_vector<float>() == std::vector<float>{11, 22, 13, 24});
  p.add_(ones({2, 2}), -1.0);  // p -= 1
  CHECK(p.to_vector<float>() == std::vector<float>{10, 21, 12, 23});
  p.mul_(0.5);
  CHECK(p.to_vector<float>() == std::vector<float>{5, 10.5, 6, 11.5});
  p.sub_(tensor({5}, {1})).div_(tensor({2}, {1}));
  CHECK(p.to_vector<float>() == std::vector<float>{0, 2.75, 0.5, 3.25});
  p.add_(1.0);
  CHECK(p.at({0, 0}) == 1.0);
}

TEST_CASE("in-place updates through a view write into the viewed storage") {
  Tensor m = zeros({3, 3});
  m.select(1, 1).fill_(5.0);                 // middle column
  m.transpose(0, 1).select(0, 2).add_(1.0);  // last column, through a transpose
  CHECK(m.to_vector<float>() == std::vector<float>{0, 5, 1, 0, 5, 1, 0, 5, 1});
}

TEST_CASE("creation and element access errors are typed and say what is wrong") {
  CHECK_THROWS_MSG(zeros({2, -1}), ValueError, "negative size -1 in shape [2, -1]");
  CHECK_THROWS_MSG(tensor({1, 2, 3}, {2, 2}), ShapeError, "3 values do not fill shape [2, 2]");
  CHECK_THROWS_MSG(zeros({2}).item(), ShapeError, "item: expected one element, the tensor has shape [2]");
  CHECK_THROWS_MSG(zeros({2}).data<double>(), DTypeError, "data: tensor is float32, asked for float64");
  CHECK_THROWS_MSG(zeros({2, 3}).at({2, 0}), IndexError, "index 2 is out of range for dimension 0 of size 2");
  CHECK_THROWS_MSG(zeros({2, 3}).at({0}), IndexError, "1 indices for a tensor of shape [2, 3]");
  CHECK_THROWS_MSG(arange(0.0, 1.0, 0.0), ValueError, "non-zero step");
  CHECK_THROWS_MSG(Tensor().clone(), ValueError, "clone: the tensor is undefined");
  CHECK_THROWS_MSG(zeros({2}).add_(zeros({2}, DType::Float64)), DTypeError, "add_: dtypes differ: float32 and float64");
  CHECK_THROWS_MSG(zeros({2}).add_(zeros({3})), ShapeError,
                   "add_: cannot broadcast [3] into the destination's shape [2]");
  CHECK_THROWS_MSG(zeros({2}).add_(zeros({2, 2})), ShapeError,
                   "cannot broadcast [2, 2] into the destination's shape [2]");
}
