//! The integration tests, one crate: a module per area, a file per behaviour it checks.
//! The helpers (`common`, `fake_forge`, `mcp_client`) are compiled once, for all of them.

mod common;
mod fake_forge;
mod mcp_client;

mod cache;
mod call;
mod chain;
mod cli;
mod config;
mod dashboard;
mod examples;
mod faces;
mod forge;
mod format;
mod input;
mod interop;
mod mcp;
mod ops;
mod outage;
mod outbox;
mod project;
mod redaction;
mod report;
mod schema;
mod sessions;
mod store;
mod trust;
