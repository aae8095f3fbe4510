// Checks a pipescope-viewer screenshot for content.
//   pipescope_viewer_pngcheck FILE.png [--min-colours N] [--stage-colours K:MINPX] [--colour RRGGBB:MINPX]...
// Prints what it measured; exit 0 if every check holds, 1 otherwise.
#include <stb_image.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <unordered_set>
#include <vector>

static const unsigned stage_palette[] = {0x4E79A7, 0xF28E2B, 0x59A14F, 0xB07AA1, 0xE15759,
                                         0x76B7B2, 0xEDC948, 0xFF9DA7, 0x9C755F, 0x8CD17D};

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s FILE.png [--min-colours N] [--stage-colours K:MINPX] [--colour RRGGBB:MINPX]\n", argv[0]);
        return 2;
    }
    int w = 0, h = 0, n = 0;
    unsigned char* px = stbi_load(argv[1], &w, &h, &n, 3);
    if (!px) {
        std::printf("FAIL %s: not a readable PNG\n", argv[1]);
        return 1;
    }
    std::map<unsigned, long> count;
    for (long i = 0; i < static_cast<long>(w) * h; ++i)
        ++count[(unsigned(px[3 * i]) << 16) | (unsigned(px[3 * i + 1]) << 8) | px[3 * i + 2]];
    stbi_image_free(px);
    long top = 0;
    unsigned top_c = 0;
    for (auto& [c, k] : count)
        if (k > top) { top = k; top_c = c; }
    const double bg_frac = static_cast<double>(top) / (static_cast<double>(w) * h);
    std::printf("%s: %dx%d, %zu distinct colours, most common #%06X covers %.1f%%\n", argv[1], w, h, count.size(), top_c, 100 * bg_frac);
    bool ok = bg_frac < 0.97;
    if (!ok) std::printf("FAIL: the image is (almost) all one colour\n");
    int stages_present = 0;
    for (unsigned c : stage_palette) {
        const long k = count.count(c) ? count[c] : 0;
        std::printf("  stage colour #%06X: %ld px\n", c, k);
    }
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--min-colours" && i + 1 < argc) {
            const long m = std::atol(argv[++i]);
            if (static_cast<long>(count.size()) < m) {
                std::printf("FAIL: %zu distinct colours < %ld\n", count.size(), m);
                ok = false;
            }
        } else if (a == "--stage-colours" && i + 1 < argc) {
            int k = 0;
            long minpx = 0;
            std::sscanf(argv[++i], "%d:%ld", &k, &minpx);
            stages_present = 0;
            for (unsigned c : stage_palette)
                if (count.count(c) && count[c] >= minpx) ++stages_present;
            if (stages_present < k) {
                std::printf("FAIL: %d stage palette colours with >= %ld px, expected >= %d\n", stages_present, minpx, k);
                ok = false;
            }
        } else if (a == "--colour" && i + 1 < argc) {
            unsigned c = 0;
            long minpx = 0;
            std::sscanf(argv[++i], "%x:%ld", &c, &minpx);
            const long k = count.count(c) ? count[c] : 0;
            std::printf("  colour #%06X: %ld px\n", c, k);
            if (k < minpx) {
                std::printf("FAIL: colour #%06X has %ld px, expected >= %ld\n", c, k, minpx);
                ok = false;
            }
        }
    }
    std::printf(ok ? "OK\n" : "FAIL\n");
    return ok ? 0 : 1;
}
