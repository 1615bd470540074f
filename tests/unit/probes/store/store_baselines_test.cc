// Store: baselines (put, replace, list, delete), pruning around them, and the
// JSON export/import with its error messages.
#include <gtest/gtest.h>

#include "probes/store/store.h"
#include "probes/store/store_json.h"
#include "tests/unit/probes/store/store_test_util.h"

namespace iowatch::probes {
namespace {

size_t Count(const std::string& text, std::string_view what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Every baseline as the exchange document, as `iowatch baseline export` writes it.
Result<std::string> ExportOf(const Store& store) {
  Result<std::vector<StoredBaseline>> baselines = store.ListBaselines();
  if (!baselines) return ErrorOf(baselines);
  return BaselinesToJson(*baselines);
}

using test_store::ScratchDir;
using test_store::SeriesRun;

Baseline MakeBaseline(std::string job, std::string device, std::vector<int64_t> run_ids) {
  Baseline b;
  b.job = std::move(job);
  b.fingerprint = JobFingerprint(test_store::SampleSpec());
  b.device = std::move(device);
  b.model = "Samsung SSD 980 PRO 1TB";
  b.created_unix_ms = 1717243200123;
  b.run_ids = std::move(run_ids);
  b.metrics = {{"read", "iops", 12873.5, 211.25},
               {"read", "clat_p99_seconds", 0.000412, 1.5e-5},
               {"write", "bandwidth_bytes", 3.1e8, 0}};
  return b;
}

class StoreBaselines : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<Store> opened = Store::Open(dir_.Db());
    ASSERT_TRUE(opened) << opened.error().ToString();
    store_.emplace(std::move(*opened));
    for (int64_t start = 1000; start <= 5000; start += 1000) {
      Result<int64_t> id = store_->AddRun(SeriesRun("a", "8:0", start));
      ASSERT_TRUE(id);
      ids_.push_back(*id);
    }
  }

  ScratchDir dir_;
  std::optional<Store> store_;
  std::vector<int64_t> ids_;
};

TEST_F(StoreBaselines, PutGetReplaceListDelete) {
  const Baseline first = MakeBaseline("a", "8:0", {ids_[0], ids_[1], ids_[2]});
  Result<int64_t> id = store_->PutBaseline(first);
  ASSERT_TRUE(id) << id.error().ToString();
  Result<std::optional<StoredBaseline>> got = store_->GetBaseline("a", first.fingerprint, "8:0");
  ASSERT_TRUE(got && got->has_value());
  EXPECT_EQ((*got)->id, *id);
  EXPECT_EQ((*got)->baseline, first);
  EXPECT_FALSE((*got)->pinned);
  EXPECT_EQ((*got)->run_count, 3);

  Result<std::optional<StoredBaseline>> none = store_->GetBaseline("a", "other", "8:0");
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());

  // Same job, fingerprint and device: replaced, not added.
  Baseline second = MakeBaseline("a", "8:0", {ids_[4], ids_[3]});
  second.metrics.pop_back();
  second.created_unix_ms += 1;
  ASSERT_TRUE(store_->PutBaseline(second, true));
  got = store_->GetBaseline("a", first.fingerprint, "8:0");
  ASSERT_TRUE(got && got->has_value());
  EXPECT_EQ((*got)->baseline, second);  // run ids in the order given
  EXPECT_TRUE((*got)->pinned);

  ASSERT_TRUE(store_->PutBaseline(MakeBaseline("a", "8:16", {})));
  ASSERT_TRUE(store_->PutBaseline(MakeBaseline("0-first", "8:0", {ids_[0]})));
  Result<std::vector<StoredBaseline>> all = store_->ListBaselines();
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].baseline.job, "0-first");
  EXPECT_EQ((*all)[1].baseline.device, "8:0");
  EXPECT_EQ((*all)[2].baseline.device, "8:16");

  Result<int64_t> deleted = store_->DeleteBaselines("a");
  ASSERT_TRUE(deleted);
  EXPECT_EQ(*deleted, 2);
  all = store_->ListBaselines();
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ(store_->DeleteBaselines("nobody").value_or(-1), 0);
  // The runs stay.
  EXPECT_EQ(store_->RecentRuns("a", "", "", 100)->size(), ids_.size());
}

