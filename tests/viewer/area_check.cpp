// Checks an area selection made through scripted input (tests/viewer/scripts/area.txt) against the
// trace model: `pipescope_viewer_area_check TRACE STATE.json` reads the state dump's area (its
// display range and track names) and recomputes its aggregates with area_reference.hpp, from the
// trace loaded again. Exit 0 if every number agrees, 1 (naming the number) if not.
#include "area_reference.hpp"

#include <pipescope/trace/trace_model.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <string>

namespace trace = pipescope::trace;
using json = nlohmann::json;

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: pipescope_viewer_area_check TRACE STATE.json\n");
        return 2;
    }
    const trace::trace_model m = trace::load_trace_file(argv[1]);
    std::ifstream in(argv[2]);
    const json state = json::parse(in);
    const json& area = state.at("area");
    if (area.is_null()) {
        std::fprintf(stderr, "%s: no area selected\n", argv[2]);
        return 1;
    }
    // One file on the absolute axis: display time = trace time - the first run's start.
    if (state.at("align_runs").get<bool>() || state.at("files").size() != 1) {
        std::fprintf(stderr, "expected one file on the absolute axis\n");
        return 2;
    }
    std::uint64_t doc_start = ~0ull;
    for (const json& r : state.at("runs")) doc_start = std::min(doc_start, r.at("start").get<std::uint64_t>());
    auto abs_ns = [&](double t) { return static_cast<std::uint64_t>(std::max(0.0, t + static_cast<double>(doc_start))); };
    const std::uint64_t lo = abs_ns(area.at("start").get<double>()), hi = std::max(lo, abs_ns(area.at("end").get<double>()));
    std::vector<std::uint32_t> tracks;
    for (const json& t : area.at("tracks")) {
        const std::string name = t.at("name");
        for (std::uint32_t ti = 0; ti < m.tracks.size(); ++ti)
            if (m.tracks[ti].name == name) tracks.push_back(ti);
    }
    const viewer_test::area_reference r = viewer_test::reference_area(m, tracks, lo, hi);

    int failures = 0;
    auto agree = [&](const std::string& what, std::uint64_t got, std::uint64_t want) {
        if (got == want) return;
        std::fprintf(stderr, "%s: the viewer says %llu, the trace model %llu\n", what.c_str(),
                     static_cast<unsigned long long>(got), static_cast<unsigned long long>(want));
        ++failures;
    };
    for (int k = 0; k < pipescope::viewer::area_state_count; ++k) {
        const char* name = pipescope::viewer::area_state_name(k);
        agree(std::string("time in state ") + name, area.at("state_ns").value(name, std::uint64_t{0}), r.state_ns[k]);
    }
    std::uint64_t listed_total = 0, model_total = 0;
    for (const json& s : area.at("stages")) {
        const long stage = s.at("stage").get<long>();
        agree("time in stage " + std::to_string(stage), s.at("ns").get<std::uint64_t>(),
              r.stage_ns.count(stage) ? r.stage_ns.at(stage) : 0);
        listed_total += s.at("ns").get<std::uint64_t>();
    }
    for (const auto& [stage, ns] : r.stage_ns) model_total += ns;
    agree("node time over all stages", listed_total, model_total);
    agree("nodes", area.at("nodes").at("count").get<std::uint64_t>(), r.nodes);
    agree("steals", area.at("steals").get<std::uint64_t>(), r.steals);
    agree("tracks", area.at("tracks").size(), tracks.size());
    if (r.nodes == 0) {
        std::fprintf(stderr, "the area holds no node: nothing checked\n");
        return 1;
    }
    std::printf("area [%llu, %llu) over %zu tracks: %llu nodes, %llu steals, every number agrees with the trace model\n",
                static_cast<unsigned long long>(lo), static_cast<unsigned long long>(hi), tracks.size(),
                static_cast<unsigned long long>(r.nodes), static_cast<unsigned long long>(r.steals));
    return failures ? 1 : 0;
}
