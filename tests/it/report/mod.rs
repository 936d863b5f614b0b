//! The supervisor's reports, pure: verdicts, session facts, clocks, diffs, the phase timeline
//! and the status table in the issue body; and the resume map that `resume` and `status` read.

mod clock;
mod diff;
mod resume;
mod session_facts;
mod status_table;
mod status_verdicts;
mod timeline;