// Adversarial review: after a reset the learner must not find the
// runs of before it, even older-looking new ones (a clock set back).
TEST_F(StoreBaselines, AfterAResetOnlyLaterRunsAreLearnedFrom) {
  const auto fingerprint = store_->GetRun(ids_[0])->fingerprint;
  const auto learnable = [&](BaselineRuns which) {
    const Result<std::vector<RunRecord>> runs =
        store_->RunsForBaseline("a", fingerprint, "8:0", 10, which);
    std::vector<int64_t> out;
    for (const RunRecord& run : runs.value()) out.push_back(run.id);
    return out;
  };
  EXPECT_EQ(learnable(BaselineRuns::kFirst), ids_);
  ASSERT_TRUE(store_->DeleteBaselines("a"));
  EXPECT_TRUE(learnable(BaselineRuns::kFirst).empty());
  EXPECT_TRUE(learnable(BaselineRuns::kLast).empty());
  const Result<int64_t> later = store_->AddRun(SeriesRun("a", "8:0", 500));  // clock set back
  ASSERT_TRUE(later);
  EXPECT_EQ(learnable(BaselineRuns::kFirst), std::vector<int64_t>{*later});
  // A job without a reset is untouched by another's.
  ASSERT_TRUE(store_->AddRun(SeriesRun("b", "8:0", 100)));
  EXPECT_EQ(store_->RunsForBaseline("b", fingerprint, "8:0", 10, BaselineRuns::kFirst)->size(), 1u);
}

TEST_F(StoreBaselines, ABaselineMustReferToStoredRunsAndFiniteValues) {
  Result<int64_t> put = store_->PutBaseline(MakeBaseline("a", "8:0", {ids_[0], 999}));
  ASSERT_FALSE(put);
  EXPECT_EQ(
      put.error().ToString(),
      dir_.Db().string() + ": baseline of job \"a\" refers to run 999, which is not in the store");
  EXPECT_TRUE(store_->ListBaselines()->empty());  // nothing half-written

  Baseline nan = MakeBaseline("a", "8:0", {});
  nan.metrics[0].median = std::numeric_limits<double>::quiet_NaN();
  put = store_->PutBaseline(nan);
  ASSERT_FALSE(put);
  EXPECT_EQ(put.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(put.error().message.find("read iops is not finite"), std::string::npos);

  put = store_->PutBaseline(MakeBaseline("", "8:0", {}));
  ASSERT_FALSE(put);
  EXPECT_EQ(put.error().code, ErrorCode::kInvalidArgument);
  // What the store holds, an export writes and an import must take back:
  // no control characters in names (found by adversarial testing).
  Baseline tab = MakeBaseline("a", "8:0", {});
  tab.model = "Model\tX";
  put = store_->PutBaseline(tab);
  ASSERT_FALSE(put);
  EXPECT_NE(put.error().message.find("control character"), std::string::npos)
      << put.error().message;
}

TEST_F(StoreBaselines, PruneKeepsTheRunsABaselineWasBuiltFrom) {
  ASSERT_TRUE(store_->PutBaseline(MakeBaseline("a", "8:0", {ids_[0], ids_[2]})));
  Result<int64_t> pruned = store_->PruneRunsBefore(4000);  // runs at 1000, 2000, 3000
  ASSERT_TRUE(pruned) << pruned.error().ToString();
  EXPECT_EQ(*pruned, 1);  // 2000; 1000 and 3000 belong to the baseline
  EXPECT_TRUE(store_->GetRun(ids_[0]));
  EXPECT_FALSE(store_->GetRun(ids_[1]));
  Result<RunRecord> kept = store_->GetRun(ids_[2]);
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->result.read.clat_histogram.Count(), kept->result.read.ios);  // whole

  // Once the baseline is gone its runs age out like the others.
  ASSERT_TRUE(store_->DeleteBaselines("a"));
  EXPECT_EQ(store_->PruneRunsBefore(4000).value_or(-1), 2);
  EXPECT_EQ(store_->RecentRuns("", "", "", 100)->size(), 2u);
}

