//! Secrets never leave: the policy, the shapes and assignments it finds, the redaction table,
//! the forge token, the terminal.

mod answers;
mod assignments;
mod every_face;
mod forge_token;
mod parse_answer;
mod policy;
mod shapes;
mod table;
mod terminal;
