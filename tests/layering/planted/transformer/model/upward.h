// A planted violation: the model may not know about vocabularies (transformer/data). The suite runs
// check_layering.cmake on this folder and expects it to fail, so the check itself cannot rot.
#pragma once
#include "transformer/data/vocab.h"