TEST_F(StoreBaselines, ExportThenImportRoundTrips) {
  Baseline odd = MakeBaseline("a", "8:0", {ids_[0], ids_[1]});
  odd.model = "Model \"X\" \\ ünïcode";
  odd.metrics.push_back({"read", "clat_mean_seconds", 1.0 / 3, 0.1 + 0.2});
  ASSERT_TRUE(store_->PutBaseline(odd));
  ASSERT_TRUE(store_->PutBaseline(MakeBaseline("b", "259:0", {})));
  ASSERT_TRUE(store_->PutBaseline(MakeBaseline("c", "259:0", {})));
  ASSERT_TRUE(store_->DeleteBaselines("c"));  // an empty metric list also round-trips
  Baseline empty = MakeBaseline("d", "259:0", {});
  empty.metrics.clear();
  ASSERT_TRUE(store_->PutBaseline(empty));
  Result<std::string> json = ExportOf(*store_);
  ASSERT_TRUE(json);
  EXPECT_TRUE(json->starts_with("{\n  \"iowatch_baselines\": 1,\n  \"baselines\": [\n"));

  ScratchDir other_dir;
  Result<Store> other = Store::Open(other_dir.Db());
  ASSERT_TRUE(other);
  Result<int64_t> imported = other->ImportBaselines(*json);
  ASSERT_TRUE(imported) << imported.error().ToString();
  EXPECT_EQ(*imported, 3);
  Result<std::vector<StoredBaseline>> mine = store_->ListBaselines();
  Result<std::vector<StoredBaseline>> theirs = other->ListBaselines();
  ASSERT_TRUE(mine && theirs);
  ASSERT_EQ(theirs->size(), mine->size());
  for (size_t i = 0; i < mine->size(); ++i) {
    Baseline want = (*mine)[i].baseline;
    want.run_ids.clear();  // run ids are local to a host
    EXPECT_EQ((*theirs)[i].baseline, want);
    EXPECT_TRUE((*theirs)[i].pinned);
    EXPECT_EQ((*theirs)[i].run_count, (*mine)[i].run_count);
  }
  // And the export of the import is the same document.
  EXPECT_EQ(ExportOf(*other).value_or(""), *json);

  // Importing again replaces rather than duplicates.
  ASSERT_TRUE(other->ImportBaselines(*json));
  EXPECT_EQ(other->ListBaselines()->size(), 3u);
}

// A load band's baseline travels with its band; a clean one is written
// without the key, so documents from before bands read and write the same.
TEST_F(StoreBaselines, BandsRoundTripThroughTheExport) {
  Baseline clean = MakeBaseline("a", "8:0", {});
  Baseline band = clean;
  band.band = 4;
  band.metrics[0].median /= 2;
  ASSERT_TRUE(store_->PutBaseline(clean));
  ASSERT_TRUE(store_->PutBaseline(band));
  Result<std::string> json = ExportOf(*store_);
  ASSERT_TRUE(json);
  EXPECT_EQ(Count(*json, "\"band\": 4,"), 1u) << *json;
  EXPECT_EQ(Count(*json, "\"band\""), 1u) << *json;
  ScratchDir other_dir;
  Result<Store> other = Store::Open(other_dir.Db());
  ASSERT_TRUE(other);
  ASSERT_EQ(other->ImportBaselines(*json).value_or(-1), 2);
  Result<std::vector<StoredBaseline>> theirs = other->ListBaselines();
  ASSERT_TRUE(theirs);
  ASSERT_EQ(theirs->size(), 2u);
  EXPECT_EQ((*theirs)[0].baseline.band, 0);
  EXPECT_EQ((*theirs)[1].baseline.band, 4);
  EXPECT_EQ((*theirs)[1].baseline.metrics, band.metrics);
  EXPECT_EQ(ExportOf(*other).value_or(""), *json);
}

