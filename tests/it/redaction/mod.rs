//! Secrets never leave: the redaction table, the forge token, the terminal.

mod answers;
mod every_face;
mod forge_token;
mod parse_answer;
mod table;
mod terminal;
