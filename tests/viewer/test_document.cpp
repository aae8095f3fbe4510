#include <catch2/catch.hpp>

#include <model/document.hpp>
#include <model/lod.hpp>
#include <model/view_state.hpp>

#include <filesystem>
#include <fstream>

using namespace pipescope::viewer;
namespace fs = std::filesystem;

static const fs::path k2 = fs::path(PIPESCOPE_SOURCE_DIR) / "traces" / "pipe-fib-256-piper-K2.pftrace";

TEST_CASE("slice and instant names are classified for colours", "[viewer][document]") {
    CHECK(colour_of(pipescope::trace::meaning_of_name("stage 0")) == 0);
    CHECK(colour_of(pipescope::trace::meaning_of_name("stage 17")) == 17);
    CHECK(colour_of(pipescope::trace::meaning_of_name("stage x")) == key_other);
    CHECK(colour_of(pipescope::trace::meaning_of_name("idle")) == key_idle);
    CHECK(colour_of(pipescope::trace::meaning_of_name("parked")) == key_parked);
    CHECK(colour_of(pipescope::trace::meaning_of_name("waiting at stage 3")) == key_waiting);
    CHECK(colour_of(pipescope::trace::meaning_of_name("waiting to retire")) == key_waiting);
    CHECK(colour_of(pipescope::trace::meaning_of_name("throttled")) == key_throttled);
    CHECK(classify_instant_name("events lost") == instant_kind::events_lost);
    CHECK(classify_instant_name("wake worker 1") == instant_kind::wake);
    CHECK(classify_instant_name("stolen") == instant_kind::stolen);
}

TEST_CASE("an example trace loads into runs with workers, lines and counters", "[viewer][document]") {
    document d;
    d.add(load_file(k2));
    REQUIRE(d.runs.size() == 1);
    const run_ref& r = d.runs[0];
    CHECK(r.workers.size() == 2);
    CHECK(r.lines.size() >= 3);      // line 0, line 1, control
    CHECK(r.counters.size() >= 1);   // live iterations
    CHECK(r.start < r.end);
    CHECK(d.start == r.start);
    const loaded_file& f = *d.files[0];
    std::size_t stage_slices = 0;
    for (const auto& s : f.model.tracks[r.workers[0]].slices) stage_slices += is_stage(f.key(s));
    CHECK(stage_slices > 0);
    // The LOD of a whole worker track at 1000 px accounts for every slice exactly once.
    const row_view row = f.row(r.workers[0], 0);
    lod_params p;
    p.t_left = static_cast<double>(r.start);
    p.width = 1000;
    p.npp = static_cast<double>(r.end - r.start) / 1000 + 1;
    std::vector<lod_block> blocks;
    lod_merge(row, f.key_of_string.data(), p, blocks);
    std::size_t n = 0;
    for (const auto& b : blocks) n += b.count;
    CHECK(n == row.size);
    // Flows: a selection of a flow's end lists the flow.
    REQUIRE(!f.model.flows.empty());
    const auto& fl = f.model.flows[0];
    view_state st;
    st.select(d, {0, fl.from});
    REQUIRE(!st.sel_flows.empty());
    CHECK(st.sel_flows[0].outgoing);
    CHECK(st.sel_flows[0].other == fl.to);
    // Two files: runs stack, absolute or aligned.
    d.add(load_file(k2));
    CHECK(d.runs.size() == 2);
    CHECK(display_offset(d, d.runs[1], true) == static_cast<double>(d.runs[1].start));
    CHECK(display_offset(d, d.runs[1], false) == static_cast<double>(d.start));
}

TEST_CASE("select_node finds a pipeline node's slice, and nothing for a node no run has", "[viewer][document]") {
    document d;
    d.add(load_file(k2));
    const tm::pipeline_dag& dag = d.files[0]->model.runs[0].dag;
    REQUIRE(dag.nodes.size() > 20);
    const tm::dag_node& want = dag.nodes[20];
    const selection s = select_node(d, want.iteration, want.stage);
    REQUIRE(s.valid());
    CHECK(s.file == 0);
    CHECK(s.ev == want.slice);
    const tm::slice& sl = d.files[0]->model.tracks[s.ev.track].slices[s.ev.index];
    CHECK(sl.begin == want.start);
    CHECK(!select_node(d, dag.iterations + 5, 0).valid());           // past the last iteration
    CHECK(!select_node(d, want.iteration, want.stage, 7).valid());   // no run 7
}