TEST_F(StoreBaselines, AModelThatIsNotUtf8ExportsAsReplacementCharactersAndImports) {
  Baseline odd = MakeBaseline("a", "8:0", {ids_[0]});
  odd.model = "WDC\xFFWD10\xC3";  // firmware bytes, as sysfs may hand them over
  ASSERT_TRUE(store_->PutBaseline(odd));
  Result<std::string> json = ExportOf(*store_);
  ASSERT_TRUE(json);
  ScratchDir other_dir;
  Result<Store> other = Store::Open(other_dir.Db());
  ASSERT_TRUE(other);
  Result<int64_t> imported = other->ImportBaselines(*json);
  ASSERT_TRUE(imported) << imported.error().ToString();
  EXPECT_EQ(other->ListBaselines()->at(0).baseline.model, "WDC\xEF\xBF\xBDWD10\xEF\xBF\xBD");
}

TEST_F(StoreBaselines, AnEmptyStoreExportsAnEmptyList) {
  Result<std::string> json = ExportOf(*store_);
  ASSERT_TRUE(json);
  EXPECT_EQ(*json, "{\n  \"iowatch_baselines\": 1,\n  \"baselines\": []\n}\n");
  EXPECT_EQ(store_->ImportBaselines(*json).value_or(-1), 0);
}

// A valid document with one substitution: `field` replaced by `replacement`
// (the text between the key's colon and the next ',' or '}').
std::string Document(std::string_view field = "", std::string_view replacement = "") {
  std::string doc =
      "{\n"
      "  \"iowatch_baselines\": 1,\n"
      "  \"baselines\": [\n"
      "    {\"job\": \"a\", \"fingerprint\": \"rw=read\", \"device\": \"8:0\", \"model\": \"\",\n"
      "     \"created_unix_ms\": 1717243200000, \"runs\": 5,\n"
      "     \"metrics\": [{\"op\": \"read\", \"metric\": \"iops\", \"median\": 100, "
      "\"spread\": 2.5}]}\n"
      "  ]\n"
      "}\n";
  if (field.empty()) return doc;
  const size_t key = doc.find(fmt::format("\"{}\": ", field));
  const size_t start = key + field.size() + 4;
  const size_t end = doc.find_first_of(",}", start);
  return doc.replace(start, end - start, replacement);
}

std::string ImportError(std::string_view json) {
  ScratchDir dir;
  Result<Store> store = Store::Open(dir.Db());
  if (!store) return "cannot open: " + store.error().ToString();
  Result<int64_t> imported = store->ImportBaselines(json, "golden.json");
  if (imported) return "imported " + std::to_string(*imported);
  if (!store->ListBaselines()->empty()) return "a failed import stored something";
  return imported.error().ToString();
}

TEST(StoreBaselinesJson, TheTemplateDocumentImports) {
  EXPECT_EQ(ImportError(Document()), "imported 1");
}

TEST(StoreBaselinesJson, ABandIsAnIntegerFrom0To64) {
  std::string with_band = Document();
  with_band.insert(with_band.find("\"created_unix_ms\""), "\"band\": 3, ");
  EXPECT_EQ(ImportError(with_band), "imported 1");
  std::string too_far = Document();
  too_far.insert(too_far.find("\"created_unix_ms\""), "\"band\": 65, ");
  EXPECT_NE(ImportError(too_far).find("baselines[0].band: expected a load band from 0 to 64, "
                                      "found 65"),
            std::string::npos)
      << ImportError(too_far);
  std::string negative = Document();
  negative.insert(negative.find("\"created_unix_ms\""), "\"band\": -1, ");
  EXPECT_NE(ImportError(negative).find("baselines[0].band"), std::string::npos)
      << ImportError(negative);
  // Two baselines of one series in different bands are fine; in one band, not.
  std::string two = Document();
  const size_t object = two.find("    {");
  const size_t end = two.find("\n  ]");
  std::string second = two.substr(object, end - object);
  second.insert(second.find("\"created_unix_ms\""), "\"band\": 2, ");
  two.insert(end, ",\n" + second);
  EXPECT_EQ(ImportError(two), "imported 2");
}

