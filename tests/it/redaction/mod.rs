//! Secrets never leave: the redaction table, the forge token, the terminal.

mod forge_token;
mod table;
mod terminal;
