// Tests of the studio's recent-files list (engine/core/recent_files.h): move-to-front, dedup
// and bounding; the JSON round trip; corrupt text as errors naming the file and field; the
// XDG / HOME location; missing, corrupt and oversized files; atomic save into a new directory.
#include "engine/core/recent_files.h"
#include "test_dir.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using stof::engine::AddRecentFile;
using stof::engine::LoadRecentFiles;
using stof::engine::ParseRecentFiles;
using stof::engine::RecentFilesPath;
using stof::engine::RecentFilesToJson;
using stof::engine::SaveRecentFiles;
using List = std::vector<std::string>;

namespace {

void Write(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

}  // namespace

TEST(RecentFiles, AddMovesToFrontDedupsAndBounds) {
  EXPECT_EQ(AddRecentFile({}, "a"), List{"a"});
  EXPECT_EQ(AddRecentFile({"a", "b", "c"}, "c"), (List{"c", "a", "b"}));
  EXPECT_EQ(AddRecentFile({"a", "a", "", "b"}, "b"), (List{"b", "a"}));
  EXPECT_EQ(AddRecentFile({"a", "b", "c"}, "d", 3), (List{"d", "a", "b"}));
  EXPECT_EQ(AddRecentFile({"a"}, ""), List{"a"});  // an empty path is never added
  EXPECT_EQ(AddRecentFile({"a"}, std::string(5000, 'x')), List{"a"});
  EXPECT_TRUE(AddRecentFile({"a"}, "b", 0).empty());
  List many;
  for (int i = 0; i < 30; ++i) many = AddRecentFile(many, std::string("f").append(std::to_string(i)));
  ASSERT_EQ(many.size(), stof::engine::kMaxRecentFiles);
  EXPECT_EQ(many.front(), "f29");
}

TEST(RecentFiles, JsonRoundTripAndBounds) {
  const List list{"/m/a.npy", "/m/b c.png", "/m/\xc3\xa9.json"};
  auto back = ParseRecentFiles(RecentFilesToJson(list), "recent.json");
  ASSERT_TRUE(back.IsOk()) << back.Message();
  EXPECT_EQ(*back, list);
  auto cut = ParseRecentFiles(R"({"format": "stof-studio-recent", "version": 1,
                                  "files": ["a", "b", "a", "", "c", "d"]})", "r", 3);
  ASSERT_TRUE(cut.IsOk()) << cut.Message();
  EXPECT_EQ(*cut, (List{"a", "b", "c"}));
}

TEST(RecentFiles, CorruptTextNamesFileAndField) {
  auto expect_error = [](const std::string& text, const std::string& want) {
    auto r = ParseRecentFiles(text, "recent.json");
    ASSERT_FALSE(r.IsOk()) << text;
    EXPECT_NE(r.Message().find(want), std::string::npos) << r.Message();
  };
  expect_error("{\"format\": \"stof-studio-recent\", \"version\": 1, \"files\": [\"a\", 3]}",
               "recent.json: files[1]: expected a string, got 3");
  expect_error("{\"format\": \"x\", \"version\": 1, \"files\": []}", "recent.json: format: expected");
  expect_error("{\"format\": \"stof-studio-recent\", \"version\": 2, \"files\": []}", "recent.json: version");
  expect_error("{\"format\": \"stof-studio-recent\", \"version\": 1}", "recent.json: files: required");
  expect_error("{\"format\": \"stof-studio-recent\", \"version\": 1, \"files\": {}}", "files: expected an array");
  expect_error("{\"format\": \"stof-studio-recent\", \"version\": 1, \"files\": [], \"x\": 1}", "x: unknown key");
  expect_error("[1, 2", "recent.json: not valid JSON");
  expect_error("", "recent.json: not valid JSON");
  expect_error("{\"format\": \"stof-studio-recent\", \"version\": 1, \"files\": " +
                   std::string(60000, '[') + std::string(60000, ']') + "}",
               "recent.json: JSON nested deeper than 256 levels at files[0][0]");
}

TEST(RecentFiles, PathFromEnvironment) {
  EXPECT_EQ(*RecentFilesPath("/x/cfg", "/home/u"), "/x/cfg/stof-studio/recent.json");
  EXPECT_EQ(*RecentFilesPath(nullptr, "/home/u"), "/home/u/.config/stof-studio/recent.json");
  EXPECT_EQ(*RecentFilesPath("relative", "/home/u"), "/home/u/.config/stof-studio/recent.json");
  EXPECT_EQ(*RecentFilesPath("", "/home/u"), "/home/u/.config/stof-studio/recent.json");
  auto none = RecentFilesPath(nullptr, nullptr);
  ASSERT_FALSE(none.IsOk());
  EXPECT_NE(none.Message().find("HOME"), std::string::npos);
}

TEST(RecentFiles, LoadMissingCorruptAndLarge) {
  const stof::engine::testing::TestDir tmp("stof_recent_");
  const std::filesystem::path& dir = tmp.Dir();
  auto missing = LoadRecentFiles((dir / "nope.json").string());
  ASSERT_TRUE(missing.IsOk()) << missing.Message();
  EXPECT_TRUE(missing->empty());

  Write(dir / "bad.json", "{\"format\": \"stof-studio-recent\", \"version\": 1, \"files\": [1]}");
  auto bad = LoadRecentFiles((dir / "bad.json").string());
  ASSERT_FALSE(bad.IsOk());
  EXPECT_NE(bad.Message().find((dir / "bad.json").string() + ": files[0]"), std::string::npos) << bad.Message();

  Write(dir / "big.json", std::string((1 << 20) + 1, ' '));
  auto big = LoadRecentFiles((dir / "big.json").string());
  ASSERT_FALSE(big.IsOk());
  EXPECT_NE(big.Message().find("1 MiB"), std::string::npos) << big.Message();

  auto a_dir = LoadRecentFiles(dir.string());  // a directory is not a list
  EXPECT_FALSE(a_dir.IsOk());
}

TEST(RecentFiles, SaveCreatesDirectoryAndReplacesAtomically) {
  const stof::engine::testing::TestDir tmp("stof_recent_");
  const std::filesystem::path& dir = tmp.Dir();
  const std::string path = (dir / "stof-studio" / "recent.json").string();
  ASSERT_TRUE(SaveRecentFiles(path, {"a", "b"}).IsOk());
  ASSERT_TRUE(SaveRecentFiles(path, {"c"}).IsOk());
  auto back = LoadRecentFiles(path);
  ASSERT_TRUE(back.IsOk()) << back.Message();
  EXPECT_EQ(*back, List{"c"});
  int files = 0;  // no temporary left behind
  for (const auto& e : std::filesystem::directory_iterator(dir / "stof-studio")) files += e.is_regular_file();
  EXPECT_EQ(files, 1);

  // A parent that is a file: an error naming it, no crash.
  Write(dir / "plain", "x");
  auto s = SaveRecentFiles((dir / "plain" / "recent.json").string(), {"a"});
  ASSERT_FALSE(s.IsOk());
  EXPECT_NE(s.Message().find("plain"), std::string::npos) << s.Message();
}
