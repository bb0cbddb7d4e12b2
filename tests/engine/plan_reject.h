// A plan's JSON edited one way at a time must be refused with a message that names the file
// and holds the expected text: the rejection tests of plan_test.cpp and plan_long_test.cpp.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/plan/plan.h"

namespace stof::engine::testing {

struct BadPlanEdit {
  std::string what;
  std::function<void(nlohmann::json&)> edit;
  std::string message;  // must appear in the error
};

inline void ExpectRejected(const Plan& base, const std::vector<BadPlanEdit>& cases) {
  for (const BadPlanEdit& c : cases) {
    SCOPED_TRACE(c.what);
    nlohmann::json j = PlanToJson(base);
    c.edit(j);
    auto p = PlanFromJson(j, "plan.json");
    ASSERT_FALSE(p.IsOk()) << j.dump();
    EXPECT_NE(p.Message().find(c.message), std::string::npos)
        << "message: " << p.Message() << "\nwanted:  " << c.message;
    EXPECT_EQ(p.Message().rfind("plan.json: ", 0), 0u) << p.Message();
  }
}

}  // namespace stof::engine::testing
