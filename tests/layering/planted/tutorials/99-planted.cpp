// A planted violation: a chapter's program may not build on the tests' helpers. "claims.h" is
// beside it, as a chapter's is, and is allowed.
#include "claims.h"
#include "tests/catch.h"
