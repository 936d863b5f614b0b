//! The `forgestate` binary: its faces over the library, the CLI (`cli`) and the MCP server
//! (`mcp`), and what both share (`face`).

mod cli;
mod face;
mod mcp;

fn main() -> std::process::ExitCode {
    cli::main()
}
