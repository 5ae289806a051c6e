/* A layering violation for the checker's own test: util includes obj. */
#include "obj/thing.h"
