#include <pipescope/trace/chrome_json.hpp>

#include <pipescope/trace/atomic_output.hpp>

#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <ostream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace pipescope::trace {

std::int64_t chrome_pid(const trace_model& m, std::uint32_t track) {
    const auto& t = m.tracks[track];
    if (t.run != no_index) return m.runs[t.run].pid;
    if (t.kind == track_kind::thread) return t.pid;
    return 0;
}

std::int64_t chrome_tid(const trace_model& m, std::uint32_t track) {
    const auto& t = m.tracks[track];
    if (t.kind == track_kind::thread && t.tid != 0) return t.tid;
    if (t.kind == track_kind::process) return t.pid;   // process-scoped events sit on the "main thread"
    return 1000000000 + static_cast<std::int64_t>(track);
}

namespace {

class json_out {
public:
    explicit json_out(std::ostream& os) : os_(os) { buf_.reserve(1 << 20); }
    ~json_out() = default;

    void raw(std::string_view s) {
        buf_.append(s);
        if (buf_.size() >= (1 << 20)) flush();
    }
    void ch(char c) { buf_.push_back(c); }
    void str(std::string_view s) {
        buf_.push_back('"');
        for (char c : s) {
            const auto u = static_cast<unsigned char>(c);
            if (c == '"') buf_.append("\\\"");
            else if (c == '\\') buf_.append("\\\\");
            else if (u < 0x20) {
                static const char hex[] = "0123456789abcdef";
                if (c == '\n') buf_.append("\\n");
                else if (c == '\t') buf_.append("\\t");
                else if (c == '\r') buf_.append("\\r");
                else {
                    buf_.append("\\u00");
                    buf_.push_back(hex[u >> 4]);
                    buf_.push_back(hex[u & 15]);
                }
            } else {
                buf_.push_back(c);
            }
        }
        buf_.push_back('"');
    }
    template <class T>
    void num(T v) {
        char b[32];
        auto r = std::to_chars(b, b + sizeof b, v);
        buf_.append(b, r.ptr);
    }
    void dbl(double d) {
        if (!std::isfinite(d)) {
            buf_.append("null");
            return;
        }
        num(d);
    }
    // Nanoseconds as fractional microseconds, exactly.
    void micros(std::uint64_t ns) {
        num(ns / 1000);
        const unsigned frac = static_cast<unsigned>(ns % 1000);
        if (frac) {
            char b[4] = {'.', char('0' + frac / 100), char('0' + frac / 10 % 10), char('0' + frac % 10)};
            buf_.append(b, 4);
        }
    }
    void flush() {
        os_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
        buf_.clear();
    }

private:
    std::ostream& os_;
    std::string buf_;
};

class exporter {
public:
    exporter(const trace_model& m, std::ostream& os) : m_(m), o_(os) {}

    chrome_json_stats export_all() {
        o_.raw("{\"traceEvents\":[\n");
        metadata_events();
        for (std::uint32_t ti = 0; ti < m_.tracks.size(); ++ti) track_events(ti);
        for (std::size_t k = 0; k < m_.flows.size(); ++k) flow_events(k);
        o_.raw("\n],\"displayTimeUnit\":\"ns\",\"metadata\":{\"source\":\"pipescope\",\"runs\":[");
        for (std::size_t r = 0; r < m_.runs.size(); ++r) {
            const trace::run& ru = m_.runs[r];
            if (r) o_.ch(',');
            o_.raw("{\"name\":");
            o_.str(ru.name);
            o_.raw(",\"pid\":");
            o_.num(ru.pid);
            o_.raw(",\"workers\":");
            o_.num(ru.workers.size());
            if (!ru.metadata_json.empty()) {
                o_.raw(",\"metadata\":");
                if (ru.metadata_valid) o_.raw(ru.metadata_json);   // verbatim: it parsed as a JSON object
                else o_.str(ru.metadata_json);
            }
            o_.ch('}');
        }
        o_.raw("]}}\n");
        o_.flush();
        return stats_;
    }

private:
    void begin_event(char ph, std::uint32_t track) {
        o_.raw(first_ ? "{\"ph\":\"" : ",\n{\"ph\":\"");
        first_ = false;
        o_.ch(ph);
        o_.raw("\",\"pid\":");
        o_.num(chrome_pid(m_, track));
        o_.raw(",\"tid\":");
        o_.num(chrome_tid(m_, track));
        ++stats_.events;
    }

