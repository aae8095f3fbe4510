// Checks a pipescope-viewer screenshot for content.
//   pipescope_viewer_pngcheck FILE.png [--min-colours N] [--stage-colours K:MINPX] [--colour RRGGBB:MINPX]...
//                             [--stage-bands N:MINPX:MINROWS] [--boxes HEX[,HEX...]:N] [--colour-max HEX:N]
//                             [--region X0:Y0:X1:Y1]
// --region: the --colour and --colour-max checks after it count only pixels with X0 <= x < X1 and
// Y0 <= y < Y1 (a picture's other parts hold text whose digits change from run to run).
// --stage-bands: at least N horizontal bands, each at least MINROWS rows high, of rows holding at
// least MINPX stage-palette pixels each; bands are separated by 6 or more rows without (the compare
// view draws one such band per run: its worker rows, between run headers).
// Prints what it measured; exit 0 if every check holds, 1 otherwise.
#include <stb_image.h>

#include <algorithm>
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
        std::fprintf(stderr, "usage: %s FILE.png [--min-colours N] [--stage-colours K:MINPX] [--colour RRGGBB:MINPX]\n",
                     argv[0]);
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
    // Stage-palette pixels per image row (for --stage-bands).
    std::vector<long> stage_row(static_cast<std::size_t>(h), 0);
    {
        const std::unordered_set<unsigned> pal(std::begin(stage_palette), std::end(stage_palette));
        for (long y = 0; y < h; ++y)
            for (long x = 0; x < w; ++x) {
                const long i = y * w + x;
                if (pal.count((unsigned(px[3 * i]) << 16) | (unsigned(px[3 * i + 1]) << 8) | px[3 * i + 2])) ++stage_row[y];
            }
    }
    long top = 0;
    unsigned top_c = 0;
    for (auto& [c, k] : count)
        if (k > top) {
            top = k;
            top_c = c;
        }
    const double bg_frac = static_cast<double>(top) / (static_cast<double>(w) * h);
    std::printf("%s: %dx%d, %zu distinct colours, most common #%06X covers %.1f%%\n", argv[1], w, h, count.size(), top_c,
                100 * bg_frac);
    bool ok = bg_frac < 0.97;
    if (!ok) std::printf("FAIL: the image is (almost) all one colour\n");
    int stages_present = 0;
    for (unsigned c : stage_palette) {
        const long k = count.count(c) ? count[c] : 0;
        std::printf("  stage colour #%06X: %ld px\n", c, k);
    }
    long rx0 = 0, ry0 = 0, rx1 = w, ry1 = h;   // --region
    auto colour_at = [&](long k) { return (unsigned(px[3 * k]) << 16) | (unsigned(px[3 * k + 1]) << 8) | px[3 * k + 2]; };
    auto count_in_region = [&](const std::unordered_set<unsigned>& set) {
        long k = 0;
        for (long y = std::max(0L, ry0); y < std::min<long>(h, ry1); ++y)
            for (long x = std::max(0L, rx0); x < std::min<long>(w, rx1); ++x) k += set.count(colour_at(y * w + x));
        return k;
    };
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--region" && i + 1 < argc) {
            if (std::sscanf(argv[++i], "%ld:%ld:%ld:%ld", &rx0, &ry0, &rx1, &ry1) != 4) {
                std::printf("FAIL: --region wants X0:Y0:X1:Y1, got '%s'\n", argv[i]);
                ok = false;
            }
            continue;
        }
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
        } else if (a == "--stage-bands" && i + 1 < argc) {
            long want = 0, minpx = 0, minrows = 0;
            std::sscanf(argv[++i], "%ld:%ld:%ld", &want, &minpx, &minrows);
            long bands = 0, run_rows = 0, gap = 1000, first = -1;
            auto close = [&](long y_end) {
                if (run_rows >= minrows) {
                    ++bands;
                    std::printf("  stage band %ld: rows %ld-%ld\n", bands, first, y_end);
                }
                run_rows = 0;
            };
            for (long y = 0; y < h; ++y) {
                if (stage_row[y] >= minpx) {
                    if (gap >= 6 && run_rows > 0) close(y - gap);
                    if (run_rows == 0) first = y;
                    run_rows += 1 + (gap < 6 ? gap : 0);
                    gap = 0;
                } else {
                    ++gap;
                }
            }
            if (run_rows > 0) close(h - gap);
            if (bands < want) {
                std::printf("FAIL: %ld stage bands (>= %ld rows of >= %ld stage px), expected >= %ld\n", bands, minrows,
                            minpx, want);
                ok = false;
            }
        } else if ((a == "--boxes" || a == "--colour-max") && i + 1 < argc) {
            // --boxes HEX[,HEX...]:N (the DAG view): exactly N boxes, i.e. 4-connected components of
            // pixels in these colours whose bounding box has the most common size among components
            // of >= 16 px (node boxes at one zoom are all alike; legend swatches, glyph holes and
            // partial shapes are not), each at least half filled.
            // --colour-max HEX:N: at most N pixels of that colour.
            const std::string spec = argv[++i];
            const auto colon = spec.rfind(':');
            const long want = std::atol(spec.c_str() + colon + 1);
            std::unordered_set<unsigned> set;
            for (std::size_t b = 0; b < colon;) {
                const std::size_t e = std::min(spec.find(',', b), colon);
                set.insert(static_cast<unsigned>(std::strtoul(spec.substr(b, e - b).c_str(), nullptr, 16)));
                b = e + 1;
            }
            if (a == "--colour-max") {
                const long k = count_in_region(set);
                std::printf("  colour %s: %ld px (at most %ld)\n", spec.substr(0, colon).c_str(), k, want);
                if (k > want) ok = false;
                continue;
            }
            struct comp {
                long area, x0, y0, x1, y1;
            };
            std::vector<comp> comps;
            std::vector<char> seen(static_cast<std::size_t>(w) * h, 0);
            std::vector<long> stack;
            for (long j = 0; j < static_cast<long>(w) * h; ++j) {
                if (seen[j] || !set.count(colour_at(j))) continue;
                comp c{0, w, h, -1, -1};
                seen[j] = 1;
                stack.assign(1, j);
                while (!stack.empty()) {
                    const long k = stack.back();
                    stack.pop_back();
                    const long x = k % w, y = k / w;
                    ++c.area;
                    c.x0 = std::min(c.x0, x), c.y0 = std::min(c.y0, y), c.x1 = std::max(c.x1, x), c.y1 = std::max(c.y1, y);
                    const long nb[4] = {x > 0 ? k - 1 : -1, x + 1 < w ? k + 1 : -1, y > 0 ? k - w : -1,
                                        y + 1 < h ? k + w : -1};
                    for (long q : nb)
                        if (q >= 0 && !seen[q] && set.count(colour_at(q))) seen[q] = 1, stack.push_back(q);
                }
                comps.push_back(c);
            }
            std::map<std::pair<long, long>, long> sizes;
            for (const comp& c : comps)
                if (c.area >= 16) ++sizes[{c.x1 - c.x0 + 1, c.y1 - c.y0 + 1}];
            std::pair<long, long> mode{0, 0};
            long best = 0;
            for (auto& [sz, k] : sizes)
                if (k > best) best = k, mode = sz;
            long boxes = 0;
            for (const comp& c : comps)
                if (std::pair{c.x1 - c.x0 + 1, c.y1 - c.y0 + 1} == mode && 2 * c.area >= mode.first * mode.second) ++boxes;
            std::printf("  boxes in %s: %ld of %ldx%ld px (%zu components), expected %ld\n", spec.substr(0, colon).c_str(),
                        boxes, mode.first, mode.second, comps.size(), want);
            if (boxes != want) {
                std::printf("FAIL: %ld boxes, expected %ld\n", boxes, want);
                ok = false;
            }
        } else if (a == "--colour" && i + 1 < argc) {
            unsigned c = 0;
            long minpx = 0;
            std::sscanf(argv[++i], "%x:%ld", &c, &minpx);
            const long k = count_in_region({c});
            std::printf("  colour #%06X: %ld px\n", c, k);
            if (k < minpx) {
                std::printf("FAIL: colour #%06X has %ld px, expected >= %ld\n", c, k, minpx);
                ok = false;
            }
        }
    }
    stbi_image_free(px);
    std::printf(ok ? "OK\n" : "FAIL\n");
    return ok ? 0 : 1;
}
