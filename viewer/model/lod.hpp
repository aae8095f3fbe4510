// Level of detail: what the timeline draws for one row of a track in one frame, and hit testing.
//
// Slices at least `min_px` wide are drawn as themselves. Runs of narrower slices are merged into
// one block per pixel column (adjacent blocks of the same colour coalesce), coloured by the
// dominant key (by duration) of the slices merged into it. Because the slices of one row never
// overlap, both their begins and their ends are sorted: the first visible slice is found by binary
// search and each column's group is skipped over by another, so a frame costs
// O((visible pixels) * (log n + max_exact)) per row, whatever the number of slices.
// The dominant colour is exact for groups of up to `max_exact` slices and estimated for larger
// ones: from the row's summary (document.hpp, rows of 4096+ slices: the dominant keys of whole
// groups of 16, 256, ... slices, read contiguously), else from 16 evenly spread slices.
// With a summary, a column that spans at least 5 whole groups of narrow slices ends on a group
// boundary and is handled from the summary alone (no read of the slices).
#pragma once

#include "document.hpp"
#include "viewport.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pipescope::viewer {

struct lod_block {
    double x0 = 0, x1 = 0;        // pixels from the left edge of the time area
    std::uint32_t first = 0;      // row position of the first slice in the block
    std::uint32_t count = 0;      // slices in it; 1 = a slice drawn as itself
    colour_key key = key_other;   // the slice's key, or the dominant key of a merged block
    bool merged_flag = false;     // built from slices narrower than min_px (even a single one)
    bool merged() const { return merged_flag; }
};

struct lod_params {
    double t_left = 0;     // absolute ns at pixel 0
    double npp = 1;        // ns per pixel
    double width = 1000;   // pixels
    double min_px = 1.0;   // narrower slices are merged
    int max_exact = 64;
};

// Appends the blocks of `row` visible in [t_left, t_left + width * npp) to `out` (cleared first).
// `keys` maps a slice's name to its colour key (loaded_file::key_of_string).
void lod_merge(const row_view& row, const colour_key* keys, const lod_params& p, std::vector<lod_block>& out);

// The row position of the slice at absolute time t, or of the nearest one within `tol` ns;
// npos if none.
inline constexpr std::size_t npos = static_cast<std::size_t>(-1);
std::size_t hit_row(const row_view& row, double t, double tol);
// The instant nearest to t within tol, or npos.
std::size_t hit_instant(const std::vector<tm::instant>& instants, double t, double tol);

// First row position whose slice ends at or after t (binary search on the sorted ends).
std::size_t first_ending_at_or_after(const row_view& row, double t);

// Instants reduced to what one frame draws: the time area cut into buckets of `bucket_px` pixels
// (on a grid fixed to the time axis, so buckets do not shimmer while panning), one entry per bucket
// that holds instants, with how many and the kind most of them are (exact up to 16, else from 16
// evenly spread ones). A lone instant is drawn as itself, a crowded bucket as a bar whose height
// says how many: zoomed out the lane summarises instead of becoming a solid band of markers.
// O(occupied buckets * log n), whatever the number of instants.
struct instant_bucket {
    double x0 = 0, x1 = 0;     // pixels from the left edge of the time area
    std::uint32_t first = 0;   // index of its first instant
    std::uint32_t count = 0;
    instant_kind kind = instant_kind::other;
};
void instant_buckets(const std::vector<tm::instant>& instants, const instant_kind* kind_of_name, const lod_params& p,
                     double bucket_px, std::vector<instant_bucket>& out);

// The "events lost" markers of a track within `tol` ns of t (absolute): how many, the events they
// say were lost (the sum of their `dropped` annotations, 1 for a marker without one) and the time of
// the first. O(log markers + markers found).
struct lost_events {
    std::uint64_t markers = 0, dropped = 0, first_ts = 0;
};
lost_events lost_events_near(const loaded_file& f, std::uint32_t track, double t, double tol);

// Counter samples reduced to what one frame draws: one entry per pixel column that has samples,
// with the min/max inside the column and the value held after it.
struct counter_column {
    double x = 0;            // column (pixels)
    double lo = 0, hi = 0;   // range of the values sampled in the column
    double last = 0;         // value in effect at the end of the column
};
void counter_lod(const std::vector<tm::counter_sample>& samples, const lod_params& p, std::vector<counter_column>& out,
                 double* value_before = nullptr);

}   // namespace pipescope::viewer
