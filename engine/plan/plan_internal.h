// Internal pieces shared by the plan sources, not part of the public API (plan.h is): the
// message prefix of a named plan and the printer of the text SavePlan writes. Included only by
// plan.cpp, plan_read.cpp, plan_write.cpp and plan_file.cpp.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace stof::engine::plan_detail {

// "<name>: ", or "" for an unnamed plan: the start of every message about it.
inline std::string Prefix(const std::string& name) { return name.empty() ? "" : name + ": "; }

// Pretty JSON with 2-space indent, keys in schema order; arrays of scalars stay on one line
// (plan_write.cpp). Appends to `out`; `depth` is the nesting level of `j` (0 at the top).
void Print(const nlohmann::json& j, int depth, std::string& out);

}  // namespace stof::engine::plan_detail
