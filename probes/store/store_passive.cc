// passive_states and passive_windows: the passive judge's verdict state and
// windows (store_schema.cc v10), so that a restart neither forgets a
// regression nor learns a disk's model again.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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

double FiniteAt(const json& doc, const char* key) {
  const double v = doc.at(key).get<double>();
  if (!std::isfinite(v)) throw std::invalid_argument(fmt::format("{} is not finite", key));
  return v;
}

json WindowToJson(const PassiveWindow& w) {
  return {{"start_ms", w.start_ms},
          {"end_ms", w.end_ms},
          {"requests", w.requests},
          {"mean_seconds", w.mean_seconds},
          {"rate", w.rate},
          {"other_bytes_rate", w.other_bytes_rate},
          {"mean_bytes", w.mean_bytes},
          {"steal", w.steal},
          {"queue_depth", w.queue_depth},
          {"utilization", w.utilization}};
}

PassiveWindow WindowFromJson(const json& doc, const StoredPassiveState& key) {
  PassiveWindow w;
  w.device = key.device;
  w.op = key.op;
  w.size = key.size;
  w.source = key.source;
  w.start_ms = doc.at("start_ms").get<int64_t>();
  w.end_ms = doc.at("end_ms").get<int64_t>();
  w.requests = doc.at("requests").get<uint64_t>();
  w.mean_seconds = FiniteAt(doc, "mean_seconds");
  w.rate = FiniteAt(doc, "rate");
  w.other_bytes_rate = FiniteAt(doc, "other_bytes_rate");
  w.mean_bytes = FiniteAt(doc, "mean_bytes");
  w.steal = FiniteAt(doc, "steal");
  w.queue_depth = FiniteAt(doc, "queue_depth");
  w.utilization = FiniteAt(doc, "utilization");
  return w;
}

json DriftToJson(const PassiveDriftState& d) {
  json doc = {{"calibrate_until_ms", d.calibrate_until_ms},
              {"calibration_fits", d.calibration_fits},
              {"calibration_sum", d.calibration_sum},
              {"streak", d.streak},
              {"raised", d.raised},
              {"since_ms", d.since_ms}};
  if (d.level) doc["level"] = *d.level;
  return doc;
}

PassiveDriftState DriftFromJson(const json& doc) {
  PassiveDriftState d;
  d.calibrate_until_ms = doc.at("calibrate_until_ms").get<int64_t>();
  d.calibration_fits = doc.at("calibration_fits").get<uint64_t>();
  d.calibration_sum = FiniteAt(doc, "calibration_sum");
  if (doc.contains("level")) d.level = FiniteAt(doc, "level");
  d.streak = doc.at("streak").get<uint32_t>();
  d.raised = doc.at("raised").get<bool>();
  d.since_ms = doc.at("since_ms").get<int64_t>();
  return d;
}

json StateToJson(const StoredPassiveState& s) {
  json waiting = json::array();
  for (const PassiveWindow& w : s.state.waiting) waiting.push_back(WindowToJson(w));
  json doc = {{"tracker", internal::TrackerToJson(s.state.tracker)},
              {"waiting", waiting},
              {"since_fit", s.state.since_fit},
              {"streak_windows", s.state.streak_windows},
              {"drift", DriftToJson(s.state.drift)}};
  if (s.last_judged) {
    const PassiveJudgedFigures& j = *s.last_judged;
    doc["last_judged"] = {{"end_ms", j.end_ms},
                          {"mean_seconds", j.mean_seconds},
                          {"predicted_seconds", j.predicted_seconds},
                          {"ratio", j.ratio},
                          {"bound_ratio", j.bound_ratio}};
  }
  return doc;
}

