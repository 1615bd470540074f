// ReadNvmeControllers on node_exporter's sysfs fixture (one live controller
// with a namespace), on the hand-made controllers resetting, dead and being
// deleted (tests/fixtures/nvme-states), and on malformed attributes (the
// path, line 1 and what was expected).
#include "collectors/nvme/nvme_class.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/unit/source_tree.h"
#include "tests/unit/test_files.h"

namespace iowatch::collectors {
namespace {

std::vector<NvmeController> NvmeFixtureControllers(const std::string& tree) {
  const auto controllers =
      ReadNvmeControllers(FileTree(iowatch::testing::FixturesDir() + "/" + tree));
  EXPECT_TRUE(controllers) << controllers.error().ToString();
  return controllers ? *controllers : std::vector<NvmeController>{};
}

void WriteNvmeFile(const std::filesystem::path& root, const std::string& relative,
                   const std::string& content) {
  const std::filesystem::path path = root / relative;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << content;
}

// A live controller with one namespace, written in core.c's formats.
void WriteNvmeLiveController(const std::filesystem::path& root) {
  WriteNvmeFile(root, "class/nvme/nvme4/model", "Test NVMe Controller                    \n");
  WriteNvmeFile(root, "class/nvme/nvme4/serial", "SERIAL4             \n");
  WriteNvmeFile(root, "class/nvme/nvme4/firmware_rev", "1.0     \n");
  WriteNvmeFile(root, "class/nvme/nvme4/state", "live\n");
  WriteNvmeFile(root, "class/nvme/nvme4/cntlid", "1\n");
  WriteNvmeFile(root, "class/nvme/nvme4/nvme4n1/size", "2048\n");
  WriteNvmeFile(root, "class/nvme/nvme4/nvme4n1/nuse", "100\n");
  WriteNvmeFile(root, "class/nvme/nvme4/nvme4n1/queue/logical_block_size", "512\n");
}

TEST(NvmeClassNodeExporterFixture, OneLiveControllerWithItsNamespace) {
  const auto controllers = NvmeFixtureControllers("node-exporter/sys");
  ASSERT_EQ(controllers.size(), 1u);
  const NvmeController& nvme0 = controllers[0];
  EXPECT_EQ(nvme0.name, "nvme0");
  EXPECT_EQ(nvme0.model, "Samsung SSD 970 PRO 512GB");
  EXPECT_EQ(nvme0.serial, "S680HF8N190894I");
  EXPECT_EQ(nvme0.firmware_rev, "1B2QEXP7");
  EXPECT_EQ(nvme0.state, "live");
  EXPECT_EQ(nvme0.cntlid, "1997");
  ASSERT_EQ(nvme0.namespaces.size(), 1u);
  const NvmeNamespace& ns = nvme0.namespaces[0];
  EXPECT_EQ(ns.name, "nvme0n1");
  EXPECT_EQ(ns.nsid, "1");
  EXPECT_EQ(ns.size_sectors, 3906250000u);
  EXPECT_EQ(ns.used_blocks, 488281250u);
  EXPECT_EQ(ns.logical_block_size, 4096u);
  EXPECT_EQ(ns.ana_state, "optimized");
  const NodeNvmeNamespaceFigures figures = NodeExporterNvmeNamespaceFigures(ns);
  EXPECT_EQ(figures.size_bytes, 3906250000ull * 4096);
  EXPECT_EQ(figures.capacity_bytes, figures.size_bytes);
  EXPECT_EQ(figures.used_bytes, 488281250ull * 4096);
}

TEST(NvmeClassStates, ResettingDeadAndDeletingAsTheKernelNamesThem) {
  const auto controllers = NvmeFixtureControllers("nvme-states/sys");
  ASSERT_EQ(controllers.size(), 3u);
  EXPECT_EQ(controllers[0].state, "resetting");
  ASSERT_EQ(controllers[0].namespaces.size(), 1u);
  EXPECT_EQ(controllers[0].namespaces[0].ana_state, std::nullopt);
  EXPECT_EQ(NodeExporterNvmeNamespaceFigures(controllers[0].namespaces[0]).ana_state, "unknown");
  EXPECT_EQ(controllers[1].state, "dead");
  EXPECT_EQ(controllers[1].model, "WUS5EA138ESP7E3");
  EXPECT_TRUE(controllers[1].namespaces.empty());
  EXPECT_EQ(controllers[2].state, "deleting (no IO)");
}

TEST(NvmeClassTree, PaddingTrimmedAndOnlyNamespaceDevicesRead) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  WriteNvmeLiveController(dir.path());
  // Native multipath's path device and the generic character device are no
  // namespaces of their own; nvme-fabrics is no controller.
  WriteNvmeFile(dir.path(), "class/nvme/nvme4/nvme4c4n1/size", "2048\n");
  WriteNvmeFile(dir.path(), "class/nvme/nvme4/ng4n1/dev", "240:0\n");
  WriteNvmeFile(dir.path(), "class/nvme/nvme-fabrics/dev", "10:123\n");
  const auto controllers = ReadNvmeControllers(FileTree(dir.path()));
  ASSERT_TRUE(controllers) << controllers.error().ToString();
  ASSERT_EQ(controllers->size(), 1u);
  EXPECT_EQ((*controllers)[0].model, "Test NVMe Controller");
  EXPECT_EQ((*controllers)[0].serial, "SERIAL4");
  ASSERT_EQ((*controllers)[0].namespaces.size(), 1u);
  EXPECT_EQ((*controllers)[0].namespaces[0].name, "nvme4n1");
}

TEST(NvmeClassTree, NoClassNvmeIsNotFound) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::filesystem::create_directories(dir.path() / "class/block");
  const auto controllers = ReadNvmeControllers(FileTree(dir.path()));
  ASSERT_FALSE(controllers);
  EXPECT_EQ(controllers.error().code, ErrorCode::kNotFound);
}

TEST(NvmeClassMalformed, NonNumericNamespaceSizeNamesThePathAndLine) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  WriteNvmeLiveController(dir.path());
  WriteNvmeFile(dir.path(), "class/nvme/nvme4/nvme4n1/size", "2 TB\n");
  const auto controllers = ReadNvmeControllers(FileTree(dir.path()));
  ASSERT_FALSE(controllers);
  EXPECT_EQ(controllers.error().code, ErrorCode::kParse);
  EXPECT_EQ(controllers.error().ToString(),
            (dir.path() / "class/nvme/nvme4/nvme4n1/size").string() +
                ":1: expected a decimal number (512-byte sectors), found '2 TB'");
}

TEST(NvmeClassMalformed, NegativeLogicalBlockSizeNamesThePath) {
  iowatch::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  WriteNvmeLiveController(dir.path());
  WriteNvmeFile(dir.path(), "class/nvme/nvme4/nvme4n1/queue/logical_block_size", "-512\n");
  const auto nvme4 = ReadNvmeController(FileTree(dir.path()), "nvme4");
  ASSERT_FALSE(nvme4);
  EXPECT_NE(nvme4.error().ToString().find(
                "nvme4n1/queue/logical_block_size:1: expected a decimal number (bytes)"),
            std::string::npos)
      << nvme4.error().ToString();
}

}  // namespace
}  // namespace iowatch::collectors
