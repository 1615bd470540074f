// What the unit tests' files include besides the production headers
// (cmake/precompiled_headers.cmake), precompiled with the test code's
// options: GoogleTest first of all, which every test file includes.
#include "precompiled.h"

#include <fstream>
#include <thread>

#include <gtest/gtest.h>