// The firmware rides in the document only (the store keeps none): written when
// known, read back, a string or refused.
TEST(StoreBaselinesJson, TheFirmwareIsAnOptionalString) {
  std::string with_firmware = Document();
  with_firmware.insert(with_firmware.find("\"created_unix_ms\""), "\"firmware\": \"5B2Q\", ");
  Result<std::vector<StoredBaseline>> read = BaselinesFromJson(with_firmware, "t");
  ASSERT_TRUE(read) << read.error().ToString();
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ((*read)[0].firmware, "5B2Q");
  const std::string written = BaselinesToJson(*read);
  EXPECT_NE(written.find("\"firmware\": \"5B2Q\",\n"), std::string::npos) << written;
  EXPECT_EQ((*BaselinesFromJson(written, "t"))[0].firmware, "5B2Q");
  (*read)[0].firmware.clear();
  EXPECT_EQ(BaselinesToJson(*read).find("firmware"), std::string::npos);

  std::string number = Document();
  number.insert(number.find("\"created_unix_ms\""), "\"firmware\": 3, ");
  EXPECT_NE(ImportError(number).find("baselines[0].firmware: expected a string"), std::string::npos)
      << ImportError(number);
}

TEST(StoreBaselinesJson, ErrorsSayWhereAndWhatWasExpected) {
  const std::pair<std::string, std::string> cases[] = {
      {Document("iowatch_baselines", "2"),
       "golden.json:2:24: iowatch_baselines: unsupported version 2 (this iowatch reads version 1)"},
      {Document("iowatch_baselines", "\"1\""),
       "golden.json:2:24: iowatch_baselines: expected a non-negative integer, found a string"},
      {Document("runs", "\"5\""),
       "golden.json:5:48: baselines[0].runs: expected a non-negative integer, found a string"},
      {Document("runs", "-1"),
       "golden.json:5:48: baselines[0].runs: expected a non-negative integer, found -1"},
      {Document("median", "null"),
       "golden.json:6:61: baselines[0].metrics[0].median: expected a finite number > 0, found "
       "null"},
      {Document("spread", "-1"),
       "golden.json:6:76: baselines[0].metrics[0].spread: expected a finite number >= 0, found -1"},
      {Document("op", "\"trim\""),
       "golden.json:6:25: baselines[0].metrics[0].op: expected \"read\" or \"write\", found "
       "\"trim\""},
      {Document("device", "\"\""),
       "golden.json:4:54: baselines[0].device: expected a non-empty string, found \"\""},
      {Document("median", "1e999"),
       "golden.json:6:61: baselines[0].metrics[0].median: expected a finite number > 0, found "
       "1e999"},
      // Adversarial tests: escape sequences reached the
      // terminal through `baseline list`, and a median of 0 was imported.
      {Document("median", "0"),
       "golden.json:6:61: baselines[0].metrics[0].median: expected a finite number > 0, found 0"},
      {Document("median", "-3"),
       "golden.json:6:61: baselines[0].metrics[0].median: expected a finite number > 0, found -3"},
      {Document("model", "\"\\u001b[2Jgotcha\""),
       "golden.json:4:70: baselines[0].model: expected a string without control characters, "
       "found U+001B at byte 0"},
      {Document("job", "\"a\\nb\""),
       "golden.json:4:13: baselines[0].job: expected a non-empty string without control "
       "characters, found U+000A at byte 1"},
      {"{\"iowatch_baselines\": 1}", "golden.json:1:1: missing \"baselines\" (an array)"},
      {"{\"baselines\": []}",
       "golden.json:1:1: missing \"iowatch_baselines\" (a non-negative integer)"},
      {"[]",
       "golden.json:1:1: document: expected an object {\"iowatch_baselines\": 1, \"baselines\": "
       "[...]}, found an array"},
      {"{\"iowatch_baselines\": 1, \"baselines\": [], \"extra\": 0}",
       "golden.json:1:43: unknown key \"extra\" (expected iowatch_baselines, baselines)"},
      {"{\"iowatch_baselines\": 1, \"baselines\": [7]}",
       "golden.json:1:40: baselines[0]: expected a baseline object, found a number"},
      {"{\"iowatch_baselines\": 1, \"baselines\": [], }",
       "golden.json:1:43: expected a key in double quotes, found '}'"},
      {"{\"iowatch_baselines\": 1, \"iowatch_baselines\": 1}",
       "golden.json:1:26: duplicate key \"iowatch_baselines\""},
      {"{\"iowatch_baselines\": 01}", "golden.json:1:24: a number has no leading zeros"},
      {"{\"iowatch_baselines\": 1",
       "golden.json:1:24: expected ',' or '}', found the end of the input"},
      {"{\"a\": \"tab\there\"}",
       "golden.json:1:11: control character 0x09 in a string (escape it)"},
      {"{\"a\": \"\\ud800\"}",
       "golden.json:1:14: expected a low surrogate \\uDC00-\\uDFFF, found '\"'"},
      {"", "golden.json:1:1: expected a value, found the end of the input"},
      {"{} x", "golden.json:1:4: expected the end of the document after the value"},
  };
  for (const auto& [json, want] : cases) EXPECT_EQ(ImportError(json), want) << json;

  // Duplicates inside one document.
  std::string twice = Document();
  const size_t object = twice.find("    {");
  const size_t end = twice.find("\n  ]");
  twice.insert(end, ",\n" + twice.substr(object, end - object));
  EXPECT_EQ(ImportError(twice),
            "golden.json:7:5: baselines[1]: a second baseline for job \"a\" on device 8:0 with "
            "the same fingerprint and band");
  std::string metric_twice = Document();
  const size_t metric = metric_twice.find("{\"op\"");
  const size_t metric_end = metric_twice.find('}', metric) + 1;
  metric_twice.insert(metric_end, ", " + metric_twice.substr(metric, metric_end - metric));
  EXPECT_EQ(ImportError(metric_twice),
            "golden.json:6:82: baselines[0].metrics[1]: read iops appears twice");
}

