// Tests of ModelConfig (engine/graph/model_config.h): the published preset sizes,
// HuggingFace-style config.json in BERT, T5 and GPT-2 spellings, and refused files whose
// messages name the file and the field.
#include "engine/graph/model_config.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace stof::engine;

namespace {

TEST(ModelConfig, PresetsHaveThePublishedSizes) {
  struct Want {
    const char* name;
    ModelFamily family;
    int64_t hidden, heads, head_dim, ffn, layers;
  };
  const Want want[] = {
      {"bert-small", ModelFamily::kBert, 512, 8, 64, 2048, 4},
      {"bert-base", ModelFamily::kBert, 768, 12, 64, 3072, 12},
      {"bert-large", ModelFamily::kBert, 1024, 16, 64, 4096, 24},
      {"gpt2-small", ModelFamily::kGpt2, 768, 12, 64, 3072, 12},
      {"gpt2-medium", ModelFamily::kGpt2, 1024, 16, 64, 4096, 24},
      {"t5-small", ModelFamily::kT5, 512, 8, 64, 2048, 6},
      {"t5-base", ModelFamily::kT5, 768, 12, 64, 3072, 12},
  };
  ASSERT_EQ(ModelPresets().size(), std::size(want));
  for (const Want& w : want) {
    auto c = FindModelPreset(w.name);
    ASSERT_TRUE(c.IsOk()) << c.Message();
    EXPECT_EQ(c->family, w.family) << w.name;
    EXPECT_EQ(c->hidden, w.hidden) << w.name;
    EXPECT_EQ(c->heads, w.heads) << w.name;
    EXPECT_EQ(c->head_dim, w.head_dim) << w.name;
    EXPECT_EQ(c->ffn, w.ffn) << w.name;
    EXPECT_EQ(c->layers, w.layers) << w.name;
    EXPECT_TRUE(c->Validate(w.name).IsOk());
  }
  EXPECT_TRUE(FindModelPreset("BERT-Base").IsOk());
  auto bad = FindModelPreset("bert-huge");
  ASSERT_FALSE(bad.IsOk());
  EXPECT_NE(bad.Message().find("model: expected one of bert-small, bert-base"), std::string::npos);
  EXPECT_NE(bad.Message().find("got 'bert-huge'"), std::string::npos);
}

TEST(ModelConfig, ReadsTheThreeSpellings) {
  auto bert = ParseModelConfigJson(
      R"({"model_type": "bert", "hidden_size": 768, "num_attention_heads": 12,
          "intermediate_size": 3072, "num_hidden_layers": 12, "vocab_size": 30522,
          "hidden_act": "gelu"})",
      "bert.json");
  ASSERT_TRUE(bert.IsOk()) << bert.Message();
  ModelConfig want = *FindModelPreset("bert-base");
  want.name = "bert.json";
  EXPECT_EQ(*bert, want);

  auto t5 = ParseModelConfigJson(
      R"({"model_type": "t5", "d_model": 1024, "num_heads": 16, "d_ff": 4096, "d_kv": 64,
          "num_layers": 24, "feed_forward_proj": "relu"})",
      "t5.json");
  ASSERT_TRUE(t5.IsOk()) << t5.Message();
  EXPECT_EQ(t5->family, ModelFamily::kT5);
  EXPECT_EQ(t5->hidden, 1024);
  EXPECT_EQ(t5->head_dim, 64);
  EXPECT_EQ(t5->ffn, 4096);
  EXPECT_EQ(t5->layers, 24);

  // T5-3B: d_kv 128 with 32 heads, so heads * head_dim (4096) != d_model (1024).
  auto t5_3b = ParseModelConfigJson(
      R"({"model_type": "t5", "d_model": 1024, "num_heads": 32, "d_ff": 16384, "d_kv": 128,
          "num_layers": 24})",
      "t5-3b.json");
  ASSERT_TRUE(t5_3b.IsOk()) << t5_3b.Message();
  EXPECT_EQ(t5_3b->head_dim, 128);

  // GPT-2's own keys, with n_inner null meaning 4 * hidden.
  auto gpt2 = ParseModelConfigJson(
      R"({"model_type": "gpt2", "n_embd": 1024, "n_head": 16, "n_inner": null, "n_layer": 24})",
      "gpt2.json");
  ASSERT_TRUE(gpt2.IsOk()) << gpt2.Message();
  EXPECT_EQ(gpt2->ffn, 4096);
  EXPECT_EQ(gpt2->head_dim, 64);

  // No model_type: the caller's family.
  const ModelFamily bert_family = ModelFamily::kBert;
  auto untyped = ParseModelConfigJson(
      R"({"hidden_size": 256, "num_attention_heads": 4, "intermediate_size": 1024,
          "num_hidden_layers": 2})",
      "tiny.json", &bert_family);
  ASSERT_TRUE(untyped.IsOk()) << untyped.Message();
  EXPECT_EQ(untyped->head_dim, 64);
}

