// stof_png_check FILE W H [--text-lines RRGGBB Y0 Y1 N]: exits 0 when FILE is a W x H PNG that
// is a real picture, not a blank or single-colour frame: at least 16 distinct colours, and
// neither the darkest nor the brightest colour covering more than 90% of the pixels. With
// --text-lines, also at least N lines of text in colour RRGGBB between rows Y0 and Y1: bands of
// consecutive rows holding that exact colour (the fully covered pixels of the glyphs), bands
// closer than 4 rows merged. Used by the GUI test (an error shown wrapped over several lines).
#include <stb_image.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

int main(int argc, char** argv) {
  const bool text_lines = argc == 9 && std::strcmp(argv[4], "--text-lines") == 0;
  if (argc != 4 && !text_lines) {
    std::fprintf(stderr, "usage: stof_png_check FILE WIDTH HEIGHT [--text-lines RRGGBB Y0 Y1 N]\n");
    return 2;
  }
  int w = 0, h = 0, n = 0;
  unsigned char* px = stbi_load(argv[1], &w, &h, &n, 3);
  if (!px) {
    std::fprintf(stderr, "%s: not a readable PNG: %s\n", argv[1], stbi_failure_reason());
    return 1;
  }
  int rc = 0;
  if (w != std::atoi(argv[2]) || h != std::atoi(argv[3])) {
    std::fprintf(stderr, "%s: size %d x %d, want %s x %s\n", argv[1], w, h, argv[2], argv[3]);
    rc = 1;
  }
  std::map<unsigned, long> hist;
  const long total = static_cast<long>(w) * h;
  for (long i = 0; i < total; ++i)
    ++hist[px[3 * i] | (px[3 * i + 1] << 8) | (unsigned(px[3 * i + 2]) << 16)];
  long top = 0;
  for (const auto& [c, count] : hist) top = count > top ? count : top;
  std::printf("%s: %d x %d, %zu colours, most common covers %.1f%%\n", argv[1], w, h, hist.size(),
              100.0 * top / total);
  if (hist.size() < 16) {
    std::fprintf(stderr, "%s: only %zu colours: blank frame?\n", argv[1], hist.size());
    rc = 1;
  }
  if (top > 0.9 * total) {
    std::fprintf(stderr, "%s: one colour covers %.1f%% of the frame\n", argv[1], 100.0 * top / total);
    rc = 1;
  }
  if (text_lines) {
    const unsigned long rgb = std::strtoul(argv[5], nullptr, 16);
    const int y0 = std::atoi(argv[6]), y1 = std::atoi(argv[7]), want = std::atoi(argv[8]);
    int bands = 0, last = -1000;
    for (int y = y0 < 0 ? 0 : y0; y < y1 && y < h; ++y) {
      bool hit = false;
      for (int x = 0; x < w && !hit; ++x) {
        const unsigned char* p = px + 3 * (static_cast<long>(y) * w + x);
        hit = p[0] == (rgb >> 16 & 0xff) && p[1] == (rgb >> 8 & 0xff) && p[2] == (rgb & 0xff);
      }
      if (!hit) continue;
      if (y - last > 4) ++bands;
      last = y;
    }
    std::printf("%s: %d line(s) of text in %s between rows %d and %d\n", argv[1], bands, argv[5], y0, y1);
    if (bands < want) {
      std::fprintf(stderr, "%s: %d line(s) of %s text, want at least %d\n", argv[1], bands, argv[5], want);
      rc = 1;
    }
  }
  stbi_image_free(px);
  return rc;
}
