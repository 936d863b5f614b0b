//! The examples do what the README says they do.

mod implementation_worker;
mod readme_quick_start;
