#include "nn/safetensors.h"
#include "transformer/store/checkpoint.h"
