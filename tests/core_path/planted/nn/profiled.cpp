#include "tensor/support/profiler.h"
void step() { profiler::Scope event("step", profiler::Phase::Optimizer); }
