// train's own files may include the training loop: the check must not report this.
#include "transformer/train/trainer.h"
