//! The `forgestate` binary: its faces over the library, the CLI (`cli`) and the MCP server
//! (`mcp`), and what both share (`face`).

mod cli;
mod face;
mod mcp;

fn main() -> std::process::ExitCode {
    // A command's wait budget includes the process's own start.
    forgestate::verbs::mark_process_start();
    one_malloc_arena();
    cli::main()
}

/// glibc gives each thread that allocates its own malloc arena. A cold read decodes the comment
/// list on one thread and builds the read cache on another, so memory freed by one is not reused
/// by the other: one arena keeps the peak down (measured at 50,000 comments: 100 MB with the
/// default arenas, 92 MB with one; `docs/benchmarks.md`). The work runs on one or two threads at
/// a time, so there is no contention to speak of.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn one_malloc_arena() {
    // SAFETY: mallopt only sets an allocator parameter, and runs before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn one_malloc_arena() {}
