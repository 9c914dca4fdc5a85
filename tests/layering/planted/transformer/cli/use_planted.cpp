// A command other than train including the training loop: the check must report it.
#include "transformer/train/trainer.h"
