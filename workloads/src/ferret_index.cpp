// ferret's query stage: a locality-sensitive-hashing index over region feature vectors (PARSEC's
// ferret queries an LSH index for candidates and ranks only those, seed 000 §2.1).
#include <pipescope/workloads/ferret.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace pipescope::workloads::ferret {

namespace {

constexpr std::uint64_t index_stream = 3;   // the corpus uses streams 1 and 2

// Roughly standard normal (sum of 4 uniforms, centred and scaled): p-stable enough for LSH, and
// free of library transcendental functions.
float about_normal(random_stream& rng) {
    const float s = rng.unit() + rng.unit() + rng.unit() + rng.unit();
    return (s - 2.f) * 1.7320508f;   // variance of the sum is 4/12
}

std::uint64_t mix(std::uint64_t h, std::int64_t v) {
    h ^= static_cast<std::uint64_t>(v) + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h * 0xFF51AFD7ED558CCDull;
}

}   // namespace

lsh_index::lsh_index(std::vector<signature> database, const index_config& config, std::uint64_t seed)
    : config_(config), database_(std::move(database)), buckets_(config.tables) {
    if (config.tables == 0 || config.hashes == 0 || !(config.bucket_width > 0))
        throw std::invalid_argument("ferret: the index needs at least one table, one hash and a positive bucket width");
    const std::size_t per_hash = feature_dims + 1;
    projections_.resize(std::size_t{config.tables} * config.hashes * per_hash);
    for (unsigned t = 0; t < config.tables; ++t) {
        random_stream rng(seed, index_stream, t);
        for (unsigned h = 0; h < config.hashes; ++h) {
            float* p = &projections_[(std::size_t{t} * config.hashes + h) * per_hash];
            for (std::size_t k = 0; k < feature_dims; ++k) p[k] = about_normal(rng);
            p[feature_dims] = rng.between(0.f, config.bucket_width);
        }
    }
    for (std::uint32_t id = 0; id < database_.size(); ++id)
        for (const region& r : database_[id])
            for (unsigned t = 0; t < config.tables; ++t) {
                auto& bucket = buckets_[t][bucket_key(t, r)];
                if (bucket.empty() || bucket.back() != id) bucket.push_back(id);   // one entry per image
            }
}

std::uint64_t lsh_index::bucket_key(unsigned table, const region& r) const {
    const std::size_t per_hash = feature_dims + 1;
    std::uint64_t key = table;
    for (unsigned h = 0; h < config_.hashes; ++h) {
        const float* p = &projections_[(std::size_t{table} * config_.hashes + h) * per_hash];
        float dot = p[feature_dims];
        for (std::size_t k = 0; k < feature_dims; ++k) dot += p[k] * r.features[k];
        key = mix(key, static_cast<std::int64_t>(std::floor(dot / config_.bucket_width)));
    }
    return key;
}

std::vector<unsigned> lsh_index::candidates(const signature& query, unsigned how_many) const {
    std::vector<float> votes(database_.size(), 0.f);
    std::vector<unsigned> voted;   // ids with a vote, so the ranking does not scan the database
    for (const region& r : query)
        for (unsigned t = 0; t < config_.tables; ++t) {
            const auto& table = buckets_[t];
            auto it = table.find(bucket_key(t, r));
            if (it == table.end()) continue;
            for (std::uint32_t id : it->second) {
                if (votes[id] == 0.f) voted.push_back(id);
                votes[id] += r.weight;
            }
        }
    const std::size_t n = std::min<std::size_t>(how_many, voted.size());
    std::partial_sort(voted.begin(), voted.begin() + static_cast<std::ptrdiff_t>(n), voted.end(),
                      [&](unsigned a, unsigned b) { return votes[a] != votes[b] ? votes[a] > votes[b] : a < b; });
    voted.resize(n);
    return voted;
}

}   // namespace pipescope::workloads::ferret
