// Tiling expressions: text form (recursive-descent parser into a small loop tree, then
// classification as deep or flat), printing and the enumeration of all 26 (tiling_expr.h).
#include "engine/mcfuser/tiling_expr.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace stof::engine {

namespace {

constexpr std::array<ChainLoop, 4> kLoops = {ChainLoop::kM, ChainLoop::kN, ChainLoop::kK,
                                             ChainLoop::kH};

std::optional<ChainLoop> LoopFromLetter(char c) {
  switch (std::tolower(static_cast<unsigned char>(c))) {
    case 'm': return ChainLoop::kM;
    case 'n': return ChainLoop::kN;
    case 'k': return ChainLoop::kK;
    case 'h': return ChainLoop::kH;
    default: return std::nullopt;
  }
}

// A parsed loop: what runs inside it, in sequence.
struct Node {
  ChainLoop loop = ChainLoop::kM;
  std::vector<Node> body;
};

class Parser {
 public:
  explicit Parser(const std::string& text) : m_text(text) {}

  // seq := nest (',' nest)*
  Expected<std::vector<Node>> Seq() {
    std::vector<Node> out;
    for (;;) {
      Expected<Node> n = Nest();
      if (!n) return n.ToStatus();
      out.push_back(std::move(*n));
      SkipSpace();
      if (Peek() != ',') return out;
      ++m_pos;
    }
  }
  // nest := letter+ ['(' seq ')']: the letters nest, the last one holds the sequence.
  Expected<Node> Nest() {
    SkipSpace();
    std::vector<ChainLoop> chain;
    while (m_pos < m_text.size()) {
      SkipSpace();
      const auto loop = LoopFromLetter(Peek());
      if (!loop) break;
      chain.push_back(*loop);
      ++m_pos;
    }
    if (chain.empty()) return Unexpected("a loop (m, n, k or h)");
    SkipSpace();
    std::vector<Node> body;
    if (Peek() == '(') {
      ++m_pos;
      Expected<std::vector<Node>> inner = Seq();
      if (!inner) return inner.ToStatus();
      SkipSpace();
      if (Peek() != ')') return Unexpected("',' or ')'");
      ++m_pos;
      body = std::move(*inner);
    }
    Node node{chain.back(), std::move(body)};
    for (size_t i = chain.size() - 1; i-- > 0;) node = Node{chain[i], {std::move(node)}};
    return node;
  }
  bool AtEnd() {
    SkipSpace();
    return m_pos >= m_text.size();
  }
  Error Unexpected(const std::string& expected) const {
    // Built by appending: GCC 12 warns (-Wrestrict, a false positive) on "'" + string&&.
    std::string got = "the end";
    if (m_pos < m_text.size()) got = std::string{'\'', m_text[m_pos], '\''};
    return MakeError("expected " + expected + " at position " + std::to_string(m_pos) +
                     ", got " + got);
  }

 private:
  char Peek() const { return m_pos < m_text.size() ? m_text[m_pos] : '\0'; }
  void SkipSpace() {
    while (m_pos < m_text.size() && std::isspace(static_cast<unsigned char>(m_text[m_pos])))
      ++m_pos;
  }
  const std::string& m_text;
  size_t m_pos = 0;
};

void CountLoops(const Node& n, std::array<int, 4>& counts) {
  ++counts[static_cast<int>(n.loop)];
  for (const Node& c : n.body) CountLoops(c, counts);
}

// Classifies a tree that holds each loop once (the error has no text prefix yet).
Expected<TilingExpr> Classify(const Node& root) {
  TilingExpr e;
  const Node* n = &root;
  int depth = 0;
  while (true) {
    e.order[depth++] = n->loop;
    if (n->body.size() != 1) break;
    n = &n->body[0];
  }
  if (n->body.empty()) return e;  // a chain of all four loops: deep
  const std::string kShape =
      "a flat expression nests m and n and runs k's nest then h's nest inside them: expected "
      "mn(k,h) or nm(k,h)";
  // Branch point: must be below exactly {m, n}, with the two leaves k and h.
  if (depth != 2 || n->body.size() != 2 || !n->body[0].body.empty() ||
      !n->body[1].body.empty())
    return MakeError(kShape);
  const ChainLoop a = n->body[0].loop, b = n->body[1].loop;
  if (a == ChainLoop::kH && b == ChainLoop::kK)
    return MakeError(std::string("h's nest runs before k's, but E = C x D needs C complete: "
                                 "write ") +
                     LoopLetter(e.order[0]) + LoopLetter(e.order[1]) + "(k,h)");
  if (a != ChainLoop::kK || b != ChainLoop::kH) return MakeError(kShape);
  e.order[2] = ChainLoop::kK;
  e.order[3] = ChainLoop::kH;
  e.flat = true;
  return e;
}

}  // namespace

