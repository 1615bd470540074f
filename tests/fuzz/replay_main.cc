// A main for the fuzz targets where libFuzzer is not there (GCC, the
// sanitizer tree that CI builds): replays every file given (or every file of a
// directory given) through LLVMFuzzerTestOneInput, then, with
// --mutate-seconds=S, feeds it blind mutations of those inputs (bytes flipped,
// inserted, removed, spliced from another input) for S seconds. No coverage
// guidance: that is scripts/fuzz.sh's job; this keeps every seed and every
// fixed finding a regression test and shakes the parsers a little in CI.
// Mutation n is a pure function of (--seed, n): a failure prints how to
// replay exactly the input that failed (--only=n, which also writes it to
// ./mutation-n).
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

using Bytes = std::vector<uint8_t>;

Bytes ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<Bytes> LoadInputs(const std::vector<std::string>& paths) {
  std::vector<Bytes> inputs;
  for (const auto& path : paths) {
    if (std::filesystem::is_directory(path)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(path)) {
        if (entry.is_regular_file()) inputs.push_back(ReadAll(entry.path()));
      }
    } else {
      inputs.push_back(ReadAll(path));
    }
  }
  return inputs;
}

// One to eight edits of one input, chosen by a generator seeded with (seed, n).
Bytes Mutate(const std::vector<Bytes>& inputs, uint64_t seed, uint64_t n) {
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ULL + n);
  const auto pick = [&rng](size_t bound) { return bound == 0 ? 0 : rng() % bound; };
  Bytes out = inputs[pick(inputs.size())];
  const size_t edits = 1 + pick(8);
  for (size_t i = 0; i < edits; ++i) {
    const size_t at = pick(out.size() + 1);
    switch (pick(5)) {
      case 0:  // flip a bit
        if (!out.empty()) out[pick(out.size())] ^= static_cast<uint8_t>(1u << pick(8));
        break;
      case 1:  // insert a byte, often a delimiter the formats care about
        out.insert(out.begin() + static_cast<long>(at),
                   pick(2) == 0 ? static_cast<uint8_t>(rng())
                                : static_cast<uint8_t>(
                                      std::string_view(" \n\t:;,=\"\\{}[]#0\xff")[pick(16)]));
        break;
      case 2:  // remove a run
        out.erase(out.begin() + static_cast<long>(at),
                  out.begin() + static_cast<long>(std::min(out.size(), at + 1 + pick(16))));
        break;
      case 3: {  // splice a piece of another input
        const Bytes& other = inputs[pick(inputs.size())];
        const size_t from = pick(other.size());
        const size_t len = std::min(other.size() - from, 1 + pick(64));
        out.insert(out.begin() + static_cast<long>(at), other.begin() + static_cast<long>(from),
                   other.begin() + static_cast<long>(from + len));
        break;
      }
      default:  // repeat a run (long lines, deep nesting)
        if (at < out.size()) {
          const Bytes run(out.begin() + static_cast<long>(at),
                          out.begin() + static_cast<long>(std::min(out.size(), at + 1 + pick(8))));
          for (size_t k = pick(256); k > 0; --k) out.insert(out.end(), run.begin(), run.end());
        }
    }
  }
  return out;
}

// Which mutation is running, for the abort handler (-1: a replayed input).
volatile long long g_mutation = -1;
volatile unsigned long long g_seed = 1;

void SayWhichMutation(int signal) {
  char line[160];
  const int n = g_mutation < 0
                    ? std::snprintf(line, sizeof line, "\nfailed on a replayed input\n")
                    : std::snprintf(line, sizeof line,
                                    "\nfailed on mutation %lld: replay it with --seed=%llu "
                                    "--only=%lld and the same inputs\n",
                                    g_mutation, g_seed, g_mutation);
  if (n > 0) (void)!write(STDERR_FILENO, line, static_cast<size_t>(n));
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

}  // namespace

int main(int argc, char** argv) {
  double mutate_seconds = 0;
  uint64_t seed = 1;
  long only = -1;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--mutate-seconds=")) {
      mutate_seconds = std::strtod(argv[i] + 17, nullptr);
    } else if (arg.starts_with("--seed=")) {
      seed = std::strtoull(argv[i] + 7, nullptr, 10);
    } else if (arg.starts_with("--only=")) {
      only = std::strtol(argv[i] + 7, nullptr, 10);
    } else {
      paths.emplace_back(arg);
    }
  }
  const std::vector<Bytes> inputs = LoadInputs(paths);
  std::signal(SIGABRT, SayWhichMutation);  // a failed Require, or a sanitizer's report
  if (inputs.empty()) {
    std::fprintf(stderr, "no inputs in the paths given\n");
    return 2;
  }
  if (only >= 0) {  // the one input, also written out to look at
    const Bytes input = Mutate(inputs, seed, static_cast<uint64_t>(only));
    const std::string saved = "mutation-" + std::to_string(only);
    std::ofstream(saved, std::ios::binary)
        .write(reinterpret_cast<const char*>(input.data()), static_cast<long>(input.size()));
    std::fprintf(stderr, "mutation %ld written to %s\n", only, saved.c_str());
    g_seed = seed;
    g_mutation = only;
    return LLVMFuzzerTestOneInput(input.data(), input.size());
  }
  for (const Bytes& input : inputs) LLVMFuzzerTestOneInput(input.data(), input.size());
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(mutate_seconds);
  uint64_t n = 0;
  for (; mutate_seconds > 0 && std::chrono::steady_clock::now() < end; ++n) {
    const Bytes input = Mutate(inputs, seed, n);
    g_seed = seed;
    g_mutation = static_cast<long long>(n);
    LLVMFuzzerTestOneInput(input.data(), input.size());
  }
  std::printf("%zu inputs replayed, %llu mutations in %.0f s (seed %llu)\n", inputs.size(),
              static_cast<unsigned long long>(n), mutate_seconds,
              static_cast<unsigned long long>(seed));
  return 0;
}
