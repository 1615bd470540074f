// The unit that builds cmake/precompiled.h for the targets that reuse it.
