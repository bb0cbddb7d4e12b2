// stof_png_check FILE W H: exits 0 when FILE is a W x H PNG that is a real picture, not a
// blank or single-colour frame: at least 16 distinct colours, and neither the darkest nor the
// brightest colour covering more than 90% of the pixels. Used by the GUI test.
#include <stb_image.h>

#include <cstdio>
#include <cstdlib>
#include <map>

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: stof_png_check FILE WIDTH HEIGHT\n");
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
  stbi_image_free(px);
  return rc;
}
