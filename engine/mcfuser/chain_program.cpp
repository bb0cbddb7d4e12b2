// Builds the executed program of a tiling expression: grid binding, statement placement,
// dead-loop removal, merging of split loops, hoisting, trip counts (chain_program.h).
#include "engine/mcfuser/chain_program.h"

#include <cassert>
#include <utility>

namespace stof::engine {

namespace {

// A loop (loop != 0) with its body, or a statement (loop == 0).
struct PNode {
  char loop = 0;
  ChainStmt stmt = ChainStmt::kLoadA;
  std::vector<PNode> body;
};
PNode Loop(char l, std::vector<PNode> body) { return PNode{l, ChainStmt::kLoadA, std::move(body)}; }
PNode Stmt(ChainStmt s) { return PNode{0, s, {}}; }

// Loops that index the tensor a statement reads, writes or computes over.
const char* IndexLoops(ChainStmt s) {
  switch (s) {
    case ChainStmt::kLoadA: return "mk";
    case ChainStmt::kLoadB: return "kn";
    case ChainStmt::kComputeC: return "mnk";
    case ChainStmt::kLoadD: return "nh";
    case ChainStmt::kComputeE: return "mnh";
    case ChainStmt::kStoreE: return "mh";
  }
  return "";
}
bool Indexes(ChainStmt s, char loop) {
  for (const char* p = IndexLoops(s); *p; ++p)
    if (*p == loop) return true;
  return false;
}
bool IsMemory(ChainStmt s) { return s != ChainStmt::kComputeC && s != ChainStmt::kComputeE; }
bool IsStore(ChainStmt s) { return s == ChainStmt::kStoreE; }

// Step 3a: loops of extent 1 vanish; their bodies take their place.
std::vector<PNode> RemoveDead(std::vector<PNode> body, const ChainExtents& x) {
  std::vector<PNode> out;
  for (PNode& n : body) {
    if (n.loop == 0) {
      out.push_back(std::move(n));
      continue;
    }
    std::vector<PNode> inner = RemoveDead(std::move(n.body), x);
    if (x.Of(n.loop) > 1) {
      out.push_back(Loop(n.loop, std::move(inner)));
    } else {
      for (PNode& c : inner) out.push_back(std::move(c));
    }
  }
  return out;
}

// Step 3b: adjacent loops over the same variable merge (their separation came from a loop
// that vanished, so the dependence that split them is gone).
std::vector<PNode> MergeAdjacent(std::vector<PNode> body) {
  std::vector<PNode> out;
  for (PNode& n : body) {
    if (n.loop != 0 && !out.empty() && out.back().loop == n.loop) {
      for (PNode& c : n.body) out.back().body.push_back(std::move(c));
    } else {
      out.push_back(std::move(n));
    }
  }
  for (PNode& n : out)
    if (n.loop != 0) n.body = MergeAdjacent(std::move(n.body));
  return out;
}

// Step 4: bottom-up, a load/store leaves every loop that does not index its tensor.
std::vector<PNode> Hoist(std::vector<PNode> body) {
  std::vector<PNode> out;
  for (PNode& n : body) {
    if (n.loop == 0) {
      out.push_back(std::move(n));
      continue;
    }
    std::vector<PNode> inner = Hoist(std::move(n.body));
    std::vector<PNode> stay, before, after;
    for (PNode& c : inner) {
      if (c.loop == 0 && IsMemory(c.stmt) && !Indexes(c.stmt, n.loop)) {
        (IsStore(c.stmt) ? after : before).push_back(std::move(c));
      } else {
        stay.push_back(std::move(c));
      }
    }
    for (PNode& c : before) out.push_back(std::move(c));
    if (!stay.empty()) out.push_back(Loop(n.loop, std::move(stay)));
    for (PNode& c : after) out.push_back(std::move(c));
  }
  return out;
}

std::string PrintBody(const std::vector<PNode>& body);
std::string PrintNode(const PNode& n) {
  if (n.loop == 0) return StmtName(n.stmt);
  if (n.body.size() == 1 && n.body[0].loop != 0) return n.loop + PrintNode(n.body[0]);
  return std::string(1, n.loop) + "(" + PrintBody(n.body) + ")";
}
std::string PrintBody(const std::vector<PNode>& body) {
  std::string s;
  for (const PNode& n : body) s += (s.empty() ? "" : ", ") + PrintNode(n);
  return s;
}

void Collect(const std::vector<PNode>& body, const std::string& enclosing,
             std::vector<ChainSchedule::Placement>& out) {
  for (const PNode& n : body) {
    if (n.loop == 0) {
      out.push_back({n.stmt, enclosing});
    } else {
      Collect(n.body, enclosing + n.loop, out);
    }
  }
}

// Loops of `loops` that come after `reduction` and index the held tensor: while the
// reduction loop runs outside them, one partial tile per iteration of theirs stays alive.
std::string HeldTileLoops(const std::string& loops, char reduction, const char* tensor_index) {
  const size_t r = loops.find(reduction);
  std::string out;
  if (r == std::string::npos) return out;
  for (size_t i = r + 1; i < loops.size(); ++i) {
    for (const char* p = tensor_index; *p; ++p)
      if (*p == loops[i]) out += loops[i];
  }
  return out;
}

// The per-block loops of the expression without bound and dead loops, in the paper's
// compact notation.
std::string SubExpression(const TilingExpr& e, const ChainExtents& x) {
  std::string s;
  if (!e.flat) {
    for (ChainLoop l : e.order) {
      const char c = LoopLetter(l);
      if (c != 'm' && c != 'h' && x.Of(c) > 1) s += c;
    }
    return s;
  }
  std::string kids;
  if (x.k > 1) kids += 'k';
  if (x.h > 1) kids += 'h';
  const std::string seq = kids.size() == 2 ? "(k,h)" : kids;
  return (x.n > 1 ? "n" : "") + seq;
}

}  // namespace

const char* StmtName(ChainStmt s) {
  switch (s) {
    case ChainStmt::kLoadA: return "L_A";
    case ChainStmt::kLoadB: return "L_B";
    case ChainStmt::kComputeC: return "C_C";
    case ChainStmt::kLoadD: return "L_D";
    case ChainStmt::kComputeE: return "C_E";
    case ChainStmt::kStoreE: return "S_E";
  }
  return "?";
}

int64_t ChainExtents::Of(char loop) const {
  switch (loop) {
    case 'b': return b;
    case 'm': return m;
    case 'n': return n;
    case 'k': return k;
    case 'h': return h;
  }
  assert(false && "unknown loop letter");
  return 1;
}

ChainExtents ExtentsOf(const GemmChainShape& shape, const ChainTiles& t) {
  return ChainExtents{shape.batch, CeilDiv(shape.m, t.bm), CeilDiv(shape.n, t.bn),
                      CeilDiv(shape.k, t.bk), CeilDiv(shape.h, t.bh)};
}

const ChainSchedule::Placement& ChainSchedule::Find(ChainStmt s) const {
  for (const Placement& p : stmts)
    if (p.stmt == s) return p;
  assert(false && "every schedule places all six statements");
  return stmts.front();
}

ChainSchedule ScheduleChain(const TilingExpr& e, const ChainExtents& x) {
  using S = ChainStmt;
  // Steps 1 and 2: grid loops and the per-block nest with the statements in place.
  std::string grid_loops;
  std::vector<PNode> block;
  if (!e.flat) {
    grid_loops = "bmh";
    std::string inner;  // per-block loops in written order: "nk" or "kn"
    for (ChainLoop l : e.order)
      if (l == ChainLoop::kN || l == ChainLoop::kK) inner += LoopLetter(l);
    if (inner == "nk") {
      block.push_back(Loop('n', {Loop('k', {Stmt(S::kLoadA), Stmt(S::kLoadB),
                                            Stmt(S::kComputeC)}),
                                 Stmt(S::kLoadD), Stmt(S::kComputeE)}));
    } else {  // "kn": all n tiles of C accumulate over k, then a second n loop consumes them
      block.push_back(Loop('k', {Loop('n', {Stmt(S::kLoadA), Stmt(S::kLoadB),
                                            Stmt(S::kComputeC)})}));
      block.push_back(Loop('n', {Stmt(S::kLoadD), Stmt(S::kComputeE)}));
    }
    block.push_back(Stmt(S::kStoreE));
  } else {
    grid_loops = "bm";
    block.push_back(Loop('n', {Loop('k', {Stmt(S::kLoadA), Stmt(S::kLoadB), Stmt(S::kComputeC)}),
                               Loop('h', {Stmt(S::kLoadD), Stmt(S::kComputeE)})}));
    block.push_back(Loop('h', {Stmt(S::kStoreE)}));  // E is complete once n is done
  }
  // Steps 3 and 4.
  block = Hoist(MergeAdjacent(RemoveDead(std::move(block), x)));

  ChainSchedule s;
  for (char g : grid_loops)
    if (x.Of(g) > 1) s.grid += g;
  s.sub_expression = SubExpression(e, x);
  s.block_text = PrintBody(block);
  s.text = s.grid.empty() ? s.block_text : s.grid + "(" + s.block_text + ")";
  Collect(block, s.grid, s.stmts);
  s.c_tile_loops = HeldTileLoops(s.Find(S::kComputeC).loops, 'k', "mn");
  s.e_tile_loops = HeldTileLoops(s.Find(S::kComputeE).loops, 'n', "mh");
  return s;
}

ChainSchedule StructuralSchedule(const TilingExpr& e) {
  return ScheduleChain(e, ChainExtents{2, 2, 2, 2, 2});
}

ChainProgram BuildChainProgramUnchecked(const Candidate& c) {
  ChainProgram p;
  p.extents = ExtentsOf(c.shape, c.tiles);
  p.schedule = ScheduleChain(c.expr, p.extents);
  auto product = [&](const std::string& loops) {
    int64_t v = 1;
    for (char l : loops) v *= p.extents.Of(l);
    return v;
  };
  for (const ChainSchedule::Placement& pl : p.schedule.stmts)
    p.trips[static_cast<int>(pl.stmt)] = product(pl.loops);
  p.blocks = product(p.schedule.grid);
  p.c_tiles = product(p.schedule.c_tile_loops);
  p.e_tiles = product(p.schedule.e_tile_loops);
  return p;
}

Expected<ChainProgram> BuildChainProgram(const Candidate& c) {
  STOF_RETURN_IF_ERROR(ValidateCandidate(c));
  return BuildChainProgramUnchecked(c);
}

}  // namespace stof::engine