// Throws nlohmann's exceptions (or invalid_argument) on a malformed document.
void StateFromJson(const json& doc, StoredPassiveState& s) {
  s.state.tracker = internal::TrackerFromJson(doc.at("tracker"));
  for (const json& w : doc.at("waiting")) s.state.waiting.push_back(WindowFromJson(w, s));
  s.state.since_fit = doc.at("since_fit").get<size_t>();
  // Absent in a state stored before streaks were bounded: an open streak counts afresh.
  s.state.streak_windows = doc.value("streak_windows", uint32_t{0});
  // Absent in a state stored before the drift watch: it starts afresh.
  if (const auto d = doc.find("drift"); d != doc.end()) s.state.drift = DriftFromJson(*d);
  if (const auto j = doc.find("last_judged"); j != doc.end()) {
    s.last_judged = PassiveJudgedFigures{
        j->at("end_ms").get<int64_t>(), FiniteAt(*j, "mean_seconds"),
        FiniteAt(*j, "predicted_seconds"), FiniteAt(*j, "ratio"), FiniteAt(*j, "bound_ratio")};
  }
}

std::optional<PassiveSource> PassiveSourceOf(std::string_view text) {
  if (text == ToString(PassiveSource::kDevice)) return PassiveSource::kDevice;
  if (text == ToString(PassiveSource::kDiskstats)) return PassiveSource::kDiskstats;
  return std::nullopt;
}

// Runs `sql` once per item, `bind` binding each: one prepare for them all.
template <typename T, typename BindItem>
Status RunEach(const internal::Connection& connection, std::string_view sql,
               std::span<const T> items, std::string_view what, BindItem bind) {
  if (items.empty()) return {};
  Result<Statement> statement = connection.Prepare(sql, what);
  if (!statement) return ErrorOf(statement);
  for (const T& item : items) {
    bind(*statement, item);
    if (Status done = statement->Run(); !done) return done;
    statement->Reset();
  }
  return {};
}

Status InsertWindows(const internal::Connection& connection,
                     std::span<const StoredPassiveWindow> windows, std::string_view what) {
  return RunEach(
      connection,
      "INSERT OR REPLACE INTO passive_windows (device, op, size, source, start_unix_ms, "
      "end_unix_ms, requests, mean_seconds, rate, other_bytes_rate, mean_bytes, steal, "
      "queue_depth, utilization, probe, counters_reset, reason, predicted_seconds, bound_ratio, "
      "bad, learned) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, "
      "?16, ?17, ?18, ?19, ?20, ?21)",
      windows, what, [](Statement& insert, const StoredPassiveWindow& s) {
        const PassiveWindow& w = s.window;
        insert.Bind(1, w.device).Bind(2, w.op).Bind(3, w.size).Bind(4, ToString(w.source));
        insert.Bind(5, w.start_ms).Bind(6, w.end_ms).Bind(7, static_cast<int64_t>(w.requests));
        insert.Bind(8, w.mean_seconds).Bind(9, w.rate).Bind(10, w.other_bytes_rate);
        insert.Bind(11, w.mean_bytes).Bind(12, w.steal).Bind(13, w.queue_depth);
        insert.Bind(14, w.utilization).Bind(15, int64_t{w.probe});
        insert.Bind(16, int64_t{w.counters_reset}).Bind(17, s.reason);
        insert.Bind(18, s.predicted_seconds).Bind(19, s.bound_ratio);
        insert.Bind(20, int64_t{s.bad}).Bind(21, int64_t{s.learned});
      });
}

Status MarkLearned(const internal::Connection& connection,
                   std::span<const PassiveLearnedMark> marks, std::string_view what) {
  return RunEach(connection,
                 "UPDATE passive_windows SET learned = 1, reference = MAX(reference, ?6) WHERE "
                 "device = ?1 AND op = ?2 AND size = ?3 AND source = ?4 AND end_unix_ms = ?5",
                 marks, what, [](Statement& update, const PassiveLearnedMark& m) {
                   update.Bind(1, m.device).Bind(2, m.op).Bind(3, m.size);
                   update.Bind(4, ToString(m.source)).Bind(5, m.end_ms);
                   update.Bind(6, int64_t{m.reference});
                 });
}

Status UpsertStates(const internal::Connection& connection,
                    std::span<const StoredPassiveState> states, std::string_view what) {
  return RunEach(connection,
                 "INSERT OR REPLACE INTO passive_states (device, op, size, source, identity, "
                 "through_unix_ms, state_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                 states, what, [](Statement& upsert, const StoredPassiveState& s) {
                   upsert.Bind(1, s.device).Bind(2, s.op).Bind(3, s.size);
                   upsert.Bind(4, ToString(s.source)).Bind(5, s.identity);
                   upsert.Bind(6, s.through_unix_ms).Bind(7, StateToJson(s).dump());
                 });
}

}  // namespace