    void args(std::uint32_t first, std::uint16_t count, bool unterminated = false) {
        if (!count && !unterminated) return;
        o_.raw(",\"args\":{");
        for (std::uint32_t k = first; k < first + count; ++k) {
            const model_arg& a = m_.args[k];
            if (k != first) o_.ch(',');
            o_.str(m_.strings[a.name]);
            o_.ch(':');
            switch (a.kind) {
                case arg_kind::uint_value: o_.num(a.bits()); break;
                case arg_kind::int_value: o_.num(static_cast<std::int64_t>(a.bits())); break;
                case arg_kind::bool_value: o_.raw(a.bits() ? "true" : "false"); break;
                case arg_kind::double_value: {
                    double d;
                    const std::uint64_t b = a.bits();
                    std::memcpy(&d, &b, sizeof d);
                    o_.dbl(d);
                    break;
                }
                case arg_kind::string_value: o_.str(m_.strings[static_cast<std::uint32_t>(a.bits())]); break;
            }
        }
        if (unterminated) o_.raw(count ? ",\"unterminated\":true" : "\"unterminated\":true");
        o_.ch('}');
    }

    void metadata_events() {
        for (std::uint32_t ti = 0; ti < m_.tracks.size(); ++ti) {
            const track& t = m_.tracks[ti];
            if (t.kind == track_kind::process) {
                begin_event('M', ti);
                o_.raw(",\"name\":\"process_name\",\"args\":{\"name\":");
                o_.str(t.name);
                o_.raw("}}");
                ++stats_.metadata;
                continue;
            }
            if (t.kind == track_kind::counter) continue;   // counters are named by their "C" events
            begin_event('M', ti);
            o_.raw(",\"name\":\"thread_name\",\"args\":{\"name\":");
            o_.str(t.name);
            o_.raw("}}");
            ++stats_.metadata;
            if (t.worker >= 0 || t.line >= 0) {
                begin_event('M', ti);
                o_.raw(",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":");
                o_.num(t.worker >= 0 ? t.worker : 1000 + t.line);
                o_.raw("}}");
                ++stats_.metadata;
            }
        }
    }

    void track_events(std::uint32_t ti) {
        const track& t = m_.tracks[ti];
        for (const slice& s : t.slices) {
            begin_event('X', ti);
            o_.raw(",\"ts\":");
            o_.micros(s.begin);
            o_.raw(",\"dur\":");
            o_.micros(s.end - s.begin);
            o_.raw(",\"name\":");
            o_.str(m_.strings[s.name]);
            args(s.args_first, s.args_count, s.unterminated);
            o_.ch('}');
            ++stats_.slices;
        }
        for (const instant& i : t.instants) {
            begin_event('i', ti);
            o_.raw(",\"s\":\"t\",\"ts\":");
            o_.micros(i.ts);
            o_.raw(",\"name\":");
            o_.str(m_.strings[i.name]);
            args(i.args_first, i.args_count);
            o_.ch('}');
            ++stats_.instants;
        }
        for (const counter_sample& c : t.counters) {
            begin_event('C', ti);
            o_.raw(",\"ts\":");
            o_.micros(c.ts);
            o_.raw(",\"name\":");
            o_.str(t.name);
            o_.raw(",\"args\":{\"value\":");
            o_.dbl(c.value);
            o_.raw("}}");
            ++stats_.counters;
        }
    }

    std::uint64_t ts_of(const event_ref& r) const {
        const track& t = m_.tracks[r.track];
        return r.is_instant ? t.instants[r.index].ts : t.slices[r.index].begin;
    }

    void flow_events(std::size_t k) {
        const flow& f = m_.flows[k];
        for (int end = 0; end < 2; ++end) {
            const event_ref& r = end ? f.to : f.from;
            begin_event(end ? 'f' : 's', r.track);
            o_.raw(",\"ts\":");
            o_.micros(ts_of(r));
            o_.raw(",\"cat\":\"flow\",\"name\":\"flow\",\"id\":");
            o_.num(k + 1);
            o_.raw(end ? ",\"bp\":\"e\",\"args\":{\"flow_id\":" : ",\"args\":{\"flow_id\":");
            o_.num(f.id);
            o_.raw("}}");
        }
        ++stats_.flows;
    }

    const trace_model& m_;
    json_out o_;
    bool first_ = true;
    chrome_json_stats stats_;
};

}   // namespace

chrome_json_stats write_chrome_json(const trace_model& m, std::ostream& out) {
    exporter e(m, out);
    return e.export_all();
}

chrome_json_stats write_chrome_json(const trace_model& m, const std::filesystem::path& path) {
    atomic_ostream out(path);   // removes its temporary file unless committed
    const chrome_json_stats stats = write_chrome_json(m, out);
    out.commit();
    return stats;
}

}   // namespace pipescope::trace
