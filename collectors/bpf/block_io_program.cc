#include "collectors/bpf/block_io_program.h"

#include <block_io.skel.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/log.h"

namespace iowatch::collectors::bpf {
namespace {

// libbpf prints through one process-wide callback: its messages go to
// spdlog, and the last warning is kept for the error Load returns (the
// verifier's verdict is among them).
std::mutex last_warning_mutex;
std::string last_warning;  // guarded by last_warning_mutex

int PrintLibbpf(enum libbpf_print_level level, const char* format, va_list args) {
  char line[1024];
  if (std::vsnprintf(line, sizeof line, format, args) < 0) return 0;
  std::string text(line);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  if (level == LIBBPF_DEBUG) {
    spdlog::trace("libbpf: {}", text);
  } else {
    spdlog::debug("libbpf: {}", text);
    std::lock_guard lock(last_warning_mutex);
    last_warning = text;
  }
  return 0;
}

std::string LastWarning() {
  std::lock_guard lock(last_warning_mutex);
  return last_warning;
}

std::unexpected<Error> LoadError(std::string_view step, int err) {
  const int code = err < 0 ? -err : err;
  std::string message =
      fmt::format("the block-layer BPF program: {} failed: {}", step, ErrnoText(code));
  // EPERM is a missing capability; the verifier refuses with EACCES or
  // EINVAL, and its last words are libbpf's last warning.
  if (code == EPERM) {
    message +=
        " (it needs CAP_BPF and CAP_PERFMON, or root: "
        "deploy/iowatch.service.d/bpf.conf grants them to the service)";
  } else if (const std::string warning = LastWarning(); !warning.empty()) {
    message += fmt::format(" (libbpf: {})", warning);
  }
  Error error{ErrorCode::kUnsupported, std::move(message), {}, 0, code, 0};
  return std::unexpected<Error>(std::move(error));
}

// What the program needs to know of the running kernel beyond what CO-RE
// relocates, from its BTF.
struct KernelFacts {
  // The block_io_done tracepoint (6.5 and later): its BTF names the
  // tracepoint's typedef. block_rq_error likewise.
  bool has_block_io_done = false;
  bool has_block_rq_error = false;
  // enum req_op (req_opf before 5.19): value -> name, lower case, as
  // blk_op_str prints it in the kernel log ("read", "write_zeroes").
  std::map<uint32_t, std::string> op_names;
  // The bit of QUEUE_FLAG_STATS, an enumerator of an anonymous enum (which
  // CO-RE cannot relocate); 64 when not found.
  uint32_t queue_stats_bit = 64;
};

// The enumerators of the enum named `name`, "REQ_OP_WRITE" -> {1, "write"}
// for prefix "REQ_OP_"; empty when no such enum.
std::map<uint32_t, std::string> EnumNames(const btf* types, std::string_view name,
                                          std::string_view prefix) {
  std::map<uint32_t, std::string> names;
  const int id = btf__find_by_name_kind(types, std::string(name).c_str(), BTF_KIND_ENUM);
  if (id < 0) return names;
  const btf_type* type = btf__type_by_id(types, static_cast<uint32_t>(id));
  const struct btf_enum* values = btf_enum(type);
  for (uint16_t i = 0; i < btf_vlen(type); ++i) {
    std::string_view enumerator = btf__name_by_offset(types, values[i].name_off);
    if (!enumerator.starts_with(prefix) || values[i].val < 0) continue;
    enumerator.remove_prefix(prefix.size());
    std::string lower(enumerator);
    std::ranges::transform(lower, lower.begin(), [](unsigned char c) { return std::tolower(c); });
    names.emplace(static_cast<uint32_t>(values[i].val), std::move(lower));
  }
  return names;
}

// The value of enumerator `name` of any enum in `types`.
std::optional<int64_t> EnumeratorValue(const btf* types, std::string_view name) {
  const uint32_t count = btf__type_cnt(types);
  for (uint32_t id = 1; id < count; ++id) {
    const btf_type* type = btf__type_by_id(types, id);
    if (!btf_is_enum(type)) continue;
    const struct btf_enum* values = btf_enum(type);
    for (uint16_t i = 0; i < btf_vlen(type); ++i) {
      if (name == btf__name_by_offset(types, values[i].name_off)) return values[i].val;
    }
  }
  return std::nullopt;
}

KernelFacts ReadKernelFacts() {
  KernelFacts facts;
  btf* kernel = btf__load_vmlinux_btf();
  if (kernel == nullptr) return facts;
  facts.has_block_io_done =
      btf__find_by_name_kind(kernel, "btf_trace_block_io_done", BTF_KIND_TYPEDEF) >= 0;
  facts.has_block_rq_error =
      btf__find_by_name_kind(kernel, "btf_trace_block_rq_error", BTF_KIND_TYPEDEF) >= 0;
  facts.op_names = EnumNames(kernel, "req_op", "REQ_OP_");
  if (facts.op_names.empty()) facts.op_names = EnumNames(kernel, "req_opf", "REQ_OP_");
  const auto stats_bit = EnumeratorValue(kernel, "QUEUE_FLAG_STATS");
  if (stats_bit && *stats_bit >= 0 && *stats_bit < 64) {
    facts.queue_stats_bit = static_cast<uint32_t>(*stats_bit);
  }
  btf__free(kernel);
  return facts;
}

// Every key of a map, in the kernel's order.
template <typename Key>
std::vector<Key> KeysOf(int fd) {
  std::vector<Key> keys;
  Key key{};
  Key previous{};
  bool first = true;
  while (bpf_map_get_next_key(fd, first ? nullptr : &previous, &key) == 0) {
    keys.push_back(key);
    previous = key;
    first = false;
  }
  return keys;
}

// Each key's per-CPU values, summed by `add`.
template <typename Key, typename Value, typename Add>
Status ForEachSummed(int fd, Add add) {
  const int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0)
    return ErrnoError(-cpus, "counting the possible CPUs", "/sys/devices/system/cpu/possible");
  std::vector<Value> values(static_cast<size_t>(cpus));
  for (const Key& key : KeysOf<Key>(fd)) {
    if (bpf_map_lookup_elem(fd, &key, values.data()) != 0) continue;  // deleted meanwhile
    for (const Value& value : values) add(key, value);
  }
  return {};
}

void AddLatency(const iowatch_latency_hist& from, LatencyHistogram& to) {
  to.count += from.count;
  to.sum_ns += from.sum_ns;
  for (size_t i = 0; i < kLatencySlots; ++i) to.slots[i] += from.slots[i];
  for (size_t i = 0; i < kCoarseSlots; ++i) to.coarse[i] += from.coarse[i];
}

void AddRequests(const iowatch_request_stats& from, RequestStats& to) {
  to.bytes += from.bytes;
  to.sequential += from.sequential;
  to.random += from.random;
  to.aligned += from.aligned;
  to.unaligned += from.unaligned;
  for (size_t i = 0; i < kSizeSlots; ++i) {
    to.size_slots[i] += from.size_slots[i];
    to.requests += from.size_slots[i];
  }
}

void AddClasses(const iowatch_class_stats (&from)[kSizeClasses], SizeClasses& to) {
  for (size_t c = 0; c < kSizeClasses; ++c) {
    to[c].count += from[c].count;
    to[c].sum_ns += from[c].sum_ns;
    to[c].bytes += from[c].bytes;
  }
}

// A key's disk: the key itself for the maps keyed by disk alone.
uint32_t DiskOfKey(uint32_t dev) { return dev; }
template <typename Key>
uint32_t DiskOfKey(const Key& key) {
  return key.dev;
}

// Deletes the map's entries whose key's disk is in `gone`.
template <typename Key>
Status ForgetKeys(int fd, const std::unordered_set<uint32_t>& gone) {
  for (const Key& key : KeysOf<Key>(fd)) {
    if (!gone.contains(DiskOfKey(key))) continue;
    if (bpf_map_delete_elem(fd, &key) != 0 && errno != ENOENT) {
      const DiskOp disk = DiskOpOf(DiskOfKey(key), 0);
      return ErrnoError(errno, fmt::format("forgetting disk {}:{}", disk.major, disk.minor), "");
    }
  }
  return {};
}

}  // namespace

