#include "search.hpp"

#include "view_state.hpp"

#include <pipescope/analysis/scope.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <tuple>

namespace pipescope::viewer {

namespace an = pipescope::analysis;

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::optional<std::uint64_t> whole_number(std::string_view s) {
    std::uint64_t v = 0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || r.ec != std::errc{} || r.ptr != s.data() + s.size()) return std::nullopt;
    return v;
}

// "s3", "s=3" (prefix "s") -> 3.
std::optional<std::uint64_t> short_term(std::string_view w, char prefix) {
    if (w.size() < 2 || w[0] != prefix) return std::nullopt;
    w.remove_prefix(1);
    if (w[0] == '=') w.remove_prefix(1);
    return whole_number(w);
}

// Matching the query against one file's events.
class file_matcher {
public:
    file_matcher(const loaded_file& f, const search_query& q) : m_(f.model), q_(q) {
        all_words_ = (1ull << q.words.size()) - 1;   // parse_query keeps at most 63 words
        name_words_.resize(m_.strings.size());
        for (std::size_t s = 0; s < m_.strings.size(); ++s) name_words_[s] = words_in(m_.strings[s]);
        for (const tm::run& r : m_.runs)
            for (const tm::stage_info& st : r.stages) stage_name_words_ |= words_in(st.name);
    }

    template <class Event>
    bool matches(const tm::track& t, const Event& e) const {
        std::uint64_t words = name_words_[e.name];
        const bool need_node = q_.stage || q_.iteration || (words != all_words_ && stage_name_words_);
        if (!need_node) return words == all_words_;
        // A node's stages; any other event's stage is the one its name carries ("waiting at stage 3").
        an::node_extent x;
        if constexpr (std::is_same_v<Event, tm::slice>)
            if (e.kind == tm::slice_kind::node) x = m_.node_of(e);
        if (x.stage < 0) x.stage = m_.stage_of(e.name), x.last_stage = x.stage < 0 ? 0 : static_cast<std::uint64_t>(x.stage);
        if (q_.stage && !(x.stage >= 0 && *q_.stage >= static_cast<std::uint64_t>(x.stage) && *q_.stage <= x.last_stage))
            return false;
        if (q_.iteration && !holds_iteration(e, *q_.iteration)) return false;
        if (words != all_words_ && x.stage >= 0 && t.run < m_.runs.size())
            for (const tm::stage_info& st : m_.runs[t.run].stages)
                if (st.index >= static_cast<std::uint64_t>(x.stage) && st.index <= x.last_stage) words |= words_in(st.name);
        return words == all_words_;
    }

private:
    const tm::trace_model& m_;
    const search_query& q_;
    std::uint64_t all_words_ = 0, stage_name_words_ = 0;
    std::vector<std::uint64_t> name_words_;   // per string: bit w set if it holds word w

    std::uint64_t words_in(std::string_view text) const {
        const std::string l = lower(text);
        std::uint64_t bits = 0;
        for (std::size_t w = 0; w < q_.words.size(); ++w)
            if (l.find(q_.words[w]) != std::string::npos) bits |= 1ull << w;
        return bits;
    }

    template <class Event>
    bool holds_iteration(const Event& e, std::uint64_t it) const {
        std::optional<std::uint64_t> first, last;
        for (auto* a = m_.args_begin(e); a != m_.args_end(e); ++a) {
            if (a->kind == tm::arg_kind::string_value || a->kind == tm::arg_kind::double_value) continue;
            if (a->name == m_.node_args.iteration) first = a->bits();
            else if (a->name == m_.node_args.last_iteration) last = a->bits();
        }
        if (!first) return false;
        return it == *first || (last && it > *first && it <= *last);
    }
};

}   // namespace

search_query parse_query(std::string_view text) {
    search_query q;
    std::vector<std::string> words;
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
        std::size_t j = i;
        while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j]))) ++j;
        if (j > i) words.push_back(lower(text.substr(i, j - i)));
        i = j;
    }
    for (std::size_t w = 0; w < words.size(); ++w) {
        const std::string& word = words[w];
        const bool next_is_number = w + 1 < words.size() && whole_number(words[w + 1]);
        if ((word == "stage" || word == "iteration" || word == "iter") && next_is_number) {
            (word == "stage" ? q.stage : q.iteration) = whole_number(words[++w]);
        } else if (auto s = short_term(word, 's')) {
            q.stage = s;
        } else if (auto it = short_term(word, 'i')) {
            q.iteration = it;
        } else {
            if (q.words.size() < 63) q.words.push_back(word);
        }
    }
    return q;
}

std::vector<search_match> find_matches(const document& d, const search_query& q, bool aligned, std::size_t limit,
                                       std::size_t* total) {
    std::vector<search_match> out;
    std::size_t n = 0;
    if (total) *total = 0;
    if (q.empty()) return out;
    auto add = [&](const search_match& m) {
        if (++n <= limit) out.push_back(m);
    };
    for (std::uint32_t fi = 0; fi < d.files.size(); ++fi) {
        const loaded_file& f = *d.files[fi];
        const file_matcher match(f, q);
        for (std::uint32_t ti = 0; ti < f.model.tracks.size(); ++ti) {
            const tm::track& t = f.model.tracks[ti];
            if (t.slices.empty() && t.instants.empty()) continue;
            const double off = display_offset_of(d, fi, ti, aligned);
            for (std::uint32_t k = 0; k < t.slices.size(); ++k)
                if (match.matches(t, t.slices[k])) add({static_cast<double>(t.slices[k].begin) - off, fi, {ti, k, false}});
            for (std::uint32_t k = 0; k < t.instants.size(); ++k)
                if (match.matches(t, t.instants[k])) add({static_cast<double>(t.instants[k].ts) - off, fi, {ti, k, true}});
        }
    }
    if (total) *total = n;
    if (n > limit) return {};
    std::sort(out.begin(), out.end(), [](const search_match& a, const search_match& b) {
        return std::tie(a.t, a.file, a.ev.track, a.ev.is_instant, a.ev.index) <
               std::tie(b.t, b.file, b.ev.track, b.ev.is_instant, b.ev.index);
    });
    return out;
}

void search_state::update(const document& d, std::string_view query, bool aligned_axis) {
    if (query == text && aligned_axis == aligned && files.same_as(d)) return;
    text = query;
    aligned = aligned_axis;
    files.take(d);
    matches = find_matches(d, parse_query(text), aligned, max_search_matches, &total);
    marks.build(d, matches);
    ++revision;
    current = none;
}

std::size_t search_state::step(bool backwards, double from_t) {
    if (matches.empty()) return current = none;
    const std::size_t n = matches.size();
    if (current < n) {
        current = backwards ? (current + n - 1) % n : (current + 1) % n;
        return current;
    }
    const auto at =
        std::lower_bound(matches.begin(), matches.end(), from_t, [](const search_match& m, double t) { return m.t < t; });
    const auto i = static_cast<std::size_t>(at - matches.begin());
    current = backwards ? (i == 0 ? n - 1 : i - 1) : (i == n ? 0 : i);
    return current;
}

std::string search_state::counter() const {
    if (parse_query(text).empty()) return "";
    if (total > matches.size()) return std::to_string(total) + " matches: add a word";
    if (matches.empty()) return "no match";
    if (current < matches.size()) return fmt::format("{} / {}", current + 1, matches.size());
    return fmt::format("{} match{}", matches.size(), matches.size() == 1 ? "" : "es");
}

}   // namespace pipescope::viewer