TEST(ModelConfig, BadFilesNameFileAndField) {
  auto msg = [](const std::string& text) {
    auto c = ParseModelConfigJson(text, "cfg.json");
    EXPECT_FALSE(c.IsOk()) << text;
    return c.Message();
  };
  const std::string base = R"("model_type": "bert", "hidden_size": 768, "num_hidden_layers": 12, )";
  EXPECT_EQ(msg("{" + base + R"("intermediate_size": 3072})"),
            "cfg.json: num_attention_heads or num_heads or n_head: required field is missing");
  EXPECT_EQ(msg("{" + base + R"("num_attention_heads": 0, "intermediate_size": 3072})"),
            "cfg.json: num_attention_heads: expected an integer 1..1024, got 0");
  EXPECT_EQ(msg("{" + base + R"("num_attention_heads": 12.0, "intermediate_size": 3072})"),
            "cfg.json: num_attention_heads: expected an integer, got 12.0");
  EXPECT_EQ(msg("{" + base + R"("num_attention_heads": 7, "intermediate_size": 3072})"),
            "cfg.json: num_attention_heads: expected a divisor of the hidden size 768, got 7");
  EXPECT_EQ(msg("{" + base + R"("num_attention_heads": 12, "intermediate_size": "big"})"),
            "cfg.json: intermediate_size: expected an integer, got \"big\"");
  EXPECT_EQ(msg(R"({"model_type": "llama", "hidden_size": 768})"),
            "cfg.json: model_type: expected one of bert, gpt2, t5, got 'llama'");
  EXPECT_EQ(msg(R"({"hidden_size": 768})"),
            "cfg.json: model_type: required field is missing (bert, gpt2 or t5)");
  EXPECT_EQ(msg(R"({"model_type": "t5", "d_model": 512, "num_heads": 8, "d_ff": 1024,
                    "num_layers": 8, "feed_forward_proj": "gated-gelu"})"),
            "cfg.json: feed_forward_proj: expected \"relu\" (gated FFNs are not modelled), got "
            "\"gated-gelu\"");
  EXPECT_EQ(msg("[1, 2]"), "cfg.json: expected a JSON object, got [1,2]");
  EXPECT_EQ(msg("{nope").rfind("cfg.json: not valid JSON", 0), 0u);
  // Issue 16: `stof graph --config` of a 60 000-deep file died of a stack overflow.
  EXPECT_EQ(msg(std::string(60000, '[') + std::string(60000, ']')).rfind(
                "cfg.json: JSON nested deeper than 256 levels at [0][0]", 0),
            0u);
  EXPECT_EQ(msg(R"({"model_type": "bert", "hidden_size": )" + std::string(60000, '[') +
                std::string(60000, ']') + "}")
                .rfind("cfg.json: JSON nested deeper than 256 levels at hidden_size[0][0]", 0),
            0u);
  // Duplicate keys are read as Python's json module (and so transformers) reads them.
  auto dup = ParseModelConfigJson(R"({"model_type": "bert", "hidden_size": 1, "hidden_size": 768,
      "num_attention_heads": 12, "num_hidden_layers": 2, "intermediate_size": 3072})", "dup.json");
  ASSERT_TRUE(dup.IsOk()) << dup.Message();
  EXPECT_EQ(dup->hidden, 768);

  auto missing = LoadModelConfig("/nonexistent/config.json");
  ASSERT_FALSE(missing.IsOk());
  EXPECT_EQ(missing.Message(), "/nonexistent/config.json: cannot open: no such file");
}

TEST(ModelConfig, LoadsAFile) {
  const std::string path = std::string(STOF_BINARY_DIR) + "/model_config_test.json";
  {
    std::ofstream out(path);
    out << R"({"model_type": "bert", "hidden_size": 512, "num_attention_heads": 8,
               "intermediate_size": 2048, "num_hidden_layers": 4})";
  }
  auto c = LoadModelConfig(path);
  ASSERT_TRUE(c.IsOk()) << c.Message();
  EXPECT_EQ(c->name, path);
  EXPECT_EQ(c->hidden, 512);
  EXPECT_EQ(c->layers, 4);
}

}  // namespace
