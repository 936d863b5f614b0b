//! The `forgestate` binary; all of it lives in the `cli` module over the library.

mod cli;
mod mcp;

fn main() -> std::process::ExitCode {
    cli::main()
}
