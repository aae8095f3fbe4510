// Example: count the words of a text file with a three-stage pipeline, and record how it ran.
//
//     word_count FILE [-o trace.pftrace] [--workers N]
//
// Stage 0 (serial) reads the next block of lines, stage 1 (parallel) counts the words of a block,
// stage 2 (serial, in order) merges the block's counts into the total. The program then counts the
// file again serially and exits 1 if the two disagree. With -o the run is recorded with the stage
// names below; without it, PIPESCOPE_TRACE=trace.pftrace records it just the same.
//
// A model of a user's own program: it needs nothing but pipescope, so it prints with the standard
// library (the project itself writes text with fmt).
#include <pipescope/pipescope.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

using counts = std::unordered_map<std::string, std::uint64_t>;

// Lower-cased runs of letters, digits and apostrophes.
void count_words(const std::string& text, counts& out) {
    std::string word;
    for (const char c : text) {
        if (std::isalnum(static_cast<unsigned char>(c)) || c == '\'') {
            word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        } else if (!word.empty()) {
            ++out[word];
            word.clear();
        }
    }
    if (!word.empty()) ++out[word];
}

// The next `lines` lines of `in` (with their newlines), or nothing at the end of the file.
std::optional<std::string> read_block(std::istream& in, int lines) {
    std::string block, line;
    for (int i = 0; i < lines && std::getline(in, line); ++i) block += line + '\n';
    if (block.empty()) return std::nullopt;
    return block;
}

int usage() {
    std::fprintf(stderr, "usage: word_count FILE [-o trace.pftrace] [--workers N]\n");
    return 2;
}

int count_file(int argc, char** argv);

}   // namespace

// What a program should do with a failure it cannot fix (a trace that cannot be written because the
// disk is full, an exception of a stage): one line naming it, exit status 1. Leaving main through
// the exception unwinds the trace session, which removes its temporary file.
int main(int argc, char** argv) {
    try {
        return count_file(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "word_count: %s\n", e.what());
        return 1;
    }
}

namespace {

int count_file(int argc, char** argv) {
    std::string file, trace_path;
    unsigned workers = 0;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "-o") && i + 1 < argc) trace_path = argv[++i];
        else if (!std::strcmp(argv[i], "--workers") && i + 1 < argc) workers = static_cast<unsigned>(std::atoi(argv[++i]));
        else if (argv[i][0] == '-' || !file.empty()) return usage();
        else file = argv[i];
    }
    if (file.empty()) return usage();
    std::ifstream in(file);
    if (!in) {
        std::fprintf(stderr, "word_count: cannot read %s: %s\n", file.c_str(), std::strerror(errno));
        return 1;
    }

    pipescope::scheduler sched({workers});
    // One line records every loop on `sched` until `rec` goes out of scope.
    std::optional<pipescope::trace_session> rec;
    // finish_on_signal: Ctrl-C finishes the trace (the run's outcome says so), then ends the program.
    if (!trace_path.empty())
        rec.emplace(sched, trace_path, pipescope::trace_session_options{.name = "word count", .finish_on_signal = true});

    counts total;
    std::optional<std::string> next = read_block(in, 64);
    pipescope::pipeline_options options{.name = "word count", .stage_names = {"read lines", "count words", "merge counts"}};
    pipescope::pipe_while(
        sched, [&] { return next.has_value(); },
        [&](pipescope::iteration& it) -> pipescope::pipe_task {
            std::string block = std::move(*next);   // stage 0: read lines (serial)
            next = read_block(in, 64);
            co_await it.stage(1);
            counts mine;   // stage 1: count words (parallel)
            count_words(block, mine);
            co_await it.stage_wait(2);
            for (const auto& [word, n] : mine) total[word] += n;   // stage 2: merge counts (serial, in order)
        },
        options);
    if (rec) rec->close();   // the file is complete here; throws if it could not be written

    // The serial reference: the whole file at once.
    std::ifstream again(file);
    const std::string text((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>());
    counts reference;
    count_words(text, reference);

    std::vector<std::pair<std::string, std::uint64_t>> top(total.begin(), total.end());
    std::sort(top.begin(), top.end(),
              [](const auto& a, const auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
    std::uint64_t words = 0;
    for (const auto& [w, n] : total) words += n;
    std::printf("%s: %llu words, %zu distinct; most frequent:", file.c_str(), static_cast<unsigned long long>(words),
                total.size());
    for (std::size_t i = 0; i < std::min<std::size_t>(5, top.size()); ++i)
        std::printf(" %s (%llu)", top[i].first.c_str(), static_cast<unsigned long long>(top[i].second));
    std::printf("\n");
    if (rec) std::fputs(rec->report("trace: ").c_str(), stdout);
    if (total != reference) {
        std::fprintf(stderr, "word_count: the pipeline's counts differ from the serial count\n");
        return 1;
    }
    std::printf("matches the serial count\n");
    return 0;
}

}   // namespace