TEST_CASE("a trace cut short loads its complete packets, says where, and its run says it is incomplete",
          "[viewer][document]") {
    const fs::path tmp = fs::temp_directory_path() / "pipescope-viewer-truncated.pftrace";
    std::string bytes;
    {
        std::ifstream in(k2, std::ios::binary);
        bytes.assign((std::istreambuf_iterator<char>(in)), {});
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2 + 7));
    }
    const auto f = load_file(tmp);
    REQUIRE(f);
    const tm::trace_model& m = f->model;
    CHECK(m.damage.empty());
    REQUIRE(m.cut_short);
    CHECK(m.packets > 0);
    const std::string cut = std::to_string(m.cut_short_at), size = std::to_string(bytes.size() / 2 + 7);
    CHECK(damage_note(*f) ==
          "pipescope-viewer-truncated.pftrace: the recording was cut short at byte " + cut + " of " + size +
              " (last packet incomplete: " + std::to_string(bytes.size() / 2 + 7 - m.cut_short_at) +
              " bytes not read); run '" + m.runs.at(0).name + "' has no summary: its " +
              std::to_string(m.runs[0].open_slices) + (m.runs[0].open_slices == 1 ? " slice" : " slices") +
              " still open were closed at their track's last event");
    document d;
    d.add(load_file(tmp));
    REQUIRE(d.runs.size() == 1);
    CHECK(d.runs[0].truncated);
    CHECK(d.runs[0].title.ends_with(" \xC2\xB7 incomplete: recording cut short at byte " + cut));
    fs::remove(tmp);
}

TEST_CASE("a trace damaged before its end loads up to the damage, says where, and its run says it is incomplete",
          "[viewer][document]") {
    const fs::path tmp = fs::temp_directory_path() / "pipescope-viewer-damaged.pftrace";
    std::string bytes;
    {
        std::ifstream in(k2, std::ios::binary);
        bytes.assign((std::istreambuf_iterator<char>(in)), {});
        // Two complete packets whose content is a field number 0: damage that is not a cut.
        bytes += std::string("\x0a\x01\x00\x0a\x01\x00", 6);
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    const auto f = load_file(tmp);
    REQUIRE(f);
    const tm::trace_model& m = f->model;
    REQUIRE(!m.damage.empty());
    CHECK(!m.cut_short);
    CHECK(m.damage_offset == bytes.size() - 4);
    const std::string note = damage_note(*f);
    CHECK(note.starts_with("pipescope-viewer-damaged.pftrace is damaged at byte " + std::to_string(m.damage_offset) +
                           " of " + std::to_string(bytes.size()) + ": showing the " + std::to_string(m.packets) +
                           " packets of its first "));
    CHECK(note.find("as Perfetto does (byte " + std::to_string(m.damage_offset) + ": ") != std::string::npos);
    document d;
    d.add(load_file(tmp));
    REQUIRE(d.runs.size() == 1);
    CHECK(d.runs[0].truncated);
    CHECK(d.runs[0].title.ends_with(" \xC2\xB7 incomplete: file damaged at byte " + std::to_string(m.damage_offset)));
    fs::remove(tmp);
}

TEST_CASE("a file that is not a trace fails to load saying so", "[viewer][document]") {
    const fs::path tmp = fs::temp_directory_path() / "pipescope-viewer-not-a-trace.pftrace";
    std::ofstream(tmp) << "root:x:0:0:root:/root:/bin/bash\n";
    CHECK_THROWS_WITH(load_file(tmp),
                      Catch::Contains("pipescope-viewer-not-a-trace.pftrace: not a Perfetto trace: a Perfetto trace "
                                      "starts with a packet (the byte 0x0A); this is text"));
    std::ofstream(tmp, std::ios::binary | std::ios::trunc) << std::string("\x0a\xff\xff", 3);   // a first packet cut short
    CHECK_THROWS_WITH(load_file(tmp), Catch::Contains("not a Perfetto trace: no packet could be read (its first packet "
                                                      "is cut short: the file ends at byte 3)"));
    fs::remove(tmp);
}

TEST_CASE("a run that lost events says its counts are incomplete", "[viewer][document]") {
    tm::trace_model m;
    m.strings = {"", "events lost", "dropped", "stage 0"};
    m.args.emplace_back(2, tm::arg_kind::uint_value, 5);   // "dropped": 5
    tm::track t;
    t.kind = tm::track_kind::thread;
    t.name = "worker 0";
    t.slices.push_back({.begin = 10, .end = 20, .name = 3});
    t.instants.push_back({.ts = 12, .name = 1, .args_first = 0, .args_count = 1});
    t.instants.push_back({.ts = 15, .name = 1});   // no count: at least one event
    m.tracks.push_back(std::move(t));
    document d;
    d.add(prepare_file(std::move(m), "lossy.pftrace"));
    REQUIRE(d.runs.size() == 1);
    CHECK(d.runs[0].events_lost == 6);
    CHECK(!d.runs[0].truncated);
    CHECK(d.runs[0].title == "lossy.pftrace \xC2\xB7 incomplete: 6 events lost");
}