void BlockIoProgram::SkeletonDeleter::operator()(block_io* skeleton) const {
  block_io::destroy(skeleton);
}

BlockIoProgram::BlockIoProgram(std::unique_ptr<block_io, SkeletonDeleter> skeleton,
                               std::map<uint32_t, std::string> op_names, bool counts_errors)
    : skeleton_(std::move(skeleton)),
      op_names_(std::move(op_names)),
      counts_errors_(counts_errors) {}
BlockIoProgram::BlockIoProgram(BlockIoProgram&&) noexcept = default;
BlockIoProgram& BlockIoProgram::operator=(BlockIoProgram&&) noexcept = default;
BlockIoProgram::~BlockIoProgram() = default;

Result<BlockIoProgram> BlockIoProgram::Load(const LoadOptions& options) {
  const std::filesystem::path& btf = options.btf;
  std::error_code ec;
  if (!std::filesystem::exists(btf, ec)) {
    return MakeError(ErrorCode::kUnsupported,
                     "no kernel BTF: the block-layer BPF program needs it (CONFIG_DEBUG_INFO_BTF)",
                     btf.string());
  }
  static std::once_flag print_set;
  std::call_once(print_set, [] { libbpf_set_print(PrintLibbpf); });
  std::unique_ptr<block_io, SkeletonDeleter> skeleton(block_io::open());
  if (!skeleton) return LoadError("opening", errno);
  KernelFacts facts = ReadKernelFacts();
  skeleton->rodata->queue_stats_bit = facts.queue_stats_bit;
  skeleton->data->count_cgroups = options.count_cgroups ? 1 : 0;
  skeleton->data->count_queue_stage = options.count_queue_stage ? 1 : 0;
  // Completions are taken where diskstats accounts them when the kernel says
  // where (block_io_done), else at the last bytes' completion.
  const bool done = facts.has_block_io_done;
  skeleton->rodata->completion_at_done = done ? 1 : 0;
  bpf_program__set_autoload(skeleton->progs.on_done, done);
  bpf_program__set_autoload(skeleton->progs.on_complete, !done);
  // Errors where the kernel logs them; a kernel without the tracepoint
  // counts none here.
  bpf_program__set_autoload(skeleton->progs.on_error, facts.has_block_rq_error);
  if (const int err = block_io::load(skeleton.get()); err != 0) return LoadError("loading", err);
  if (const int err = block_io::attach(skeleton.get()); err != 0) {
    return LoadError(done ? "attaching to block_rq_issue, block_io_done and block_rq_error"
                          : "attaching to block_rq_issue, block_rq_complete and block_rq_error",
                     err);
  }
  return BlockIoProgram(std::move(skeleton), std::move(facts.op_names), facts.has_block_rq_error);
}