// Each way a document can break the syntax, placed and worded as before
// nlohmann read it (these pin how its errors are translated).
TEST(StoreBaselinesJson, SyntaxErrorsPointAtTheByte) {
  const std::pair<std::string, std::string> cases[] = {
      {"{\"a\": \x01}", "golden.json:1:7: expected a value, found byte 0x01"},
      {"{\"a\": tru}", "golden.json:1:7: expected a value, found 't'"},
      {"{\"a\" 1}", "golden.json:1:6: expected ':', found '1'"},
      {"[1 2]", "golden.json:1:4: expected ',' or ']', found '2'"},
      {"[1,]", "golden.json:1:4: expected a value, found ']'"},
      {"{,}", "golden.json:1:2: expected a key in double quotes, found ','"},
      {"[-]", "golden.json:1:3: expected a digit, found ']'"},
      {"[1e+]", "golden.json:1:5: expected a digit, found ']'"},
      {"[\"\\x\"]",
       "golden.json:1:4: expected an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX), found "
       "'x'"},
      {"[\"a\\",
       "golden.json:1:5: expected an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t "
       "\\uXXXX), found the end of the input"},
      {"[\"\\u12G4\"]", "golden.json:1:7: expected four hex digits after \\u, found 'G'"},
      {"[\"\\udc00\"]", "golden.json:1:9: unpaired low surrogate in \\u escape"},
      {"[\"\\ud800\\u0041\"]", "golden.json:1:15: expected a low surrogate \\uDC00-\\uDFFF"},
      {"[\"\\ud800\\x\"]", "golden.json:1:10: expected a low surrogate \\uDC00-\\uDFFF, found 'x'"},
      {"[\"abc", "golden.json:1:6: unterminated string"},
      {"{\"a\": -01}", "golden.json:1:9: a number has no leading zeros"},
      {"// c\n{}", "golden.json:1:1: expected a value, found '/'"},
      {"\xef\xbb\xbf{}", "golden.json:1:1: expected a value, found byte 0xef"},
      {std::string("{}\0", 3), "golden.json:1:3: expected the end of the document after the value"},
      {"[1]\n\n  ]", "golden.json:3:3: expected the end of the document after the value"},
      {"{\"a\":\n  {\"b\": [1, 2,\n   {\"c\": nul}]}}",
       "golden.json:3:10: expected a value, found 'n'"},
      {"{\"\\u00e9\": 1, \"\xc3\xa9\": 2}", "golden.json:1:15: duplicate key \"\xc3\xa9\""},
      // New with nlohmann: RFC 8259 strings are UTF-8.
      {"[\"\xc3(\"]", "golden.json:1:4: expected UTF-8 in a string, found '('"},
      // Beyond long double (1e999 is a number the field check refuses).
      {"[1e5000]", "golden.json:1:2: expected a finite number, found 1e5000"},
  };
  for (const auto& [json, want] : cases) EXPECT_EQ(ImportError(json), want) << json;
}

