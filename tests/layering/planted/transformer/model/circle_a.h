// Two files that include each other: the check must report the circle once.
#pragma once
#include "transformer/model/circle_b.h"
