//! Wire compatibility with seed 003's Python agents, checked with the seed's own parser.

mod seed_parser;
