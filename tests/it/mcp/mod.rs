//! `forgestate mcp` as MCP clients see it.

mod documented_configs;
mod every_line_answered;
mod generated_tools;
mod plain_for_sdks;
mod process;
mod resource_uris;
mod sessions;
mod tools;
