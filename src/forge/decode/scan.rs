//! Finding where one JSON value ends in bytes that arrive in pieces: strings, escapes and
//! nesting only, no validation (serde_json reads the value once it is whole, and says what is
//! wrong with it).

/// Bytes that end a run of plain string bytes: the closing quote and the escape.
const STRING_STOP: [bool; 256] = {
    let mut t = [false; 256];
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t
};

/// Bytes that end a value that is not a string, an object or an array (a number, `true`,
/// `null`, or something that is none of them).
const SCALAR_STOP: [bool; 256] = {
    let mut t = [false; 256];
    let stops = b" \t\n\r,:[]{}\"";
    let mut i = 0;
    while i < stops.len() {
        t[stops[i] as usize] = true;
        i += 1;
    }
    t
};

/// Eight copies of a byte, for the word-at-a-time search.
const fn splat(b: u8) -> u64 {
    u64::from_ne_bytes([b; 8])
}

/// Whether `word` holds a byte of `b`'s value: the lowest set bit of the answer is at the first
/// one (in little-endian order), higher ones may be false.
fn holds(word: u64, b: u8) -> u64 {
    let x = word ^ splat(b);
    x.wrapping_sub(splat(1)) & !x & splat(0x80)
}

/// The index of the first quote or backslash in `bytes` at or after `from` (or `bytes.len()`),
/// eight bytes at a time.
fn string_stop(bytes: &[u8], mut from: usize) -> usize {
    while let Some(chunk) = bytes.get(from..from + 8) {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        let found = holds(word, b'"') | holds(word, b'\\');
        if found != 0 {
            return from + found.trailing_zeros() as usize / 8;
        }
        from += 8;
    }
    while from < bytes.len() && !STRING_STOP[bytes[from] as usize] {
        from += 1;
    }
    from
}

/// Whether `bytes` hold a line break.
pub(super) fn has_break(bytes: &[u8]) -> bool {
    memchr::memchr(b'\n', bytes).is_some()
}

/// Where the scan of one value is, between two pieces of it.
#[derive(Debug)]
pub(super) struct Scan {
    /// Open objects and arrays.
    depth: u32,
    /// The most ever open at once.
    pub deepest: u32,
    /// Inside a string.
    in_string: bool,
    /// The last piece ended on a backslash inside a string: the next byte is escaped.
    escaped: bool,
    /// The value is a number or a word, which ends at the byte after it.
    scalar: bool,
}

impl Scan {
    /// The scan of a value whose first byte is `first`; scanning resumes after that byte.
    pub fn new(first: u8) -> Scan {
        let (depth, in_string, scalar) = match first {
            b'{' | b'[' => (1, false, false),
            b'"' => (0, true, false),
            _ => (0, false, true),
        };
        Scan {
            depth,
            deepest: depth,
            in_string,
            escaped: false,
            scalar,
        }
    }

    /// Whether the value is an object, an array or a string: one whose reading ends on its last
    /// byte, never looking past it.
    pub fn closed_kind(&self) -> bool {
        !self.scalar
    }

    /// Scans `bytes` from `from`: the index just past the value when it ends within them, else
    /// `None` (everything scanned; call again from `bytes.len()` once more have come). A scalar
    /// ends at the first byte that cannot be part of it, which is not part of the value.
    pub fn feed(&mut self, bytes: &[u8], from: usize) -> Option<usize> {
        let mut i = from;
        if self.scalar {
            let end = bytes
                .get(i..)?
                .iter()
                .position(|&b| SCALAR_STOP[b as usize])?;
            return Some(i + end);
        }
        if self.escaped && i < bytes.len() {
            self.escaped = false;
            i += 1;
        }
        while i < bytes.len() {
            if self.in_string {
                i = string_stop(bytes, i);
                match bytes.get(i) {
                    None => return None,
                    Some(b'\\') if i + 1 < bytes.len() => i += 2,
                    Some(b'\\') => {
                        self.escaped = true;
                        return None;
                    }
                    Some(_) => {
                        self.in_string = false;
                        i += 1;
                        if self.depth == 0 {
                            return Some(i);
                        }
                    }
                }
                continue;
            }
            match bytes[i] {
                b'"' => self.in_string = true,
                b'{' | b'[' => {
                    self.depth += 1;
                    self.deepest = self.deepest.max(self.depth);
                }
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        return Some(i + 1);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the value at the start of `text` ends, fed in pieces of `step` bytes.
    fn end(text: &str, step: usize) -> Option<usize> {
        let bytes = text.as_bytes();
        let mut scan = Scan::new(bytes[0]);
        let mut from = 1;
        let mut upto = 1;
        while upto < bytes.len() {
            upto = (upto + step).min(bytes.len());
            if let Some(e) = scan.feed(&bytes[..upto], from) {
                return Some(e);
            }
            from = upto;
        }
        None
    }

    #[test]
    fn a_value_ends_after_its_close_whatever_the_strings_hold() {
        for (text, len) in [
            (r#"{"a":"}]","b":[1,{"c":"\"{"}]}, 5"#, 30),
            (r#""a \\" rest"#, 6),
            (r#""\\\"" x"#, 6),
            (r#"[[[]],[]] ]"#, 9),
            ("123,4", 3),
            ("true]", 4),
            ("-1.5e3 ", 6),
            (r#"{"a\\":"\\"}"#, 12),
        ] {
            for step in 1..8 {
                assert_eq!(end(text, step), Some(len), "{text} by {step}");
            }
        }
    }

    #[test]
    fn an_unfinished_value_asks_for_more() {
        for text in [r#"{"a":"}"#, r#""abc\""#, "[[]", "12", r#"{"a":"\"#] {
            for step in 1..8 {
                assert_eq!(end(text, step), None, "{text} by {step}");
            }
        }
    }

    #[test]
    fn the_word_search_finds_the_first_stop_and_every_break() {
        let text = b"abcdefghijklmnopqrstuvwxyz0123456789";
        for at in 0..text.len() {
            for stop in [b'"', b'\\'] {
                let mut bytes = text.to_vec();
                bytes[at] = stop;
                // A later stop, and bytes the borrow of the search could confuse.
                bytes.push(b'"');
                bytes[..at].iter_mut().for_each(|b| *b = 0x01);
                for from in 0..=at {
                    assert_eq!(string_stop(&bytes, from), at, "{at} from {from}");
                }
                assert_eq!(string_stop(&bytes, at + 1), bytes.len() - 1);
            }
            let mut bytes = text.to_vec();
            assert!(!has_break(&bytes[..at]));
            bytes[at] = b'\n';
            assert!(has_break(&bytes), "{at}");
            assert!(!has_break(&bytes[at + 1..]), "{at}");
        }
    }

    #[test]
    fn the_depth_reached_is_counted() {
        let mut scan = Scan::new(b'[');
        assert_eq!(scan.feed(b"[[[\"[[[[\"]],[[]]]", 1), Some(17));
        assert_eq!(scan.deepest, 3);
    }
}
