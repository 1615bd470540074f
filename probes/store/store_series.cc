// series_states: each probe series' SeriesState as JSON, so that the
// verdicts survive a restart (store_schema.cc v7).
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "probes/store/store.h"
#include "probes/store/store_sqlite.h"
#include "probes/store/store_tracker_json.h"

namespace iowatch::probes {

using internal::Statement;
using internal::Transaction;
using nlohmann::json;

namespace {

json DriftToJson(const DriftWatch& drift) {
  json evidence = json::array();
  for (const auto& [key, e] : drift.All()) {
    evidence.push_back({{"op", key.first},
                        {"metric", key.second},
                        {"worse", e.worse},
                        {"recovery", e.recovery},
                        {"level", e.level},
                        {"runs", e.runs},
                        {"raised", e.raised},
                        {"since_ms", e.since_ms},
                        {"raised_ms", e.raised_ms},
                        {"step", e.step},
                        {"step_runs", e.step_runs},
                        {"step_shift", e.step_shift},
                        {"step_since_ms", e.step_since_ms},
                        {"calibration_runs", e.calibration_runs},
                        {"calibration_sum", e.calibration_sum},
                        {"calibration_sum_sq", e.calibration_sum_sq},
                        {"contended_runs", e.contended_runs},
                        {"contended_sum", e.contended_sum},
                        {"contended_sum_sq", e.contended_sum_sq}});
  }
  return {{"reference", drift.Reference()},
          {"reference_after_ms", drift.ReferenceAfterMs()},
          {"calibrate_until_ms", drift.CalibrateUntilMs()},
          {"evidence", evidence}};
}

// Throws nlohmann's exceptions on a malformed document, as FromJson.
void DriftFromJson(const json& doc, DriftWatch& drift) {
  std::map<std::pair<std::string, std::string>, DriftWatch::Evidence, std::less<>> evidence;
  for (const json& e : doc.at("evidence")) {
    DriftWatch::Evidence& x =
        evidence[{e.at("op").get<std::string>(), e.at("metric").get<std::string>()}];
    x.worse = e.at("worse").get<double>();
    x.recovery = e.at("recovery").get<double>();
    x.level = e.at("level").get<double>();
    x.runs = e.at("runs").get<uint64_t>();
    x.raised = e.at("raised").get<bool>();
    x.since_ms = e.at("since_ms").get<int64_t>();
    x.raised_ms = e.at("raised_ms").get<int64_t>();
    x.step = e.at("step").get<double>();
    x.step_runs = e.at("step_runs").get<uint32_t>();
    x.step_shift = e.at("step_shift").get<double>();
    x.step_since_ms = e.at("step_since_ms").get<int64_t>();
    x.calibration_runs = e.at("calibration_runs").get<uint64_t>();
    x.calibration_sum = e.at("calibration_sum").get<double>();
    x.calibration_sum_sq = e.at("calibration_sum_sq").get<double>();
    // Absent in a state stored before contended runs fed the step: none.
    x.contended_runs = e.value("contended_runs", uint64_t{0});
    x.contended_sum = e.value("contended_sum", 0.0);
    x.contended_sum_sq = e.value("contended_sum_sq", 0.0);
    if (!std::isfinite(x.worse) || !std::isfinite(x.recovery) || !std::isfinite(x.level) ||
        !std::isfinite(x.calibration_sum) || !std::isfinite(x.calibration_sum_sq) ||
        !std::isfinite(x.step) || !std::isfinite(x.step_shift) || !std::isfinite(x.contended_sum) ||
        !std::isfinite(x.contended_sum_sq)) {
      throw std::invalid_argument("a drift's evidence is not a finite number");
    }
  }
  drift.Restore(doc.at("reference").get<std::vector<int64_t>>(),
                doc.at("reference_after_ms").get<int64_t>(),
                doc.at("calibrate_until_ms").get<int64_t>(), std::move(evidence));
}

json ToJson(const SeriesState& state) {
  const json tracker = internal::TrackerToJson(state.tracker.Entries());
  json spans = json::array();
  for (const auto& [from, to] : state.suspect_spans) spans.push_back({from, to});
  return {{"tracker", tracker},
          {"baseline_ids", state.baseline_ids},
          {"suspect_since_ms", state.suspect_since_ms},
          {"suspect_spans", spans},
          {"drift", DriftToJson(state.drift)}};
}

// Throws nlohmann's exceptions on a malformed document; the caller turns
// them into an Error naming the series.
SeriesState FromJson(const json& doc, const RegressionTracker& rule) {
  SeriesState state;
  state.tracker = rule;
  const std::vector<RegressionTracker::Entry> entries =
      internal::TrackerFromJson(doc.at("tracker"));
  state.tracker.Restore(entries);
  state.baseline_ids = doc.at("baseline_ids").get<std::vector<int64_t>>();
  state.suspect_since_ms = doc.at("suspect_since_ms").get<int64_t>();
  for (const json& span : doc.at("suspect_spans")) {
    state.suspect_spans.emplace_back(span.at(0).get<int64_t>(), span.at(1).get<int64_t>());
  }
  // Absent in states stored before the drift watch, or before it calibrated
  // its reference: it starts afresh (a day of reference, three of calibration).
  if (const auto drift = doc.find("drift");
      drift != doc.end() && drift->contains("calibrate_until_ms")) {
    DriftFromJson(*drift, state.drift);
  }
  return state;
}

}  // namespace

Status Store::PutSeriesState(const StoredSeriesState& s, std::span<const RunVerdictRow> verdicts) {
  constexpr std::string_view kWhat = "storing a series' verdict state";
  Result<Transaction> transaction = Transaction::Begin(*connection_, kWhat);
  if (!transaction) return ErrorOf(transaction);
  for (const RunVerdictRow& v : verdicts) {
    if (Status stored = PutRunVerdict(v.run_id, v.judged, v.reason); !stored) return stored;
  }
  Result<Statement> upsert = connection_->Prepare(
      "INSERT OR REPLACE INTO series_states (job, fingerprint, device, through_run_id, "
      "state_json) VALUES (?1, ?2, ?3, ?4, ?5)",
      kWhat);
  if (!upsert) return ErrorOf(upsert);
  const std::string text = ToJson(s.state).dump();
  upsert->Bind(1, s.job).Bind(2, s.fingerprint).Bind(3, s.device).Bind(4, s.through_run_id);
  upsert->Bind(5, text);
  if (Status done = upsert->Run(); !done) return done;
  return transaction->Commit();
}

std::string UnreadableSeriesState::Describe() const {
  return fmt::format(
      "series_states row (job \"{}\", fingerprint \"{}\", device \"{}\"): expected the "
      "verdict state's JSON ({{\"tracker\": [...], \"baseline_ids\": [...], "
      "\"suspect_since_ms\": N, \"suspect_spans\": [...], \"drift\": {{...}}}}), found {}",
      job, fingerprint, device, why);
}

Result<std::vector<StoredSeriesState>> Store::SeriesStates(
    const RegressionTracker& rule, std::vector<UnreadableSeriesState>& unreadable) const {
  Result<Statement> select = connection_->Prepare(
      "SELECT job, fingerprint, device, through_run_id, state_json FROM series_states "
      "ORDER BY job, fingerprint, device",
      "reading the series' verdict states");
  if (!select) return ErrorOf(select);
  std::vector<StoredSeriesState> out;
  Status done = select->ForEachRow([&](const Statement& row) -> Status {
    StoredSeriesState s;
    s.job = row.Text(0);
    s.fingerprint = row.Text(1);
    s.device = row.Text(2);
    s.through_run_id = row.Int(3);
    try {
      s.state = FromJson(json::parse(row.Text(4)), rule);
    } catch (const std::exception& e) {  // nlohmann's, or a figure out of range
      unreadable.push_back({s.job, s.fingerprint, s.device, e.what()});
      return {};
    }
    out.push_back(std::move(s));
    return {};
  });
  if (!done) return ErrorOf(done);
  return out;
}

Status Store::QuarantineSeriesState(const UnreadableSeriesState& row, int64_t now_unix_ms) {
  constexpr std::string_view kWhat = "moving an unreadable series state to its quarantine";
  Result<Transaction> transaction = Transaction::Begin(*connection_, kWhat);
  if (!transaction) return ErrorOf(transaction);
  Result<Statement> copy = connection_->Prepare(
      "INSERT INTO series_states_quarantine (job, fingerprint, device, through_run_id, "
      "state_json, quarantined_unix_ms, reason) SELECT CAST(job AS TEXT), CAST(fingerprint "
      "AS TEXT), CAST(device AS TEXT), CAST(through_run_id AS INTEGER), CAST(state_json AS "
      "TEXT), ?4, ?5 FROM series_states WHERE job = ?1 AND fingerprint = ?2 AND device = ?3",
      kWhat);
  if (!copy) return ErrorOf(copy);
  // series_states is not STRICT: the casts keep whatever the row holds.
  copy->Bind(1, row.job).Bind(2, row.fingerprint).Bind(3, row.device);
  copy->Bind(4, now_unix_ms).Bind(5, row.why);
  if (Status done = copy->Run(); !done) return done;
  if (Status done = DeleteSeriesState(row.job, row.fingerprint, row.device); !done) return done;
  return transaction->Commit();
}

Status Store::DeleteSeriesState(std::string_view job, std::string_view fingerprint,
                                std::string_view device) {
  Result<Statement> del = connection_->Prepare(
      "DELETE FROM series_states WHERE job = ?1 AND fingerprint = ?2 AND device = ?3",
      "deleting a series' verdict state");
  if (!del) return ErrorOf(del);
  del->Bind(1, job).Bind(2, fingerprint).Bind(3, device);
  return del->Run();
}

}  // namespace iowatch::probes
