//! The record format: render and parse, the exact layout, round trips, refused names.

mod look_alike_names;
mod records;
mod round_trip;
