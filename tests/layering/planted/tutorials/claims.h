// Beside the planted chapter, as tutorials/claims.h is beside the real ones: including it is allowed.
#pragma once