// fuzz_baseline_json's finding: nlohmann's message quotes the input after
// "; last read:", so a string holding the words of another error was taken
// for it, and an unterminated string at the end of the input read one byte
// past it (ASan: heap-buffer-overflow).
TEST(StoreBaselinesJson, ErrorWordsInsideTheInputAreNotTakenForTheError) {
  const std::string found = "{\n  \"icontrol characterowaVV\xda";
  const std::string error = ImportError(found);
  EXPECT_EQ(error.find("control character"), std::string::npos) << error;
  EXPECT_EQ(error.rfind("golden.json:2:", 0), 0u) << error;
  const std::string quoted = ImportError("[\"missing closing quote \x01\"]");
  EXPECT_NE(quoted.find("control character 0x01"), std::string::npos) << quoted;
}

TEST(StoreBaselinesJson, ATenMegabyteExportImports) {
  std::vector<StoredBaseline> many(3500);
  for (size_t i = 0; i < many.size(); ++i) {
    Baseline& b = many[i].baseline;
    b = MakeBaseline(fmt::format("job-{:04}", i), "259:0", {});  // in ListBaselines order
    for (int m = 0; m < 30; ++m) {
      b.metrics.push_back({"write", fmt::format("clat_p{}_seconds", m), 1e-4 * (m + 1), 1e-6 * m});
    }
    many[i].run_count = 5;
  }
  const std::string json = BaselinesToJson(many);
  ASSERT_GE(json.size(), size_t{10} << 20);
  ScratchDir dir;
  Result<Store> store = Store::Open(dir.Db());
  ASSERT_TRUE(store) << store.error().ToString();
  Result<int64_t> imported = store->ImportBaselines(json, "big.json");
  ASSERT_TRUE(imported) << imported.error().ToString();
  EXPECT_EQ(*imported, 3500);
  EXPECT_EQ(ExportOf(*store).value_or(""), json);
}

TEST(StoreBaselinesJson, DeepNestingIsRefusedNotACrash) {
  const std::string deep(100000, '[');
  EXPECT_EQ(ImportError(deep), "golden.json:1:33: nested deeper than 32");
}

TEST(StoreBaselinesJson, StringEscapesDecode) {
  std::string json = Document("model", R"("\"\\\/")");
  const auto put = [&json](std::string_view value, std::string_view with) {
    json.replace(json.find(value), value.size(), with);
  };
  put(R"("a")", R"("\u00e9\u20ac\ud83d\ude00")");
  put(R"("8:0")", R"("é")");
  Result<std::vector<StoredBaseline>> read = BaselinesFromJson(json, "t");
  ASSERT_TRUE(read) << read.error().ToString();
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ((*read)[0].baseline.model, "\"\\/");  // \b \f \n \r \t: refused, see above
  EXPECT_EQ((*read)[0].baseline.job, "\u00e9\u20ac\U0001F600");
  EXPECT_EQ((*read)[0].baseline.device, "é");
}

}  // namespace
}  // namespace iowatch::probes
