//! The session thread as one chain of issues: rotation, races, people, the whole history.

mod deep_sessions;
mod edited_carry;
mod edited_past_recognition;
mod first_posting;
mod idless_counted_once;
mod killed_rotation_reads;
mod one_carrier;
mod one_thread;
mod races;
mod reopened_at_any_depth;
mod reopened_closed_by_who_warned;
mod retitle_warns;
mod retitled_and_late_posts;
mod rotate_cli;
mod rotation;
mod stopped_rotation;
mod successor_from_the_first_byte;
mod through_the_binary;
mod tidy_carries_little;
mod trusted_authors;
mod what_is_carried;
mod whole_history;
