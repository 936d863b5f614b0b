//! The answer's bytes as the splitter reads them: a buffer that holds only from a mark on (the
//! place a reread would start: the element being read and the separator before it), the line and
//! column of that mark, and a [`Replay`] that hands serde_json's reader the bytes from the mark
//! on, then the rest of the stream, placed at the line and column they have in the whole answer.

use std::cell::Cell;
use std::io::{self, Read};

/// How much is asked of the reader at a time.
pub(super) const READ: usize = 64 * 1024;

/// A place in the answer as serde_json counts it: line breaks before it, and bytes since the
/// last one.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Pos {
    breaks: usize,
    column: usize,
}

impl Pos {
    fn pass(&mut self, bytes: &[u8]) {
        if !super::scan::has_break(bytes) {
            self.column += bytes.len();
            return;
        }
        match bytes.iter().rposition(|&b| b == b'\n') {
            Some(last) => {
                self.breaks += bytes[..=last].iter().filter(|&&b| b == b'\n').count();
                self.column = bytes.len() - last - 1;
            }
            None => self.column += bytes.len(),
        }
    }
}

/// The answer, read in pieces into a buffer that drops what is before its mark.
pub(super) struct Source<R> {
    reader: R,
    /// The bytes from the mark on (and, before a read, some before it), then room for a read.
    buf: Vec<u8>,
    /// How much of `buf` has been read into.
    filled: usize,
    /// The answer's offset of `buf[0]`.
    base: usize,
    /// The answer's offset of the mark.
    mark: usize,
    /// Where the mark is.
    at: Pos,
    /// The reader's failure, given to serde_json's reader when it asks next.
    pub failed: Option<io::Error>,
    /// The most bytes the buffer held.
    pub peak: usize,
}

impl<R: Read> Source<R> {
    pub fn new(reader: R) -> Source<R> {
        Source {
            reader,
            buf: Vec::new(),
            filled: 0,
            base: 0,
            mark: 0,
            at: Pos::default(),
            failed: None,
            peak: 0,
        }
    }

    /// The answer's offset just past the bytes read so far.
    pub fn end(&self) -> usize {
        self.base + self.filled
    }

    /// The byte at answer offset `at`, if it has been read and not dropped.
    pub fn byte(&self, at: usize) -> Option<u8> {
        self.buf[..self.filled]
            .get(at.checked_sub(self.base)?)
            .copied()
    }

    /// The bytes read, from answer offset `from` to `to` (both read and not dropped).
    pub fn bytes(&self, from: usize, to: usize) -> &[u8] {
        &self.buf[from - self.base..to - self.base]
    }

    /// The answer offset of the mark.
    pub fn marked(&self) -> usize {
        self.mark
    }

    /// Where the mark is.
    pub fn at(&self) -> Pos {
        self.at
    }

    /// Moves the mark forward to answer offset `to`: what is before it may be dropped.
    pub fn mark(&mut self, to: usize) {
        let from = self.mark - self.base;
        let to_index = to - self.base;
        self.at.pass(&self.buf[from..to_index]);
        self.mark = to;
    }

    /// Reads more of the answer, dropping what is before the mark first. `Ok(false)` at its end.
    pub fn more(&mut self) -> io::Result<bool> {
        let drop = self.mark - self.base;
        if drop > 0 {
            self.buf.copy_within(drop..self.filled, 0);
            self.filled -= drop;
            self.base = self.mark;
        }
        if self.buf.len() - self.filled < READ / 2 {
            self.buf.resize(self.filled + READ, 0);
        }
        let read = loop {
            match self.reader.read(&mut self.buf[self.filled..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                read => break read,
            }
        };
        self.filled += *read.as_ref().unwrap_or(&0);
        self.peak = self.peak.max(self.buf.len());
        read.map(|n| n > 0)
    }

    /// The answer offset of the first byte at or after `from` that is not JSON whitespace, and
    /// the byte, reading on as needed; `None` at the answer's end. With `mark`, the mark follows
    /// (whitespace is never held).
    pub fn skip_space(&mut self, mut from: usize, mark: bool) -> io::Result<Option<(usize, u8)>> {
        loop {
            while let Some(b) = self.byte(from) {
                if !matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                    if mark {
                        self.mark(from);
                    }
                    return Ok(Some((from, b)));
                }
                from += 1;
            }
            if mark {
                self.mark(from);
            }
            if !self.more()? {
                return Ok(None);
            }
        }
    }
}

/// What comes before the bytes from the mark on, to put serde_json's reader in the state the
/// whole answer's reader was in at the mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lead {
    /// Nothing: the answer's start, or its opening bracket.
    Start,
    /// An array and one value of it: the mark is after an element.
    Value,
    /// A whole array: the mark is after the answer's closing bracket.
    List,
}

impl Lead {
    fn text(self) -> &'static [u8] {
        match self {
            Lead::Start => b"",
            Lead::Value => b"[0",
            Lead::List => b"[]",
        }
    }
}

/// The lead's bytes, then line breaks and spaces up to the mark's place.
struct Pad {
    lead: &'static [u8],
    breaks: usize,
    spaces: usize,
}

impl Pad {
    fn new(lead: Lead, at: Pos) -> Pad {
        let lead = lead.text();
        let spaces = match at.breaks {
            // The lead takes the first columns of the first line: the mark is never before it
            // (a value, or a whole array, is at least that long).
            0 => at.column.saturating_sub(lead.len()),
            _ => at.column,
        };
        Pad {
            lead,
            breaks: at.breaks,
            spaces,
        }
    }

    fn next(&mut self) -> Option<u8> {
        if let Some((&b, rest)) = self.lead.split_first() {
            self.lead = rest;
            return Some(b);
        }
        if self.breaks > 0 {
            self.breaks -= 1;
            return Some(b'\n');
        }
        if self.spaces > 0 {
            self.spaces -= 1;
            return Some(b' ');
        }
        None
    }
}

/// A reader for serde_json: the pad, then the answer from the mark on (each byte marked off as
/// it is read, so nothing is held), then, once `close` is set, a `]` that ends the array.
pub(super) struct Replay<'s, R> {
    pad: Pad,
    source: &'s mut Source<R>,
    close: &'s Cell<bool>,
    closed: bool,
}

impl<'s, R: Read> Replay<'s, R> {
    pub fn new(lead: Lead, source: &'s mut Source<R>, close: &'s Cell<bool>) -> Self {
        Replay {
            pad: Pad::new(lead, source.at()),
            source,
            close,
            closed: false,
        }
    }
}

impl<R: Read> Read for Replay<'_, R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let Some(first) = out.first_mut() else {
            return Ok(0);
        };
        if let Some(b) = self.pad.next() {
            *first = b;
            return Ok(1);
        }
        if self.close.get() {
            if self.closed {
                return Ok(0);
            }
            self.closed = true;
            *first = b']';
            return Ok(1);
        }
        let source = &mut *self.source;
        if source.mark == source.end() {
            if let Some(e) = source.failed.take() {
                return Err(e);
            }
            if !source.more()? {
                return Ok(0);
            }
        }
        let at = source.mark;
        let n = out.len().min(source.end() - at);
        out[..n].copy_from_slice(source.bytes(at, at + n));
        source.mark(at + n);
        Ok(n)
    }
}
