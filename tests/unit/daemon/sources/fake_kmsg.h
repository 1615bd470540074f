// A /dev/kmsg for tests: the records a test appends, one per Next(), then
// "caught up"; an overrun or a read error where the test puts one (an error
// once: a reader opened again does not meet it). Shared by
// the streams it opens, so a test can add records between samples and open it
// again as a restarted daemon would.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collectors/kmsg/kmsg_stream.h"

namespace iowatch::testing {

class FakeKmsg {
 public:
  struct Entry {
    std::string record;  // "" with overrun or error
    bool overrun = false;
    bool error = false;
    bool spent = false;  // an error fails one read in all, as a real one would
  };

  // "PRIO,SEQ,USEC,-;TEXT\n"
  void Add(uint64_t sequence, const std::string& text, int priority = 3) {
    entries_->push_back({std::to_string(priority) + "," + std::to_string(sequence) + "," +
                             std::to_string(sequence * 1000) + ",-;" + text + "\n",
                         false, false});
  }
  void AddRaw(std::string bytes) { entries_->push_back({std::move(bytes), false, false}); }
  void Overrun() { entries_->push_back({"", true, false}); }
  void Fail() { entries_->push_back({"", false, true}); }

  // What SamplerOptions::kmsg.open takes: a new reader from the first record.
  auto Opener() {
    return [entries = entries_]() -> Result<std::unique_ptr<collectors::KmsgStream>> {
      return std::unique_ptr<collectors::KmsgStream>(std::make_unique<Stream>(entries));
    };
  }

 private:
  class Stream final : public collectors::KmsgStream {
   public:
    explicit Stream(std::shared_ptr<std::vector<Entry>> entries) : entries_(std::move(entries)) {}
    Result<Read> Next() override {
      while (next_ < entries_->size() && (*entries_)[next_].spent) ++next_;
      if (next_ == entries_->size()) return Read{};
      Entry& e = (*entries_)[next_++];
      if (e.error) {
        e.spent = true;
        return std::unexpected(Error::Io("the fake log failed", "/dev/kmsg", 5));
      }
      if (e.overrun) return Read{std::nullopt, true};
      return Read{e.record, false};
    }

   private:
    std::shared_ptr<std::vector<Entry>> entries_;
    size_t next_ = 0;
  };
  std::shared_ptr<std::vector<Entry>> entries_ = std::make_shared<std::vector<Entry>>();
};

}  // namespace iowatch::testing
