// `iowatch baseline`: reads and edits the baselines in the probe store
// (<state.dir>/iowatch.db), the file the daemon's probe worker writes; SQLite's
// WAL lets this run beside a live daemon.
//
//   iowatch baseline [--state.dir=DIR] list | show JOB | capture JOB | reset JOB
//                                      | export [FILE|-] | import FILE|-
//
// (the command line, options included: baseline_options.h).
// `capture` rebuilds the baseline of JOB from its latest N successful runs
// (N defaults to probes::BaselinePolicy's runs) of the parameters and device
// of its most recent successful run (of the one on --device when given) and
// stores it pinned (an operator's baseline, not one learned). `reset`
// deletes the job's baselines, so the daemon learns anew. `show`
// judges runs with the default BaselinePolicy; the daemon's config may differ.
// `export` writes store_json.h's document (stdout for none or "-"; a file is
// written whole or not at all), `import` validates one (at most 64 MiB) and
// stores every baseline in it pinned. A missing database is an error for
// every action (nothing is created here): "no store at <path> (has
// `iowatch serve` run with --state.dir=<dir>?)".
//
// Exit status: 0 on success, 2 on a bad command line or any error, printed as
// one line "iowatch baseline <action>: <message>".
// Thread-safety: main thread only (the functions below share nothing, but
// each Store has one owner).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/baseline/baseline_golden.h"
#include "cli/baseline/baseline_options.h"
#include "common/result.h"
#include "config/config.h"
#include "probes/store/store.h"
#include "probes/verdicts/baseline.h"

namespace iowatch::daemon {

// What the actions need from outside the store, injectable for tests.
struct BaselineContext {
  std::function<int64_t()> now_unix_ms;             // capture's creation time
  std::function<Result<std::string>()> read_stdin;  // import -
  probes::BaselinePolicy policy;                    // show's judgement, capture's default N
  // import: this host's probe jobs and their disks (baseline_golden.h)
  std::function<std::vector<LocalProbe>()> local_probes;
  // export: the firmware of a device ("8:0"), "" when unknown
  std::function<std::string(std::string_view device)> firmware_of;
};
// The daemon's config (its defaults when no file is given) as the context:
// its baseline policy, its jobs and its sysfs.
BaselineContext DefaultBaselineContext(const config::Config& config = {});

// Each appends its report to `out` (for export without a file, the JSON).
Status BaselineList(const probes::Store& store, std::string& out);
Status BaselineShow(const probes::Store& store, std::string_view job, uint32_t runs,
                    const probes::BaselinePolicy& policy, std::string& out);
// Pins the clean band's baseline learned (with `policy`'s floors and quantile
// rules) from the job's last `runs` successful runs, whatever their
// conditions: the operator's word that those runs are the norm.
Status BaselineCapture(probes::Store& store, std::string_view job, uint32_t runs,
                       std::string_view device, int64_t now_unix_ms,
                       const probes::BaselinePolicy& policy, std::string& out);
Status BaselineReset(probes::Store& store, std::string_view job, std::string& out);
// Forgets the passive judge's series of `disk` (kernel name): a running
// daemon sees it within a minute and learns the disk afresh (the change the
// operator keeps, a firmware the disk now runs, is its new norm).
Status BaselinePassiveReset(probes::Store& store, std::string_view disk, int64_t now_unix_ms,
                            std::string& out);
// Each baseline with the firmware of its device when this host has it.
Status BaselineExport(const probes::Store& store, std::string_view file,
                      const BaselineContext& context, std::string& out);
// Retargets the document's baselines to this host's jobs (RetargetBaselines)
// and pins them.
Status BaselineImport(probes::Store& store, std::string_view file, const BaselineContext& context,
                      std::string& out);

// Opens <state_dir>/iowatch.db (an error when it does not exist) and runs the
// action; kHelp needs no store.
Status ExecuteBaseline(const BaselineArgs& args, const BaselineContext& context, std::string& out);

// The command table's entry, after app.parse() chose `baseline`
// (DefineBaselineCommand): execute and print; the exit status. (A parse that
// threw is ExitBaseline's, baseline_options.h.) `settings`: the keys the
// config file may hold beside the loader's own (RegisteredSettings).
int RunBaseline(const BaselineArgs& args, std::span<const config::Setting> settings);

}  // namespace iowatch::daemon