std::string UnreadablePassiveState::Describe() const {
  return fmt::format(
      "passive_states row (device \"{}\", op \"{}\", size \"{}\", source \"{}\"): expected the "
      "passive judge's state ({{\"tracker\": [...], \"waiting\": [...], \"since_fit\": N}}), "
      "found {}",
      device, op, size, source, why);
}

Status Store::PutPassive(std::span<const StoredPassiveWindow> windows,
                         std::span<const PassiveLearnedMark> learned,
                         std::span<const StoredPassiveState> states) {
  constexpr std::string_view kWhat = "storing the passive judge's windows and states";
  Result<Transaction> transaction = Transaction::Begin(*connection_, kWhat);
  if (!transaction) return ErrorOf(transaction);
  if (Status done = InsertWindows(*connection_, windows, kWhat); !done) return done;
  if (Status done = MarkLearned(*connection_, learned, kWhat); !done) return done;
  if (Status done = UpsertStates(*connection_, states, kWhat); !done) return done;
  return transaction->Commit();
}

Result<std::vector<StoredPassiveState>> Store::PassiveStates(
    std::vector<UnreadablePassiveState>& unreadable) const {
  Result<Statement> select = connection_->Prepare(
      "SELECT device, op, size, source, identity, through_unix_ms, state_json FROM "
      "passive_states ORDER BY device, op, size, source",
      "reading the passive judge's states");
  if (!select) return ErrorOf(select);
  std::vector<StoredPassiveState> out;
  Status done = select->ForEachRow([&](const Statement& row) -> Status {
    StoredPassiveState s;
    s.device = row.Text(0);
    s.op = row.Text(1);
    s.size = row.Text(2);
    const std::string source = row.Text(3);
    s.identity = row.Text(4);
    s.through_unix_ms = row.Int(5);
    try {
      const std::optional<PassiveSource> parsed = PassiveSourceOf(source);
      if (!parsed) throw std::invalid_argument("an unknown source");
      s.source = *parsed;
      StateFromJson(json::parse(row.Text(6)), s);
    } catch (const std::exception& e) {  // nlohmann's, or a figure out of range
      unreadable.push_back({s.device, s.op, s.size, source, e.what()});
      return {};
    }
    out.push_back(std::move(s));
    return {};
  });
  if (!done) return ErrorOf(done);
  return out;
}

Status Store::QuarantinePassiveState(const UnreadablePassiveState& row, int64_t now_unix_ms) {
  constexpr std::string_view kWhat = "moving an unreadable passive state to its quarantine";
  Result<Transaction> transaction = Transaction::Begin(*connection_, kWhat);
  if (!transaction) return ErrorOf(transaction);
  Result<Statement> copy = connection_->Prepare(
      "INSERT INTO passive_states_quarantine (device, op, size, source, identity, "
      "through_unix_ms, state_json, quarantined_unix_ms, reason) SELECT device, op, size, "
      "source, identity, through_unix_ms, state_json, ?5, ?6 FROM passive_states WHERE device "
      "= ?1 AND op = ?2 AND size = ?3 AND source = ?4",
      kWhat);
  if (!copy) return ErrorOf(copy);
  copy->Bind(1, row.device).Bind(2, row.op).Bind(3, row.size).Bind(4, row.source);
  copy->Bind(5, now_unix_ms).Bind(6, row.why);
  if (Status done = copy->Run(); !done) return done;
  Result<Statement> del = connection_->Prepare(
      "DELETE FROM passive_states WHERE device = ?1 AND op = ?2 AND size = ?3 AND source = ?4",
      kWhat);
  if (!del) return ErrorOf(del);
  del->Bind(1, row.device).Bind(2, row.op).Bind(3, row.size).Bind(4, row.source);
  if (Status done = del->Run(); !done) return done;
  return transaction->Commit();
}

