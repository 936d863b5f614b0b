//! Doctor: placeholder.
