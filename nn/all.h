// Everything in the nn layer (and the layers under it): #include "nn/all.h"
#pragma once

#include "autograd/all.h"
#include "nn/adam.h"
#include "nn/clip.h"
#include "nn/functional.h"
#include "nn/init.h"
#include "nn/layers.h"
#include "nn/module.h"
#include "nn/optimizer.h"
#include "nn/safetensors.h"
#include "nn/schedule.h"
#include "nn/sgd.h"