char LoopLetter(ChainLoop loop) { return "mnkh"[static_cast<int>(loop)]; }

std::string ToString(const TilingExpr& e) {
  std::string s;
  if (!e.flat) {
    for (ChainLoop l : e.order) s += LoopLetter(l);
    return s;
  }
  s += LoopLetter(e.order[0]);
  s += LoopLetter(e.order[1]);
  s += "(";
  s += LoopLetter(e.order[2]);
  s += ",";
  s += LoopLetter(e.order[3]);
  s += ")";
  return s;
}

Expected<TilingExpr> ParseTilingExpr(const std::string& text) {
  const std::string prefix = "tiling expression '" + text + "': ";
  Parser p(text);
  if (p.AtEnd()) return MakeError(prefix + "empty; expected e.g. mhnk or mn(k,h)");
  Expected<std::vector<Node>> seq = p.Seq();
  if (!seq) return MakeError(prefix + seq.Message());
  if (!p.AtEnd()) return MakeError(prefix + p.Unexpected("the end").message);
  std::array<int, 4> counts{};
  for (const Node& n : *seq) CountLoops(n, counts);
  for (ChainLoop l : kLoops) {
    const int c = counts[static_cast<int>(l)];
    if (c > 1)
      return MakeError(prefix + "loop '" + LoopLetter(l) + "' appears " + std::to_string(c) +
                       " times; each of m, n, k, h appears once");
  }
  for (ChainLoop l : kLoops) {
    if (counts[static_cast<int>(l)] == 0)
      return MakeError(prefix + "loop '" + LoopLetter(l) +
                       "' is missing; each of m, n, k, h appears once");
  }
  if (seq->size() != 1)
    return MakeError(prefix + "the top level runs " + std::to_string(seq->size()) +
                     " nests in sequence; m and n must enclose both GEMMs");
  Expected<TilingExpr> e = Classify(seq->front());
  if (!e) return MakeError(prefix + e.Message());
  return e;
}

Status ValidateTilingExpr(const TilingExpr& e) {
  std::array<int, 4> counts{};
  for (ChainLoop l : e.order) {
    const int i = static_cast<int>(l);
    if (i < 0 || i > 3) return MakeError("tiling expression: order: loop value out of range");
    ++counts[i];
  }
  for (int c : counts)
    if (c != 1) return MakeError("tiling expression: order: not a permutation of m, n, k, h");
  if (e.flat && (e.order[2] != ChainLoop::kK || e.order[3] != ChainLoop::kH))
    return MakeError("tiling expression: order: a flat expression is mn(k,h) or nm(k,h), got " +
                     std::string{LoopLetter(e.order[0]), LoopLetter(e.order[1]), '(',
                                 LoopLetter(e.order[2]), ',', LoopLetter(e.order[3]), ')'});
  return Status::Ok();
}

const std::vector<TilingExpr>& AllTilingExprs() {
  static const std::vector<TilingExpr> kAll = [] {
    std::vector<TilingExpr> all;
    std::array<ChainLoop, 4> order = kLoops;
    do {
      all.push_back(TilingExpr{order, false});
    } while (std::next_permutation(order.begin(), order.end()));
    all.push_back(TilingExpr{{ChainLoop::kM, ChainLoop::kN, ChainLoop::kK, ChainLoop::kH}, true});
    all.push_back(TilingExpr{{ChainLoop::kN, ChainLoop::kM, ChainLoop::kK, ChainLoop::kH}, true});
    return all;
  }();
  return kAll;
}

int TilingExprIndex(const TilingExpr& e) {
  const auto& all = AllTilingExprs();
  const auto it = std::find(all.begin(), all.end(), e);
  return it == all.end() ? -1 : static_cast<int>(it - all.begin());
}

}  // namespace stof::engine