Result<std::vector<PassivePoint>> Store::PassiveLearned(std::string_view device,
                                                        std::string_view op, std::string_view size,
                                                        PassiveSource source, size_t limit,
                                                        bool reference) const {
  Result<Statement> select = connection_->Prepare(
      reference ? "SELECT start_unix_ms, end_unix_ms, rate, other_bytes_rate, mean_bytes, steal, "
                  "mean_seconds, requests FROM passive_windows WHERE device = ?1 AND op = ?2 AND "
                  "size = ?3 AND source = ?4 AND reference = 1 ORDER BY end_unix_ms DESC LIMIT ?5"
                : "SELECT start_unix_ms, end_unix_ms, rate, other_bytes_rate, mean_bytes, steal, "
                  "mean_seconds, requests FROM passive_windows WHERE device = ?1 AND op = ?2 AND "
                  "size = ?3 AND source = ?4 AND learned = 1 ORDER BY end_unix_ms DESC LIMIT ?5",
      "reading the windows a passive series learned from");
  if (!select) return ErrorOf(select);
  select->Bind(1, device).Bind(2, op).Bind(3, size).Bind(4, ToString(source));
  select->Bind(5, static_cast<int64_t>(limit));
  std::vector<PassivePoint> out;
  Status done = select->ForEachRow([&](const Statement& row) -> Status {
    PassiveWindow w;
    w.start_ms = row.Int(0);
    w.end_ms = row.Int(1);
    w.rate = row.Real(2);
    w.other_bytes_rate = row.Real(3);
    w.mean_bytes = row.Real(4);
    w.steal = row.Real(5);
    w.mean_seconds = row.Real(6);
    w.requests = static_cast<uint64_t>(std::max<int64_t>(row.Int(7), 0));
    out.push_back(PointOf(w));
    return {};
  });
  if (!done) return ErrorOf(done);
  std::ranges::reverse(out);
  return out;
}

Result<std::vector<StoredPassiveWindow>> Store::PassiveWindows(int64_t from_unix_ms,
                                                               int64_t to_unix_ms) const {
  Result<Statement> select = connection_->Prepare(
      "SELECT device, op, size, source, start_unix_ms, end_unix_ms, requests, mean_seconds, "
      "rate, other_bytes_rate, mean_bytes, steal, queue_depth, utilization, probe, "
      "counters_reset, reason, predicted_seconds, bound_ratio, bad, learned FROM "
      "passive_windows WHERE end_unix_ms >= ?1 AND end_unix_ms < ?2 ORDER BY device, op, size, "
      "source, end_unix_ms",
      "reading the passive judge's windows");
  if (!select) return ErrorOf(select);
  select->Bind(1, from_unix_ms).Bind(2, to_unix_ms);
  std::vector<StoredPassiveWindow> out;
  Status done = select->ForEachRow([&](const Statement& row) -> Status {
    StoredPassiveWindow s;
    PassiveWindow& w = s.window;
    w.device = row.Text(0);
    w.op = row.Text(1);
    w.size = row.Text(2);
    w.source = PassiveSourceOf(row.Text(3)).value_or(PassiveSource::kDiskstats);  // CHECKed
    w.start_ms = row.Int(4);
    w.end_ms = row.Int(5);
    w.requests = static_cast<uint64_t>(std::max<int64_t>(row.Int(6), 0));
    w.mean_seconds = row.Real(7);
    w.rate = row.Real(8);
    w.other_bytes_rate = row.Real(9);
    w.mean_bytes = row.Real(10);
    w.steal = row.Real(11);
    w.queue_depth = row.Real(12);
    w.utilization = row.Real(13);
    w.probe = row.Int(14) != 0;
    w.counters_reset = row.Int(15) != 0;
    s.reason = row.Text(16);
    s.predicted_seconds = row.Real(17);
    s.bound_ratio = row.Real(18);
    s.bad = row.Int(19) != 0;
    s.learned = row.Int(20) != 0;
    out.push_back(std::move(s));
    return {};
  });
  if (!done) return ErrorOf(done);
  return out;
}

namespace {

// Deletes the device's rows of passive_states and passive_windows; returns
// how many states.
Result<int64_t> DeleteDeviceRows(const internal::Connection& connection, std::string_view device,
                                 std::string_view what) {
  int64_t states = 0;
  for (const std::string_view table : {"passive_states", "passive_windows"}) {
    Result<Statement> del =
        connection.Prepare(fmt::format("DELETE FROM {} WHERE device = ?1", table), what);
    if (!del) return ErrorOf(del);
    del->Bind(1, device);
    if (Status done = del->Run(); !done) return ErrorOf(done);
    if (table == "passive_states") states = connection.Changes();
  }
  return states;
}

}  // namespace