Result<BlockIoSample> BlockIoProgram::Read() const {
  BlockIoSample sample;
  Status read = ForEachSummed<iowatch_dev_op_key, iowatch_disk_op_stats>(
      bpf_map__fd(skeleton_->maps.disk_ops),
      [&](const iowatch_dev_op_key& key, const iowatch_disk_op_stats& value) {
        const DiskOp disk_op = DiskOpOf(key.dev, key.op);
        for (size_t stage = 0; stage < kBlockStages; ++stage) {
          if (value.stage[stage].count == 0) continue;  // a stage this op never had
          AddLatency(value.stage[stage], sample.latency[{disk_op, static_cast<BlockStage>(stage)}]);
        }
        if (value.stage[IOWATCH_STAGE_DEVICE].count > 0) {
          AddClasses(value.device_class, sample.device_classes[disk_op]);
        }
        // Issued while loaded, or ended without reaching the driver.
        const auto& sizes = value.requests.size_slots;
        if (std::any_of(std::begin(sizes), std::end(sizes), [](uint64_t n) { return n > 0; })) {
          AddRequests(value.requests, sample.requests[disk_op]);
        }
      });
  if (!read) return ErrorOf(read);
  read = ForEachSummed<iowatch_cgroup_key, iowatch_cgroup_io>(
      bpf_map__fd(skeleton_->maps.cgroup_io),
      [&](const iowatch_cgroup_key& key, const iowatch_cgroup_io& value) {
        CgroupIo& io = sample.cgroups[{key.cgroup_id, DiskOpOf(key.dev, key.op)}];
        io.bytes += value.bytes;
        io.requests += value.requests;
      });
  if (!read) return ErrorOf(read);
  read = ForEachSummed<iowatch_error_key, uint64_t>(
      bpf_map__fd(skeleton_->maps.block_errors), [&](const iowatch_error_key& key, uint64_t count) {
        const auto op = op_names_.find(key.req_op);
        BlockErrorKey named{key.dev,
                            op != op_names_.end() ? op->second : fmt::format("op {}", key.req_op),
                            BlockStatusName(key.status)};
        sample.errors[std::move(named)] += count;
      });
  if (!read) return ErrorOf(read);
  sample.counts_errors = counts_errors_;
  const int lost_fd = bpf_map__fd(skeleton_->maps.lost);
  const int cpus = libbpf_num_possible_cpus();
  std::vector<uint64_t> per_cpu(static_cast<size_t>(cpus > 0 ? cpus : 1));
  uint64_t* const totals[] = {&sample.lost_issues, &sample.lost_series, &sample.lost_cgroups,
                              &sample.lost_flushes};
  for (uint32_t what = 0; what < IOWATCH_LOST_COUNT; ++what) {
    if (bpf_map_lookup_elem(lost_fd, &what, per_cpu.data()) != 0) continue;
    for (uint64_t n : per_cpu) *totals[what] += n;
  }
  for (const bpf_program* program : {skeleton_->progs.on_issue, skeleton_->progs.on_done,
                                     skeleton_->progs.on_complete, skeleton_->progs.on_error}) {
    bpf_prog_info info{};
    uint32_t length = sizeof info;
    const int fd = bpf_program__fd(program);
    if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &info, &length) == 0) {
      sample.lost_recursion += info.recursion_misses;
    }
  }
  return sample;
}

