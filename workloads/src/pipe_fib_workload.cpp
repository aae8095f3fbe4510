// `pipe-fib` and `pipe-fib-256` as named workloads.
#include <pipescope/workloads/pipe_fib.hpp>
#include <pipescope/workloads/workload.hpp>

#include <chrono>

namespace pipescope::workloads {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class pipe_fib_workload final : public workload {
public:
    explicit pipe_fib_workload(unsigned bits_per_stage) : bits_(bits_per_stage) {}

    std::string name() const override { return bits_ == 1 ? "pipe-fib" : "pipe-fib-" + std::to_string(bits_); }
    std::string summary() const override {
        return bits_ == 1 ? "F_n in binary, one bit per stage (seed 001 §10): fine-grained, triangular dag"
                          : "F_n in binary, " + std::to_string(bits_) + " bits per stage (coarsened pipe-fib)";
    }
    std::string parameters() const override {
        return "n=<by size: tiny 2000, small 20000, large 60000>: which Fibonacci number\n" +
               std::string(pipeline_parameters);
    }

    run_report run(scheduler& s, run_request& request) const override {
        const unsigned n = static_cast<unsigned>(request.params.take_uint("n", default_n(request.size), 1, 2000000));
        const pipeline_options options = pipeline_options_from(request, request.params);
        request.params.reject_unknown(name());

        run_report report;
        auto t0 = std::chrono::steady_clock::now();
        const fib_bits reference = pipe_fib_serial(n, request.cancel);
        report.reference_seconds = seconds_since(t0);

        if (request.on_measured_start) request.on_measured_start(report.reference_seconds);
        t0 = std::chrono::steady_clock::now();
        const fib_bits result = pipe_fib_pipeline(s, n, bits_, options, &report.stats);
        if (request.on_measured_end) request.on_measured_end();
        report.seconds = seconds_since(t0);

        report.matches_reference = result == reference;
        report.description = "F_" + std::to_string(n) + " (" + std::to_string(result.size()) + " bits)";
        return report;
    }

    std::string refuses(const std::string& policy) const override {
        for (const auto& p : pipeline_policies())
            if (p.name == policy && p.needs_declared_stages)
                return "pipe-fib's stages are decided on the fly: iteration i has as many stages as F_i has bit "
                       "blocks, so the filter chain cannot be declared before the loop starts (seed 001 §10)";
        return {};
    }

    program_info program(const run_request&) const override {
        program_info p;
        p.shape = "on the fly: iteration i computes F_i = F_(i-1) + F_(i-2), " + std::to_string(bits_) +
                  (bits_ == 1 ? " bit" : " bits") + " per stage; the number of stages grows with the length of F_i";
        p.stages = {{"stage 0 · start iteration", "serial", "the pipe_while condition and the first block"},
                    {"stage j ≥ 1 · add bit block j", "stage_wait",
                     "waits for iteration i-1 to finish block j (its carry and F_(i-1)'s bits)"}};
        return p;
    }

private:
    static unsigned default_n(input_size s) {
        switch (s) {
            case input_size::tiny: return 2000;
            case input_size::small: return 20000;
            case input_size::large: return 60000;
        }
        return 20000;
    }
    unsigned bits_;
};

}   // namespace

const workload& pipe_fib_fine() {
    static const pipe_fib_workload w(1);
    return w;
}
const workload& pipe_fib_coarse() {
    static const pipe_fib_workload w(256);
    return w;
}

}   // namespace pipescope::workloads