Status Store::DeletePassiveDevice(std::string_view device) {
  constexpr std::string_view kWhat = "deleting a disk's passive states and windows";
  Result<Transaction> transaction = Transaction::Begin(*connection_, kWhat);
  if (!transaction) return ErrorOf(transaction);
  if (Result<int64_t> deleted = DeleteDeviceRows(*connection_, device, kWhat); !deleted) {
    return ErrorOf(deleted);
  }
  return transaction->Commit();
}

Result<int64_t> Store::ResetPassiveDevice(std::string_view device, int64_t unix_ms) {
  constexpr std::string_view kWhat = "resetting a disk's passive judge";
  Result<Transaction> transaction = Transaction::Begin(*connection_, kWhat);
  if (!transaction) return ErrorOf(transaction);
  Result<int64_t> deleted = DeleteDeviceRows(*connection_, device, kWhat);
  if (!deleted) return ErrorOf(deleted);
  Result<Statement> note = connection_->Prepare(
      "INSERT OR REPLACE INTO passive_resets (device, unix_ms) VALUES (?1, ?2)", kWhat);
  if (!note) return ErrorOf(note);
  note->Bind(1, device).Bind(2, unix_ms);
  if (Status done = note->Run(); !done) return ErrorOf(done);
  if (Status done = transaction->Commit(); !done) return ErrorOf(done);
  return *deleted;
}

Result<std::vector<std::pair<std::string, int64_t>>> Store::PassiveResetsAfter(
    int64_t unix_ms) const {
  Result<Statement> select = connection_->Prepare(
      "SELECT device, unix_ms FROM passive_resets WHERE unix_ms > ?1 ORDER BY unix_ms, device",
      "reading the passive judge's resets");
  if (!select) return ErrorOf(select);
  select->Bind(1, unix_ms);
  std::vector<std::pair<std::string, int64_t>> out;
  Status done = select->ForEachRow([&](const Statement& row) -> Status {
    out.emplace_back(row.Text(0), row.Int(1));
    return {};
  });
  if (!done) return ErrorOf(done);
  return out;
}

Result<int64_t> Store::PrunePassiveWindows(int64_t unix_ms, size_t keep_learned) {
  constexpr std::string_view kWhat = "pruning the passive judge's windows";
  Result<Transaction> transaction = Transaction::Begin(*connection_, kWhat);
  if (!transaction) return ErrorOf(transaction);
  // Per series, the end of its keep_learned-th newest learned window: the
  // learned ones from there on stay, whatever their age; so do its drift
  // reference's.
  Result<Statement> prune = connection_->Prepare(
      "WITH newer AS (SELECT device, op, size, source, COUNT(*) AS n FROM passive_windows "
      "WHERE learned = 1 AND end_unix_ms >= ?1 GROUP BY device, op, size, source), "
      "old AS (SELECT device, op, size, source, end_unix_ms, learned, ROW_NUMBER() OVER "
      "(PARTITION BY device, op, size, source, learned ORDER BY end_unix_ms DESC) AS rank FROM "
      "passive_windows WHERE end_unix_ms < ?1) "
      "DELETE FROM passive_windows WHERE (device, op, size, source, end_unix_ms) IN (SELECT "
      "old.device, old.op, old.size, old.source, old.end_unix_ms FROM old LEFT JOIN newer USING "
      "(device, op, size, source) WHERE old.learned = 0 OR old.rank > ?2 - COALESCE(newer.n, 0)) "
      "AND reference = 0",
      kWhat);
  if (!prune) return ErrorOf(prune);
  prune->Bind(1, unix_ms).Bind(2, static_cast<int64_t>(keep_learned));
  if (Status done = prune->Run(); !done) return ErrorOf(done);
  const int64_t deleted = connection_->Changes();
  if (Status done = transaction->Commit(); !done) return ErrorOf(done);
  return deleted;
}

}  // namespace iowatch::probes