Status BlockIoProgram::SetAlignment(uint32_t major, uint32_t minor, uint32_t bytes) {
  const int fd = bpf_map__fd(skeleton_->maps.disks);
  const uint32_t dev = KernelDev(major, minor);
  // The disk's entry keeps where its streams are too: changed, not replaced
  // by a zeroed one (a request ending meanwhile may lose its pattern's
  // update, one request's worth).
  iowatch_disk_state state{};
  if (bpf_map_lookup_elem(fd, &dev, &state) != 0 && bytes == 0) return {};
  state.align_bytes = bytes;
  if (bpf_map_update_elem(fd, &dev, &state, BPF_ANY) != 0) {
    return ErrnoError(errno, fmt::format("setting the alignment unit of {}:{}", major, minor), "");
  }
  return {};
}

Status BlockIoProgram::ForgetDisks(std::span<const uint32_t> kernel_devs) {
  if (kernel_devs.empty()) return {};
  const std::unordered_set<uint32_t> gone(kernel_devs.begin(), kernel_devs.end());
  if (Status forgot = ForgetKeys<iowatch_dev_op_key>(bpf_map__fd(skeleton_->maps.disk_ops), gone);
      !forgot) {
    return forgot;
  }
  if (Status forgot = ForgetKeys<uint32_t>(bpf_map__fd(skeleton_->maps.disks), gone); !forgot) {
    return forgot;
  }
  return ForgetKeys<iowatch_error_key>(bpf_map__fd(skeleton_->maps.block_errors), gone);
}

void BlockIoProgram::SetCounting(bool cgroups, bool queue_stage) {
  // The .data section is mapped into this process: a store the programs
  // see at their next run.
  skeleton_->data->count_cgroups = cgroups ? 1 : 0;
  skeleton_->data->count_queue_stage = queue_stage ? 1 : 0;
}

Status BlockIoProgram::ForgetCgroups(std::span<const uint64_t> cgroup_ids) {
  if (cgroup_ids.empty()) return {};
  const int fd = bpf_map__fd(skeleton_->maps.cgroup_io);
  const std::unordered_set<uint64_t> gone(cgroup_ids.begin(), cgroup_ids.end());
  for (const iowatch_cgroup_key& key : KeysOf<iowatch_cgroup_key>(fd)) {
    if (!gone.contains(key.cgroup_id)) continue;
    if (bpf_map_delete_elem(fd, &key) != 0 && errno != ENOENT) {
      return ErrnoError(errno, fmt::format("forgetting cgroup {}", key.cgroup_id), "");
    }
  }
  return {};
}

}  // namespace iowatch::collectors::bpf
