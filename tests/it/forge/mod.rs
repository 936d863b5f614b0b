//! The Forgejo/Gitea backend against the fake forge, and the fake itself against ENDPOINTS.md.

mod backend;
mod cold_plan;
mod cold_read;
mod deleted_comments;
mod disagreeing_clocks;
mod endless_lists_and_bad_names;
mod errors;
mod fake_follows_endpoints;
mod issue_urls;
mod odd_answers;
mod odd_mid_thread;
mod odd_newest;
mod recorded_answers;
mod session_issue_lifecycle;
mod streamed_reads;
mod summary_fold;
