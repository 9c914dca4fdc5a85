// Everything in the nn layer (and the layers under it): #include "nn/all.h"
#pragma once

#include "autograd/all.h"
#include "nn/init.h"
#include "nn/layers.h"
#include "nn/module.h"
