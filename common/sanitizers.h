// IOWATCH_ASAN: this translation unit is built with AddressSanitizer, under
// one name for both compilers: GCC defines __SANITIZE_ADDRESS__, clang
// answers __has_feature (the sanitizer trees are built with clang,
// the product with GCC).
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define IOWATCH_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define IOWATCH_ASAN 1
#endif
#endif

