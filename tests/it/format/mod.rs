//! The record format: render and parse, the exact layout, round trips, header checks, the
//! out-gate, signatures and refused names.

mod body_cap;
mod header_checks;
mod look_alike_names;
mod marker_in_head;
mod out_gate;
mod record_json;
mod records;
mod round_trip;
mod sessions_story;
mod signatures;
mod takeover;
mod times;
