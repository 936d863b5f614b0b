//! The faces agree: the CLI, the MCP server and `call` run one request through one call and
//! answer alike (issue #40's drifts, each checked through every face that has the verb).

mod deep_arguments;
mod drifts;
mod name_cap;
mod number_text_and_missing_field;
mod table;
mod text;

/// The binary over a local store `st` in `dir`, which holds one checkpoint (`w`, `s1`, `p`).
fn one_checkpoint(dir: &std::path::Path) -> crate::common::cli::Bin {
    use crate::common::cli::{Bin, args, stderr};
    let bin = Bin::new(dir);
    let saved = bin.run(&args(&[
        "--store",
        "st",
        "checkpoint",
        "--agent",
        "w",
        "--session",
        "s1",
        "--phase",
        "p",
    ]));
    assert_eq!(saved.status.code(), Some(0), "{}", stderr(&saved));
    bin
}
