//! Unit tests of the streaming comment decoder.

use super::*;
