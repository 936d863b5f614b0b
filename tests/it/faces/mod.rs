//! The faces agree: the CLI, the MCP server and `call` run one request through one call and
//! answer alike (issue #40's drifts, each checked through every face that has the verb).

mod deep_arguments;
mod drifts;
mod name_cap;
mod number_text_and_missing_field;
mod table;
mod text;
