// DrawBarChart: a bar chart drawn with ImDrawList (ImPlot is not available): one bar per
// value, a y axis from 0 to the maximum with its label, and the hovered bar's index and value
// in a tooltip. Used by the layout panel (valid blocks per block row). O(values) per frame;
// bars narrower than a pixel are merged by taking the maximum of the values they cover.
#pragma once

#include <cstdint>
#include <vector>

namespace stof::app {

// `label` names the value in the tooltip ("valid blocks"); `index_label` the bar ("row").
void DrawBarChart(const char* id, const std::vector<int32_t>& values, float height,
                  unsigned int color, const char* index_label, const char* label);

}  // namespace stof::app
