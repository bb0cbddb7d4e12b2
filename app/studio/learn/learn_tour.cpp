// The lessons' pages (learn_tour.h): the text, with the live numbers of LearnFacts, and the
// checks of each question. Wording and numbers here are what docs/learn.md shows.
#include "app/studio/learn/learn_tour.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/studio/studio_defaults.h"
#include "engine/fusion/fusion_scheme.h"

namespace stof::app {

namespace {

std::string F(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}
std::string Pct(double fraction) { return F("%.1f %%", 100 * fraction); }
std::string I(int64_t v) { return std::to_string(v); }
std::string Size(int64_t bm, int64_t bn) { return I(bm) + " x " + I(bn); }
std::string Mb(double bytes) { return F("%.1f MB", bytes / 1e6); }
std::string Us(double us) { return F("%.1f us", us); }

std::string Counts(const engine::LayoutStats& s) {
  return I(s.full_blocks) + " full, " + I(s.part_blocks) + " part and " + I(s.empty_blocks) +
         " empty blocks of " + I(s.block_rows * s.block_cols);
}

// The ladder rung of a variant, when the ladder has it.
const engine::LadderRung* Rung(const LearnFacts& f, engine::MhaVariant v) {
  for (const engine::LadderRung& r : f.ladder)
    if (r.variant == v) return &r;
  return nullptr;
}

std::string Kind(const engine::LadderRung& r) { return r.measured ? "measured" : "predicted"; }

const engine::FusionTradeoff* Tradeoff(const LearnFacts& f, const std::string& tmpl) {
  for (const engine::FusionTradeoff& t : f.tradeoffs)
    if (t.tmpl == tmpl) return &t;
  return nullptr;
}

std::string TradeoffText(const engine::FusionTradeoff& t) {
  std::string apart;
  for (const engine::Segment& s : t.apart) apart += (apart.empty() ? "" : " + ") + engine::SegmentLabel(s);
  return t.what + " " + engine::SegmentLabel(t.fused) + " as " + t.tmpl + ": " + Us(t.fused_us) + ", " +
         Mb(t.fused_bytes) + " of DRAM traffic; apart (" + apart + "): " + Us(t.apart_us) + ", " +
         Mb(t.apart_bytes) + ". Fused is " +
         (t.Pays() ? F("%.2fx faster", t.apart_us / t.fused_us) : F("%.2fx slower", t.fused_us / t.apart_us)) +
         " (predicted).";
}

// ---- lesson 1: block-sparse layouts and wasted work ------------------------------------------

constexpr double kLesson1Share = 0.5;  // the question: waste at most half of 128 x 128's

bool Lesson1Answered(const LearnFacts& f) {
  return f.analysis_ready && f.at_block.block_m >= 32 && f.at_block.block_n >= 32 &&
         f.at_block.wasted_fraction <= kLesson1Share * f.at_flex.wasted_fraction;
}

LessonPage Lesson1(int page, const LearnFacts& f) {
  LessonPage p;
  p.view = "layout";
  const engine::LayoutStats& b = f.at_block;
  const engine::LayoutStats& x = f.at_flex;
  const std::string mask = f.spec ? f.spec->pattern + " at L = " + I(f.seq_len) : "this mask (L = " + I(f.seq_len) + ")";
  if (!f.analysis_ready) {
    p.title = "Block-sparse layouts";
    p.paragraphs = {"(the layout is being computed)"};
    return p;
  }
  if (page == 0) {
    p.title = "A mask seen in tiles";
    p.paragraphs = {
        "A block-sparse (BSR) kernel never looks at single cells: it cuts the L x L mask into BM x BN "
        "tiles and computes every tile that holds at least one attended cell, whole. A full block is "
        "attended everywhere, a part block only somewhere (the kernel computes it whole and masks the "
        "rest), an empty block is skipped.",
        "Here, " + mask + " in " + Size(b.block_m, b.block_n) + " tiles (FlexAttention's default): " +
            Counts(b) + ". The kernel computes " + F("%.3g GFLOP", f.work_block.block_kernel_flops / 1e9) + " for the " +
            F("%.3g GFLOP", f.work_block.valid_flops / 1e9) + " the mask asks for: " + Pct(b.wasted_fraction) +
            " of its work is thrown away. The canvas shows each class in the colour its key names."};
    return p;
  }
  if (page == 1) {
    p.title = "The same mask at " + Size(b.block_m, b.block_n);
    std::string why =
        "Why the difference: ";
    if (f.spec && f.spec->pattern == "bigbird")
      why += "BigBird's random blocks are " + Size(f.spec->block, f.spec->block) +
             " cells, so a 128 x 128 tile that holds only one of them is a quarter used; and its band "
             "(|i - j| < " + I(f.spec->width) + ") crosses the tile grid diagonally, so every tile it touches is a "
             "part block computed whole. Smaller tiles follow the band and the random blocks more closely.";
    else
      why += "smaller tiles follow the mask's edges more closely, so fewer masked-out cells are computed.";
    p.paragraphs = {
        "Now at " + Size(b.block_m, b.block_n) + ": " + Counts(b) + "; " + Pct(b.wasted_fraction) +
            " of the work is wasted, against " + Pct(x.wasted_fraction) + " at 128 x 128.",
        why,
        "Smaller is not free: the index arrays grow (" + I(b.index_bytes) + " bytes here against " +
            I(x.index_bytes) + " at 128 x 128, plus part-block bitmaps), each tile does less work per load, "
            "and below 32 x 32 the tensor cores run poorly. The Block layout tab's table shows all 16 sizes."};
    return p;
  }
  p.title = "Your turn: choose a tile";
  p.question = true;
  p.question_text = "Change one thing, the block size (Block layout tab: BM and BN, or click a row of its "
                    "table): find a size of at least 32 x 32 that wastes at most half as much work as "
                    "FlexAttention's 128 x 128 (" + Pct(x.wasted_fraction) + "), that is at most " +
                    Pct(kLesson1Share * x.wasted_fraction) + ".";
  p.answered = Lesson1Answered(f);
  p.answer = p.answered
                 ? "Yes: " + Size(b.block_m, b.block_n) + " wastes " + Pct(b.wasted_fraction) + " (" + Counts(b) +
                       "). The kernel computes " + F("%.2fx", f.work_flex.block_kernel_flops / f.work_block.block_kernel_flops) +
                       " fewer FLOPs than at 128 x 128 for the same answer; the index costs " + I(b.index_bytes) +
                       " bytes instead of " + I(x.index_bytes) + "."
                 : "Not yet: " + Size(b.block_m, b.block_n) + " wastes " + Pct(b.wasted_fraction) +
                       ". Hint: match the tile to the mask's structure (the random blocks' size).";
  return p;
}

// ---- lesson 2: softmax recomposition --------------------------------------------------------

constexpr int64_t kLesson2Seq = 4096;

LessonPage Lesson2(int page, const LearnFacts& f, const LearnMemory& m) {
  LessonPage p;
  p.view = "fusion";
  const engine::LadderRung* u = Rung(f, engine::MhaVariant::kUnfused);
  const engine::LadderRung* sd = Rung(f, engine::MhaVariant::kDecomposed);
  const engine::LadderRung* sdf = Rung(f, engine::MhaVariant::kRecomposed);
  const engine::LadderRung* fu = Rung(f, engine::MhaVariant::kFused);
  const bool ladder = u && sd && sdf && fu;
  if (page == 0) {
    p.title = "Four ways to run attention";
    p.diagram = true;
    p.paragraphs = {
        "softmax(Q K^T) V can run as four exact programs, the rungs of the fusion ladder (Fusion tab). "
        "U, unfused: a GEMM writes the L x L scores S to DRAM, a softmax kernel reads S and writes P, a "
        "second GEMM reads P. SD, decomposed softmax: the softmax is split into LS (a local softmax over "
        "each sub-vector of T = 64 keys, with its max and sum), IR (the inter-sub-vector reduction of "
        "those maxima and sums per row) and GS (global scaling of each sub-vector by its factor), three "
        "kernels, two of which (LS and GS) pass over S. SDF, decomposed + fused: LS runs in the QK^T GEMM's epilogue and "
        "GS in the PV GEMM's prologue, so only IR's small vectors travel between them, and only the "
        "mask's non-empty tiles are stored. F, fully fused: one sparse kernel keeps S on chip (online "
        "softmax); only Q, K, V and O cross DRAM."};
    return p;
  }
  if (!ladder) {
    p.title = "Bytes per rung";
    p.paragraphs = {"(the ladder is not available: " + std::string(f.ladder.empty() ? "no layer" : "incomplete") + ")"};
    return p;
  }
  p.show_ladder = true;
  if (page == 1) {
    p.title = "Bytes and time per rung";
    p.paragraphs = {
        "For " + f.model + " at batch " + I(f.batch) + ", L = " + I(f.seq_len) + " on " + f.device + " (" +
            Kind(*fu) + "): U moves " + Mb(u->dram_bytes) + " in " + Us(u->us) + "; SD " + Mb(sd->dram_bytes) +
            " in " + Us(sd->us) + "; SDF " + Mb(sdf->dram_bytes) + " in " + Us(sdf->us) + "; F " +
            Mb(fu->dram_bytes) + " in " + Us(fu->us) + ".",
        "SD alone loses (" + F("%.2fx", sd->us / u->us) + " the time of U): splitting the softmax adds "
            "kernels and passes over the dense S, and recomposition only pays once its pieces are fused "
            "into the GEMMs. SDF wins (" + F("%.2fx", u->us / sdf->us) + " faster than U): S is written once "
            "and read once, only over the mask's valid tiles. F goes further: S never leaves the chip (" +
            F("%.1f", u->dram_bytes / fu->dram_bytes) + "x fewer bytes than U).",
        "F runs what the engine runs for this workload: " +
            (f.run ? engine::MhaRunChoiceShort(*f.run) : std::string("(not known)")) + "."};
    return p;
  }
  p.title = "Your turn: a longer sequence";
  p.question = true;
  p.question_text = "Change one thing, L (Mask tab, length slider), to " + I(kLesson2Seq) +
                    ": does the fully fused kernel's lead over unfused grow or shrink? (At L = " + I(m.seq_len) +
                    " F is " + F("%.2fx", m.lead) + " faster than U.)";
  p.answered = f.seq_len == kLesson2Seq && m.set;
  const double lead = u->us / fu->us;
  const double before = m.lead;
  p.answer = p.answered
                 ? "At L = " + I(f.seq_len) + " F is " + F("%.2fx", lead) + " faster than U (it was " + F("%.2fx", before) +
                       "): the lead " + (lead > before ? "grows" : "shrinks") + ". U's scores grow as L^2 (" +
                       Mb(u->dram_bytes) + " now), while F's traffic grows with the mask's valid blocks, which BigBird "
                       "keeps near-linear in L (" + Mb(fu->dram_bytes) + "). All " + Kind(*fu) + "."
                 : "Not yet: L is " + I(f.seq_len) + ".";
  return p;
}

// ---- lesson 3: fusion trade-offs -------------------------------------------------------------

// "3 of the layer's 3 GEMM + epilogue candidates pay here (predicted): ..."
std::string EpiloguesText(const LearnFacts& f) {
  int n = 0, pays = 0;
  for (const engine::FusionTradeoff& t : f.tradeoffs) {
    if (t.tmpl == "gemm_norm") continue;
    ++n;
    pays += t.Pays() ? 1 : 0;
  }
  if (n == 0) return "This layer has no GEMM + epilogue candidate.";
  return I(pays) + " of the layer's " + I(n) + " GEMM + epilogue candidates pay here (predicted): the fused "
         "kernel tiles the GEMM as the GEMM alone would and only saves the pass over its output.";
}

LessonPage Lesson3(int page, const LearnFacts& f, const LearnMemory& m) {
  LessonPage p;
  p.view = "fusion";
  const engine::FusionTradeoff* act = Tradeoff(f, "gemm_act");
  const engine::FusionTradeoff* norm = Tradeoff(f, "gemm_norm");
  p.show_segments = page == 0;
  if (page == 0) {
    p.title = "A layer in segments";
    std::string segs;
    for (const std::string& s : f.segments) segs += (segs.empty() ? "" : "; ") + s;
    p.paragraphs = {
        "A transformer layer is a chain of ops (Fusion tab): GEMMs are compute-intensive (CI: their "
        "time is tensor-core time), the rest memory-intensive (MI: their time is DRAM traffic). A fusion "
        "scheme cuts the chain into segments; a segment that matches a template runs as one kernel and "
        "keeps its intermediates on chip, the others run op by op.",
        f.model + " at batch " + I(f.batch) + ", L = " + I(f.seq_len) + " on " + f.device +
            ", default scheme (predicted): " + segs + "."};
    return p;
  }
  if (page == 1) {
    p.title = "GEMM + epilogue";
    p.paragraphs = {
        "An element-wise op after a GEMM (bias, GELU, a residual add) can run in the GEMM's epilogue: "
        "the GEMM's output tile is still in registers, so the op costs no extra DRAM pass.",
        act ? TradeoffText(*act) : std::string("(this layer has no GEMM + activation pair)"),
        EpiloguesText(f)};
    return p;
  }
  if (page == 2) {
    p.title = "GEMM + LayerNorm";
    p.paragraphs = {
        "LayerNorm needs a whole row (its mean and variance over all hidden columns), so a GEMM + "
        "LayerNorm kernel must give each thread block whole output rows: each block streams the whole "
        "weight matrix W through its SM, and there are few blocks. It saves the pass over the GEMM's "
        "output, but pays in time per block.",
        norm ? TradeoffText(*norm) : std::string("(this layer has no GEMM + LayerNorm triple)"),
        std::string("The default scheme keeps LayerNorm apart; ") +
            (norm && !norm->Pays() ? "here that is the faster choice (predicted). " : "here fusing it would be faster (predicted). ") +
            "Whether a fusion pays depends on the shape and the device, which is why the tuner measures "
            "schemes instead of fusing everything."};
    return p;
  }
  p.title = "Your turn: on another GPU";
  p.question = true;
  const bool paid = m.norm_pays;
  p.question_text = "Change one thing, the device (Kernel selection tab, Device), to one on which GEMM + "
                    "LayerNorm fusion " + std::string(paid ? "stops paying" : "pays") + " for this layer (on " +
                    m.device + " it " + (paid ? "pays" : "does not") + ").";
  p.answered = m.set && norm && norm->Pays() != paid;
  std::string table;
  for (const engine::TradeoffOnDevice& d : f.norm_by_device)
    table += (table.empty() ? "" : "; ") + d.device + " (" + F("%.2f", d.dram_bytes_per_s / 1e12) + " TB/s): " +
             F("%.2fx", d.tradeoff.apart_us / d.tradeoff.fused_us);
  p.answer = p.answered
                 ? "On " + f.device + ": " + TradeoffText(*norm) + " Apart, the GEMM and the LayerNorm run at the "
                       "device's DRAM bandwidth, so on a device with less of it the pass that fusion saves is worth "
                       "more; the fused kernel's time is set by its row blocks streaming W, which the model takes "
                       "from an H100 measurement on every device. Speed-up of fusing, per device (predicted): " +
                       table + "."
                 : "Not yet: on " + f.device + " " + (norm ? TradeoffText(*norm) : std::string("there is no GEMM + LayerNorm here."));
  return p;
}

}  // namespace

const std::vector<LessonInfo>& Lessons() {
  static const std::vector<LessonInfo> kLessons = {
      {"1. Block-sparse layouts and wasted work", 3},
      {"2. Softmax recomposition: U, SD, SDF, F", 3},
      {"3. Fusion trade-offs: when fusing pays", 4}};
  return kLessons;
}

LessonSetup PageSetup(int lesson, int page) {
  LessonSetup s;
  if (lesson == 0) {
    if (page == 0) {
      s.mask = studio_defaults::MaskGenerator();
      s.block = {128, 128};
    } else if (page == 1) {
      s.block = {64, 64};
    }
  } else if (lesson == 1) {
    if (page == 0) {
      s.mask = studio_defaults::MaskGenerator();
      s.batch = studio_defaults::kBatch;
    }
  } else if (page == 0) {
    s.mask = studio_defaults::MaskGenerator();
    s.batch = studio_defaults::kBatch;
    s.default_scheme = true;
  }
  return s;
}

void RememberForQuestion(int lesson, const LearnFacts& f, LearnMemory* m) {
  *m = LearnMemory{};
  m->set = true;
  m->seq_len = f.seq_len;
  m->device = f.device;
  const engine::LadderRung* u = Rung(f, engine::MhaVariant::kUnfused);
  const engine::LadderRung* fu = Rung(f, engine::MhaVariant::kFused);
  if (lesson == 1 && u && fu && fu->us > 0) m->lead = u->us / fu->us;
  const engine::FusionTradeoff* norm = Tradeoff(f, "gemm_norm");
  m->norm_pays = norm && norm->Pays();
}

LessonPage BuildPage(int lesson, int page, const LearnFacts& f, const LearnMemory& memory) {
  if (lesson == 0) return Lesson1(page, f);
  if (lesson == 1) return Lesson2(page, f, memory);
  return Lesson3(page, f, memory);
}

std::optional<LessonSetup> DemoAnswer(int lesson, const LearnFacts& f, const LearnMemory& memory) {
  LessonSetup s;
  if (lesson == 0) {
    // The largest tile (then the least waste) that answers the question.
    const engine::BlockSizeRow* best = nullptr;
    for (const engine::BlockSizeRow& r : f.table) {
      const engine::LayoutStats& t = r.stats;
      if (t.block_m < 32 || t.block_n < 32 || t.wasted_fraction > kLesson1Share * f.at_flex.wasted_fraction) continue;
      const auto area = [](const engine::LayoutStats& x) { return x.block_m * x.block_n; };
      if (!best || area(t) > area(best->stats) ||
          (area(t) == area(best->stats) && t.wasted_fraction < best->stats.wasted_fraction))
        best = &r;
    }
    if (!best) return std::nullopt;
    s.block = {best->stats.block_m, best->stats.block_n};
    return s;
  }
  if (lesson == 1) {
    engine::MaskSpec spec = f.spec ? *f.spec : studio_defaults::MaskGenerator();
    spec.seq_len = kLesson2Seq;
    spec.width = spec.global = spec.block = -1;  // the paper defaults for the new L, as the slider does
    spec.fill = -1;
    s.mask = spec;
    return s;
  }
  // The first built-in device on which GEMM + LayerNorm changes side.
  const bool paid = memory.norm_pays;
  for (const engine::TradeoffOnDevice& d : f.norm_by_device) {
    if (d.tradeoff.Pays() == paid) continue;
    s.device = d.device;
    return s;
  }
  return std::nullopt;
}

const std::vector<GlossaryEntry>& Glossary() {
  static const std::vector<GlossaryEntry> kTerms = {
      {"BSR (block sparse rows)", "A sparse matrix stored as BM x BN blocks: per block row, the column "
                                  "indices of its non-empty blocks (CSR arrays). The kernels read the mask "
                                  "in this form."},
      {"full / part / empty block", "A tile of the mask at BM x BN: full = every cell attends (computed "
                                    "without masking), part = some cells attend (computed whole, then "
                                    "masked; a bitmap says which), empty = nothing attends (skipped)."},
      {"wasted work", "FLOPs a block kernel computes on masked-out cells: 1 - nnz / (valid blocks x BM x BN)."},
      {"Eq. 1 / Eq. 2", "STOF's analytical kernel selection: Eq. 1 picks the row-wise or block-wise kernel "
                        "from the share of valid 16 x 16 blocks; Eq. 2 scores every (BM, BN, warps) by "
                        "occupancy and parallelism."},
      {"what runs", "Eq. 1 / Eq. 2's pick restricted to what the kernels support and prefer, and on sm_90 "
                    "the Hopper kernel where its tile model says faster: the one configuration every view "
                    "and command shows (a plan's mha.runs)."},
      {"CI / MI", "Compute-intensive ops (GEMMs: limited by tensor-core FLOP/s) and memory-intensive ops "
                  "(element-wise, softmax, norms: limited by DRAM bandwidth)."},
      {"U / SD / SDF / F", "The fusion ladder's four exact attention programs: unfused; decomposed softmax "
                           "(LS, IR, GS as kernels); decomposed + fused (LS in the QK^T epilogue, GS in the PV "
                           "prologue); fully fused (one sparse kernel, online softmax)."},
      {"LS / IR / GS", "Softmax recomposition's parts: local softmax per sub-vector of T keys (max, "
                       "exponentials, sum), inter-sub-vector reduction (the row's max and sum from the "
                       "parts), global scaling (each sub-vector times its factor)."},
      {"fusion scheme", "One binary digit per op of the layer; adjacent ops with equal digits form a "
                        "segment (\"00111000110\"), at most two CI ops each. Written in hex too."},
      {"segment / template", "A run of ops executed together; a template is a fused kernel that matches "
                             "the segment's op kinds (gemm_act, gemm_norm, sparse_mha, ...); without one the "
                             "ops run one by one."},
      {"roofline", "Achieved FLOP/s against arithmetic intensity (FLOP per DRAM byte) under the device's "
                   "two roofs: DRAM bandwidth times intensity, and the tensor-core peak."},
      {"predicted / measured", "Predicted: the analytical models (no GPU involved). Measured: timed on a "
                               "GPU (CUDA events, CUPTI). Every number in the views says which."},
  };
  return kTerms;
}

nlohmann::json LessonPageJson(int lesson, int page, const LessonPage& p) {
  return {{"lesson", lesson + 1},
          {"page", page + 1},
          {"pages", Lessons()[static_cast<size_t>(lesson)].pages},
          {"title", p.title},
          {"paragraphs", p.paragraphs},
          {"question", p.question_text},
          {"answered", p.answered},
          {"answer", p.answer}};
}

LearnFacts GatherLearnFacts(const engine::Mask& mask, const std::optional<engine::MaskSpec>& spec,
                            const engine::MaskAnalysis* ready_analysis, const std::string& device) {
  LearnFacts f;
  f.seq_len = mask.Rows();
  if (spec)
    if (auto r = engine::Resolve(*spec); r.IsOk()) f.spec = *r;
  if (const engine::MaskAnalysis* a = ready_analysis) {
    f.analysis_ready = true;
    f.at_block = a->stats;
    f.at_flex = a->flex_stats;
    f.work_block = a->work;
    f.work_flex = a->flex_work;
    f.table = a->table;
  }
  f.device = device;
  return f;
}

std::string SegmentFact(const SegmentView& v) {
  return engine::SegmentLabel(v.segment) + " " + (v.tmpl.empty() ? "op by op" : v.tmpl) + " " + Us(v.predicted_us);
}

}  // namespace stof::app
