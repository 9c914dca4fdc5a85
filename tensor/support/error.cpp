#include "tensor/support/error.h"

#include "tensor/support/utf8.h"

namespace gradformer {

Error::Error(const std::string& what) : std::runtime_error(printable(what)) {}

}  // namespace gradformer
