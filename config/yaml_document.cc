#include "config/yaml_document.h"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include <sstream>
#include <vector>

namespace iowatch::config::internal {
namespace {

// Where each document starts and where its first node is, for at most two
// documents: a parser's events, nothing built.
class DocumentMarks : public YAML::EventHandler {
 public:
  struct Document {
    YAML::Mark start;
    YAML::Mark first_node = YAML::Mark::null_mark();
  };
  const std::vector<Document>& documents() const { return documents_; }

  void OnDocumentStart(const YAML::Mark& mark) override { documents_.push_back({mark}); }
  void OnDocumentEnd() override {}
  // An empty document's null is marked at the next token: its start is better.
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override {
    Node(documents_.empty() ? mark : documents_.back().start);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { Node(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    Node(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    Node(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Node(mark);
  }
  void OnMapEnd() override {}

 private:
  void Node(const YAML::Mark& mark) {
    if (!documents_.empty() && documents_.back().first_node.is_null()) {
      documents_.back().first_node = mark;
    }
  }
  std::vector<Document> documents_;
};

}  // namespace

YamlDocument ReadOneDocument(std::string_view yaml_text) {
  std::istringstream stream{std::string(yaml_text)};
  YAML::Parser parser(stream);
  DocumentMarks marks;
  // Two turns at most: a second document is an error either way.
  while (marks.documents().size() < 2 && parser.HandleNextDocument(marks)) {
  }
  const auto& documents = marks.documents();
  if (documents.empty()) return NoDocument{};
  if (documents.size() == 2 && documents[1].start.pos == documents[0].start.pos) {
    // The parser did not move: a token no document can start with.
    const size_t at = static_cast<size_t>(documents[0].start.pos);
    const char token = at < yaml_text.size() ? yaml_text[at] : ' ';
    return YamlRefusal{documents[0].start,
                       token == ',' ? std::string("invalid YAML: ',' outside a flow list or map")
                                    : fmt::format("invalid YAML: unexpected '{}'", token)};
  }
  if (documents.size() == 2) {
    const YAML::Mark at =
        documents[1].first_node.is_null() ? documents[1].start : documents[1].first_node;
    return YamlRefusal{at, "expected one YAML document, found more"};
  }
  return YAML::Load(std::string(yaml_text));
}

}  // namespace iowatch::config::internal
