// The plots' shared scaffolding (plot_frame.h) and the public helpers of plots.h that every
// plot uses (SeriesColor, FormatSI).
#include "app/studio/widgets/plot_frame.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>

namespace stof::app::plots {

namespace detail {

bool FitScale(const Axis& axis, const std::vector<double>& values, bool from_zero, Scale* s) {
  s->log = axis.log;
  if (axis.min < axis.max && s->Usable(axis.min) && s->Usable(axis.max)) {
    s->lo = s->T(axis.min);
    s->hi = s->T(axis.max);
    return true;
  }
  double lo = INFINITY, hi = -INFINITY;
  for (double v : values)
    if (s->Usable(v)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  if (lo > hi) return false;
  if (axis.log) {
    s->lo = std::floor(std::log10(lo));
    s->hi = std::ceil(std::log10(hi));
    if (s->hi <= s->lo) s->hi = s->lo + 1;
    return true;
  }
  if (from_zero) {
    lo = std::min(lo, 0.0);
    hi = std::max(hi, 0.0);
  }
  if (hi <= lo) {
    const double pad = lo != 0 ? std::fabs(lo) * 0.5 : 1.0;
    lo -= pad;
    hi += pad;
  }
  const double m = 0.05 * (hi - lo);
  s->lo = (from_zero && lo == 0) ? 0 : lo - m;
  s->hi = (from_zero && hi == 0) ? 0 : hi + m;
  return true;
}

std::vector<double> Ticks(const Scale& s, float pixels, float spacing) {
  std::vector<double> out;
  const int target = std::max(2, static_cast<int>(std::fabs(pixels) / spacing));
  if (s.log) {
    const int first = static_cast<int>(std::ceil(s.lo - 1e-9)), last = static_cast<int>(std::floor(s.hi + 1e-9));
    const int stride = std::max(1, (last - first + 1 + target - 1) / target);
    for (int e = first; e <= last; e += stride) out.push_back(std::pow(10.0, e));
    if (out.empty()) out = {std::pow(10.0, s.lo), std::pow(10.0, s.hi)};
    return out;
  }
  const double raw = (s.hi - s.lo) / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double f : {1.0, 2.0, 5.0, 10.0})
    if (f * mag >= raw) {
      step = f * mag;
      break;
    }
  for (double k = std::ceil(s.lo / step); k * step <= s.hi + step * 1e-9; k += 1)
    out.push_back(std::fabs(k) < 1e-9 ? 0.0 : k * step);
  return out;
}

Frame BeginFrame(const char* id, float height) {
  Frame f;
  f.outer0 = ImGui::GetCursorScreenPos();
  const float width = std::max(160.0f, ImGui::GetContentRegionAvail().x);
  height = std::max(height, 5 * LineH());
  ImGui::InvisibleButton(id, ImVec2(width, height));
  f.outer1 = ImVec2(f.outer0.x + width, f.outer0.y + height);
  f.dl = ImGui::GetWindowDrawList();
  f.hovered = ImGui::IsItemHovered();
  f.mouse = ImGui::GetIO().MousePos;
  f.plot0 = ImVec2(f.outer0.x + 8, f.outer0.y + LineH() + 6);
  f.plot1 = ImVec2(f.outer1.x - 10, f.outer1.y - 2 * LineH() - 8);
  f.dl->AddRectFilled(f.outer0, f.outer1, IM_COL32(18, 19, 24, 255));
  return f;
}

void DrawNoData(const Frame& f, const std::string& y_label, const char* why) {
  f.dl->AddRectFilled(f.plot0, f.plot1, kBackground);
  f.dl->AddText(ImVec2(f.outer0.x + 4, f.outer0.y + 2), kText, y_label.c_str());
  const ImVec2 sz = ImGui::CalcTextSize(why);
  f.dl->AddText(ImVec2((f.plot0.x + f.plot1.x - sz.x) * 0.5f, (f.plot0.y + f.plot1.y - sz.y) * 0.5f),
                kDim, why);
}

std::string Fit(const std::string& s, float max_w) {
  if (ImGui::CalcTextSize(s.c_str()).x <= max_w) return s;
  std::string t = s;
  while (!t.empty() && ImGui::CalcTextSize((t + "..").c_str()).x > max_w) t.pop_back();
  return t.empty() ? std::string() : t + "..";
}

void YAxis(Frame* f, Scale* y, const std::string& label) {
  y->p0 = f->plot1.y;
  y->p1 = f->plot0.y;
  const std::vector<double> ticks = Ticks(*y, f->plot1.y - f->plot0.y, 2.2f * LineH());
  float w = 0;
  for (double t : ticks) w = std::max(w, ImGui::CalcTextSize(FormatSI(t).c_str()).x);
  f->plot0.x = f->outer0.x + w + 10;
  f->dl->AddRectFilled(f->plot0, f->plot1, kBackground);
  if (y->log && y->hi - y->lo <= 8) {  // minor grid at 2..9 x 10^k
    for (int e = static_cast<int>(std::floor(y->lo)); e < y->hi; ++e)
      for (int m = 2; m <= 9; ++m) {
        const double v = m * std::pow(10.0, e);
        if (y->T(v) > y->lo && y->T(v) < y->hi)
          f->dl->AddLine(ImVec2(f->plot0.x, y->Px(v)), ImVec2(f->plot1.x, y->Px(v)), kMinorGrid);
      }
  }
  for (double t : ticks) {
    const float py = y->Px(t);
    f->dl->AddLine(ImVec2(f->plot0.x, py), ImVec2(f->plot1.x, py), kGrid);
    const std::string s = FormatSI(t);
    const ImVec2 sz = ImGui::CalcTextSize(s.c_str());
    f->dl->AddText(ImVec2(f->plot0.x - sz.x - 5, std::clamp(py - sz.y * 0.5f, f->outer0.y, f->outer1.y - sz.y)),
                   kText, s.c_str());
  }
  f->dl->AddText(ImVec2(f->outer0.x + 4, f->outer0.y + 2), kText, label.c_str());
}

void XAxis(const Frame& f, Scale* x, const std::string& label) {
  x->p0 = f.plot0.x;
  x->p1 = f.plot1.x;
  if (x->log && x->hi - x->lo <= 8) {
    for (int e = static_cast<int>(std::floor(x->lo)); e < x->hi; ++e)
      for (int m = 2; m <= 9; ++m) {
        const double v = m * std::pow(10.0, e);
        if (x->T(v) > x->lo && x->T(v) < x->hi)
          f.dl->AddLine(ImVec2(x->Px(v), f.plot0.y), ImVec2(x->Px(v), f.plot1.y), kMinorGrid);
      }
  }
  float last_right = -INFINITY;
  for (double t : Ticks(*x, f.plot1.x - f.plot0.x, 6.0f * LineH())) {
    const float px = x->Px(t);
    f.dl->AddLine(ImVec2(px, f.plot0.y), ImVec2(px, f.plot1.y), kGrid);
    const std::string s = FormatSI(t);
    const ImVec2 sz = ImGui::CalcTextSize(s.c_str());
    const float lx = std::clamp(px - sz.x * 0.5f, f.outer0.x, f.outer1.x - sz.x);
    if (lx < last_right + 6) continue;  // never overlap two labels
    f.dl->AddText(ImVec2(lx, f.plot1.y + 3), kText, s.c_str());
    last_right = lx + sz.x;
  }
  const ImVec2 sz = ImGui::CalcTextSize(label.c_str());
  f.dl->AddText(ImVec2((f.plot0.x + f.plot1.x - sz.x) * 0.5f, f.plot1.y + LineH() + 5), kText, label.c_str());
}

void Legend(const Frame& f, const std::vector<LegendEntry>& entries) {
  float x = f.outer1.x - 6;
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    if (it->name.empty()) continue;
    const ImVec2 sz = ImGui::CalcTextSize(it->name.c_str());
    x -= sz.x;
    const float y = f.outer0.y + 2;
    f.dl->AddText(ImVec2(x, y), it->color ? kText : kDim, it->name.c_str());
    if (!it->color) {  // a hint, no swatch
      x -= 14;
      continue;
    }
    const ImVec2 a(x - 16, y + 2), b(x - 5, y + sz.y - 2);
    if (it->outline) f.dl->AddRect(a, b, it->color, 0, 0, 1.5f);
    else f.dl->AddRectFilled(a, b, it->color);
    x -= 30;
  }
}

uint32_t HashColor(const std::string& s) {
  return SeriesColor(static_cast<int>(std::hash<std::string>{}(s) % 9));
}

}  // namespace detail

using detail::Finite;

uint32_t SeriesColor(int index) {
  // Tableau-like hues, lightened for the dark background.
  static constexpr uint32_t kPalette[] = {
      IM_COL32(86, 160, 235, 255), IM_COL32(255, 160, 64, 255),  IM_COL32(100, 196, 100, 255),
      IM_COL32(235, 96, 96, 255),  IM_COL32(178, 132, 228, 255), IM_COL32(200, 150, 110, 255),
      IM_COL32(236, 130, 200, 255), IM_COL32(200, 200, 90, 255),  IM_COL32(80, 206, 216, 255)};
  constexpr int n = sizeof kPalette / sizeof kPalette[0];
  return kPalette[((index % n) + n) % n];
}

std::string FormatSI(double v) {
  if (!Finite(v)) return "-";
  static const char* const kSuffix[] = {"", "k", "M", "G", "T", "P", "E"};
  int e = 0;
  while (std::fabs(v) >= 999.5 && e < 6) {
    v /= 1000;
    ++e;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g%s", v, kSuffix[e]);
  return buf;
}

std::string FormatSI(double v, const char* unit) {
  std::string s = FormatSI(v);
  if (s == "-") return s;
  const bool prefixed = !s.empty() && std::isalpha(static_cast<unsigned char>(s.back())) && s.back() != 'e';
  std::string out = prefixed ? s.substr(0, s.size() - 1) : s;
  out += ' ';
  if (prefixed) out += s.back();
  out += unit;
  return out;
}

}  // namespace stof::app::plots
