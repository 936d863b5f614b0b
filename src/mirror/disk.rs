//! The mirror's two files, beside each other in the cache directory:
//!
//! - the **base** (`<key>.mirror`), written at a full resync (and when the delta grows large): a
//!   header line (JSON), then the index (a JSON array of slots: ids, authors, times, record
//!   headers), then the data area, the records' data as raw JSON text. A read loads the header
//!   and the index only, and reads the data of the records an answer needs. The header line
//!   ends with its own checksum and holds the index's (both checked as it loads), and each
//!   record's entry holds the checksum of its data (checked as it is read): a byte changed on
//!   disk is never believed;
//! - the **delta** (`<key>.mirror-delta`), rewritten by warm reads that saw something new: the
//!   comments changed since the base, the cursor, and the cached login (a salted hash of the
//!   token it belongs to, with the salt). It names the base generation it extends; a delta for
//!   another generation contributes only its salt and login. Its first line is the SHA-256 of
//!   the rest: a warm `resume` answers from the delta alone, so a changed byte is caught.
//!
//! Both are written by rename, so readers see an old file or a new one, never a mix; two
//! processes writing at once cost at worst a larger next `since` read. They are not fsynced where
//! the machine names its boot: each is stamped with it, and one of another boot is rebuilt, never
//! read (`boot.rs`). A file another account owns, or may write, is never read
//! (`Found::Foreign`): it could say anything.

use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::Path;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::files::{Data, Files};
use super::slot::{Blob, Body, Head, Slot, Stamp};
use super::slots::{Slots, Walked};
use super::summary::Summary;
use crate::fsutil::NotOurs;
use crate::store::Cursor;

/// The on-disk schema; another version is rebuilt, without a warning. 5: the base's
/// checksums. 6: records below a person's note and conflicting `Id`s are told apart from
/// other comments, and the summary counts the comments it holds per issue (deletions).
pub(super) const SCHEMA: u32 = 6;

/// The base file's first line.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Header {
    pub schema: u32,
    /// A random name for this base; a delta extends exactly one.
    pub generation: String,
    /// Where the thread lives ([`crate::store::Thread::describe`]).
    pub location: String,
    /// The trusted authors the mirror was built for; `None`: everyone.
    pub trust: Option<Vec<String>>,
    /// When the base was last built from a full read.
    pub synced_at: DateTime<Utc>,
    /// Where the next incremental read starts, as of the base.
    pub cursor: Option<Cursor>,
    /// What the full read noticed (a local store's corrupt lines).
    pub warnings: Vec<String>,
    /// The full read may have missed comments (see [`crate::store::Listing::incomplete`]): so
    /// may every answer built on this base.
    #[serde(default)]
    pub incomplete: bool,
    /// The index's length in bytes, after the header line.
    pub index_len: u64,
    /// The checksum of the index's bytes ([`super::files::sum`]).
    pub index_sum: u32,
    /// The signing keys (by [`crate::scan::Verifier::name`]) whose verdicts the slots keep;
    /// `None`: read without keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signing: Option<String>,
}

/// The delta file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(super) struct DeltaFile {
    pub schema: u32,
    pub generation: String,
    pub cursor: Option<Cursor>,
    /// Hex salt of the login fingerprint.
    pub salt: String,
    /// `(fingerprint, login)`: the login of the token whose salted hash is the fingerprint.
    pub login: Option<(String, String)>,
    pub slots: Vec<Slot>,
    /// What `latest` and `resume` need, derived from the base and these slots
    /// (`summary.rs`); missing in files written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sum: Option<Summary>,
    /// The boot that wrote the file unsynced (`boot.rs`); stamped as it is written.
    #[serde(default, skip_serializing)]
    pub boot: Option<String>,
}

impl DeltaFile {
    /// Whether its slots are in comment-id order with their data inline, as a delta keeps them.
    pub(super) fn in_order_inline(&self) -> bool {
        self.slots.windows(2).all(|w| w[0].i < w[1].i)
            && (self.slots.iter()).all(|s| !matches!(s.b, Body::R(_, Blob::At(..))))
    }
}

/// A file's fields and the boot that writes it unsynced (`boot.rs`): the stamp every file of
/// the mirror is written with.
#[derive(Serialize)]
struct Stamped<'a, T> {
    #[serde(flatten)]
    file: &'a T,
    #[serde(skip_serializing_if = "Option::is_none")]
    boot: Option<&'static str>,
}

impl<'a, T> Stamped<'a, T> {
    fn now(file: &'a T) -> Stamped<'a, T> {
        Stamped {
            file,
            boot: super::boot::this(),
        }
    }
}

/// Just a file's boot stamp.
#[derive(Deserialize)]
struct BootOnly {
    #[serde(default)]
    boot: Option<String>,
}

/// Just the schema, to tell an old file from a corrupt one.
#[derive(Deserialize)]
struct SchemaOnly {
    schema: u32,
}

/// A delta holding more comments than this is folded into a new base.
pub(super) const COMPACT_AFTER: usize = 500;

/// Says, once per read, that a cache file another account owns or may write is ignored.
pub(super) fn foreign(path: &std::path::Path) {
    tracing::warn!(
        "ignoring the read cache {}: it is owned by another user, or writable by others \
         (remove it if you do not know where it came from)",
        path.display()
    );
}

/// What loading found.
pub(super) enum Found<T> {
    /// Nothing there.
    Missing,
    /// Written by another schema version, or unsynced in another boot of the machine.
    Outdated,
    /// Another account owns it, or may write it: whatever it says, it is not ours to trust.
    Foreign,
    /// There, but unreadable: the reason.
    Corrupt(String),
    /// Read.
    Ok(T),
}

/// What loading finds of a file that cannot be opened or read.
fn unread<T>(e: std::io::Error) -> Found<T> {
    match e {
        e if e.kind() == std::io::ErrorKind::NotFound => Found::Missing,
        e if NotOurs::is(&e) => Found::Foreign,
        e => Found::Corrupt(e.to_string()),
    }
}

/// Opens a base and reads its header line: the header, the reader after it and the line's
/// length.
fn open_base<T>(path: &Path) -> Result<(Header, BufReader<std::fs::File>, u64), Found<T>> {
    let mut reader = BufReader::new(crate::fsutil::open_private(path).map_err(unread)?);
    let mut line = Vec::new();
    reader.read_until(b'\n', &mut line).map_err(unread)?;
    let unread = |e: serde_json::Error| Found::Corrupt(format!("its header does not read: {e}"));
    if serde_json::from_slice::<SchemaOnly>(&line)
        .map_err(unread)?
        .schema
        != SCHEMA
    {
        return Err(Found::Outdated);
    }
    if !sealed_line(&line) {
        return Err(Found::Corrupt(
            "its header does not match its checksum: it was changed on disk".into(),
        ));
    }
    let header: Header = serde_json::from_slice(&line).map_err(unread)?;
    if !this_boots(&line) {
        return Err(Found::Outdated);
    }
    Ok((header, reader, line.len() as u64))
}

/// Reads the base: header, index, and the data area kept open.
pub(super) fn load_base(path: &Path) -> Found<(Header, Vec<Slot>, Data)> {
    let (header, mut reader, line) = match open_base(path) {
        Ok(opened) => opened,
        Err(found) => return found,
    };
    let Ok(index_len) = usize::try_from(header.index_len) else {
        return Found::Corrupt("its index is too large".into());
    };
    let mut index = vec![0; index_len];
    if let Err(e) = reader.read_exact(&mut index) {
        return Found::Corrupt(format!("its index is cut short: {e}"));
    }
    if super::files::sum(&index) != header.index_sum {
        return Found::Corrupt(
            "its index does not match its checksum: it was changed on disk".into(),
        );
    }
    let slots: Vec<Slot> = match serde_json::from_slice(&index) {
        Ok(s) => s,
        Err(e) => return Found::Corrupt(format!("its index does not read: {e}")),
    };
    let start = line + header.index_len;
    let file = reader.into_inner();
    let size = match file.metadata() {
        Ok(m) => m.len(),
        Err(e) => return Found::Corrupt(e.to_string()),
    };
    // Every record's data must lie inside the file, or the file was cut short.
    let inside = slots.iter().all(|s| match &s.b {
        Body::R(_, Blob::At(off, len, _)) => off
            .checked_add(*len)
            .and_then(|end| end.checked_add(start))
            .is_some_and(|end| end <= size),
        Body::R(_, Blob::In(_)) => false,
        _ => true,
    });
    if !inside {
        return Found::Corrupt("its data area is cut short".into());
    }
    let data = Data::at(file, start);
    Found::Ok((header, slots, data))
}

/// Whether a header line's file may be read in this boot (`boot.rs`); a stamp that does not
/// read is no stamp of this boot.
fn this_boots(line: &[u8]) -> bool {
    serde_json::from_slice::<BootOnly>(line).is_ok_and(|b| super::boot::readable(b.boot.as_deref()))
}

/// Reads the base's header line alone (a warm read through the summary needs nothing else).
pub(super) fn load_header(path: &Path) -> Found<Header> {
    match open_base(path) {
        Ok((header, ..)) => Found::Ok(header),
        Err(found) => found,
    }
}

/// Reads the delta, checked against its checksum ([`write_delta`]).
pub(super) fn load_delta(path: &Path) -> Found<DeltaFile> {
    let bytes = match crate::fsutil::read_private(path, u64::MAX) {
        Ok(b) => b,
        Err(e) => return unread(e),
    };
    let Some((sum, json)) = sealed(&bytes) else {
        // No checksum: a file of an older schema, or one cut or written over.
        return match serde_json::from_slice::<SchemaOnly>(&bytes) {
            Ok(s) if s.schema != SCHEMA => Found::Outdated,
            _ => Found::Corrupt("it has no checksum line".into()),
        };
    };
    if sum != checksum(json).as_bytes() {
        return Found::Corrupt("its checksum does not match: it was changed on disk".into());
    }
    // Parsed once (a warm read's largest file); only a file that does not read as ours is
    // parsed again, for its schema.
    match serde_json::from_slice::<DeltaFile>(json) {
        Ok(d) if d.schema == SCHEMA && super::boot::readable(d.boot.as_deref()) => Found::Ok(d),
        Ok(_) => Found::Outdated,
        Err(e) => match serde_json::from_slice::<SchemaOnly>(json) {
            Ok(s) if s.schema != SCHEMA => Found::Outdated,
            _ => Found::Corrupt(format!("it does not read: {e}")),
        },
    }
}

/// The checksum line and the JSON after it, when `bytes` starts with one.
fn sealed(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let n = bytes.iter().position(|&b| b == b'\n')?;
    let sum = &bytes[..n];
    (n == SUM_HEX && sum.iter().all(u8::is_ascii_hexdigit)).then(|| (sum, &bytes[n + 1..]))
}

/// How long a checksum line is: SHA-256 in hex.
const SUM_HEX: usize = 64;

/// The checksum of `bytes`: SHA-256, in lower-case hex.
fn checksum(bytes: &[u8]) -> String {
    use sha2::Digest;
    super::hex(&sha2::Sha256::digest(bytes))
}

/// Writes a base holding `slots` (whose data is inline or in `old`), by rename (`boot.rs`).
pub(super) fn write_base<S: Slots + ?Sized>(
    path: &Path,
    mut header: Header,
    slots: &S,
    old: Option<&Data>,
) -> Result<(), String> {
    let gone = "a record's data is in a base that is gone";
    // The index is written from the slots as they are, each record's data at its new place:
    // no copy of the slots is made, and its text is never held whole, nor made twice. The
    // header line goes first with the widest index length a `u64` has, and is written again
    // over itself once the index is measured (and summed), padded with spaces (JSON's
    // whitespace) to the same width.
    header.index_len = u64::MAX;
    header.index_sum = u32::MAX;
    let json = serde_json::to_vec(&Stamped::now(&header)).map_err(|e| e.to_string())?;
    let mut line = seal(json, true);
    let width = line.len();
    line.push(b'\n');
    super::boot::write_file(path, |w| {
        w.write_all(&line)?;
        // What the data area holds, in order: runs of data already on disk (records that
        // follow each other there, as a spill holds them, are one read, not one each) and the
        // slots whose data is inline.
        let mut plan: Vec<Piece> = Vec::new();
        let mut offset = 0u64;
        let mut counted = Counted::new(&mut *w);
        // The index as `serde_json` writes a list: `[`, the slots separated by `,`, `]`.
        counted.write_all(b"[")?;
        let mut n = 0usize;
        slots
            .walk(&mut |walked| {
                let spilled;
                let slot = match walked {
                    Walked::Slot(slot) => slot,
                    // A slot spilled as it reads back, its record's data (if any) where the data
                    // area will hold it: its JSON is what `Indexed` writes of it (the data
                    // spill's offsets are the data area's, its checksum taken as it spilled),
                    // copied as it is.
                    Walked::Spilled { json, data } if data.is_none_or(|(off, _)| off == offset) => {
                        if let Some((off, len)) = data {
                            old.ok_or(gone)?;
                            match plan.last_mut() {
                                Some(Piece::Run(_, to)) if *to == off => *to += len,
                                _ => plan.push(Piece::Run(off, off + len)),
                            }
                            offset += len;
                        }
                        if n > 0 {
                            counted.write_all(b",").map_err(|e| e.to_string())?;
                        }
                        counted.write_all(json).map_err(|e| e.to_string())?;
                        n += 1;
                        return Ok(());
                    }
                    // Its data moves: the slot is written with its new place.
                    Walked::Spilled { json, .. } => {
                        spilled = serde_json::from_slice::<Slot>(json)
                            .map_err(|e| format!("a spilled slot does not read: {e}"))?;
                        &spilled
                    }
                };
                let at = match &slot.b {
                    Body::R(_, blob) => {
                        let (len, sum) = match blob {
                            Blob::In(raw) => {
                                plan.push(Piece::Inline(n));
                                let bytes = raw.get().as_bytes();
                                (bytes.len() as u64, super::files::sum(bytes))
                            }
                            // Copied as it is: its checksum goes with it.
                            Blob::At(off, len, sum) => {
                                old.ok_or(gone)?;
                                match plan.last_mut() {
                                    Some(Piece::Run(_, to)) if *to == *off => *to += len,
                                    _ => plan.push(Piece::Run(*off, off + len)),
                                }
                                (*len, *sum)
                            }
                        };
                        offset += len;
                        Some((offset - len, len, sum))
                    }
                    _ => None,
                };
                if n > 0 {
                    counted.write_all(b",").map_err(|e| e.to_string())?;
                }
                serde_json::to_writer(&mut counted, &Indexed::of(slot, at))
                    .map_err(|e| e.to_string())?;
                n += 1;
                Ok(())
            })
            .map_err(std::io::Error::other)?;
        counted.write_all(b"]")?;
        (header.index_len, header.index_sum) = counted.finish()?;
        // One buffer for every run, allocated once.
        let mut buf = Vec::new();
        for piece in plan {
            match piece {
                Piece::Run(from, to) => {
                    let old = old.ok_or_else(|| std::io::Error::other(gone))?;
                    let mut at = from;
                    while at < to {
                        let len = (to - at).min(1 << 20) as usize;
                        old.chunk_into(at, len, &mut buf)
                            .map_err(std::io::Error::other)?;
                        if buf.len() < len {
                            return Err(std::io::Error::other(
                                "cannot read its data: the file is cut short",
                            ));
                        }
                        w.write_all(&buf)?;
                        at += len as u64;
                    }
                }
                Piece::Inline(n) => {
                    let slot = slots.nth(n).map_err(std::io::Error::other)?;
                    if let Body::R(_, Blob::In(raw)) = &slot.b {
                        w.write_all(raw.get().as_bytes())?;
                    }
                }
            }
        }
        let mut line = seal(serde_json::to_vec(&Stamped::now(&header))?, false);
        // Never wider than the placeholder: no `u64` has more digits than `u64::MAX`, nor
        // `u32` than `u32::MAX`.
        line.resize(width, b' ');
        w.seek(SeekFrom::Start(0))?;
        w.write_all(&line)
    })
}

/// The field a base's header line ends with: the checksum of the line's bytes before it.
const LINE_SUM: &[u8] = b",\"line_sum\":";

/// A header's JSON (an object) ending with [`LINE_SUM`], the checksum of what precedes it;
/// `widest`: with the widest checksum instead, for the placeholder the header is later written
/// over.
fn seal(mut json: Vec<u8>, widest: bool) -> Vec<u8> {
    // The closing brace, put back after the checksum.
    json.pop();
    let sum = match widest {
        true => u32::MAX,
        false => super::files::sum(&json),
    };
    json.extend_from_slice(LINE_SUM);
    json.extend_from_slice(sum.to_string().as_bytes());
    json.push(b'}');
    json
}

/// Whether a header line (padded, and ending in a newline) ends with the checksum of the
/// bytes before it ([`seal`]).
fn sealed_line(line: &[u8]) -> bool {
    let Some(body) = line.trim_ascii_end().strip_suffix(b"}") else {
        return false;
    };
    let Some(at) = memchr::memmem::rfind(body, LINE_SUM) else {
        return false;
    };
    let digits = &body[at + LINE_SUM.len()..];
    digits.iter().all(u8::is_ascii_digit)
        && std::str::from_utf8(digits)
            .ok()
            .and_then(|d| d.parse::<u32>().ok())
            == Some(super::files::sum(&body[..at]))
}

/// A part of a base's data area.
enum Piece {
    /// The bytes `from..to` of the data already on disk.
    Run(u64, u64),
    /// The inline data of slot `n`.
    Inline(usize),
}

/// A writer that passes what it writes on in chunks, counting the bytes and summing them (the
/// index's checksum, taken as it is written: its text is never held whole). The index is
/// thousands of small writes: summed one by one, they cost seven times what a chunk costs.
/// A chunk is as large as the file's buffer (`fsutil::write_by_rename`), so it goes straight
/// to the file: the bytes are copied once, here, as they were into that buffer before.
struct Counted<W: Write> {
    inner: W,
    len: u64,
    sum: crc32fast::Hasher,
    held: Vec<u8>,
}

/// How much [`Counted`] holds before it passes it on.
const CHUNK: usize = 256 * 1024;

impl<W: Write> Counted<W> {
    fn new(inner: W) -> Counted<W> {
        Counted {
            inner,
            len: 0,
            sum: crc32fast::Hasher::new(),
            held: Vec::with_capacity(CHUNK),
        }
    }

    /// Sums what is held and passes it on.
    fn pass(&mut self) -> std::io::Result<()> {
        self.sum.update(&self.held);
        self.inner.write_all(&self.held)?;
        self.held.clear();
        Ok(())
    }

    /// Passes on what is held: how many bytes were written, and their checksum.
    fn finish(mut self) -> std::io::Result<(u64, u32)> {
        self.pass()?;
        Ok((self.len, self.sum.finalize()))
    }
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.held.extend_from_slice(buf);
        self.len += buf.len() as u64;
        if self.held.len() >= CHUNK {
            self.pass()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.pass()?;
        self.inner.flush()
    }
}

/// A slot as the base's index holds it: its fields as [`Slot`] writes them, a record's data at
/// its place in the data area.
#[derive(Serialize)]
struct Indexed<'a> {
    i: u64,
    a: &'a str,
    c: Stamp,
    u: Stamp,
    #[serde(skip_serializing_if = "Option::is_none")]
    w: Option<&'a String>,
    b: IndexedBody<'a>,
}

/// [`Body`] as the index holds it: a record's data at `(offset, length, checksum)`, else as
/// it is.
#[derive(Serialize)]
enum IndexedBody<'a> {
    R(&'a Head, Blob),
    #[serde(untagged)]
    As(&'a Body),
}

impl<'a> Indexed<'a> {
    fn of(slot: &'a Slot, at: Option<(u64, u64, u32)>) -> Indexed<'a> {
        let b = match (&slot.b, at) {
            (Body::R(head, _), Some((off, len, sum))) => {
                IndexedBody::R(head, Blob::At(off, len, sum))
            }
            (b, _) => IndexedBody::As(b),
        };
        let (i, a, c, u, w) = (slot.i, &slot.a, slot.c, slot.u, slot.w.as_ref());
        Indexed { i, a, c, u, w, b }
    }
}

/// Writes the delta, by rename (`boot.rs`): a line holding the checksum of what follows, then
/// the delta's JSON. A warm `resume` answers from the delta alone, so a byte of it changed on
/// disk (by hand, or by the disk) is caught before it is believed, and the cache rebuilt.
pub(super) fn write_delta(path: &Path, delta: &DeltaFile) -> Result<(), String> {
    let json = serde_json::to_vec(&Stamped::now(delta)).map_err(|e| e.to_string())?;
    let mut bytes = checksum(&json).into_bytes();
    bytes.push(b'\n');
    bytes.extend_from_slice(&json);
    super::boot::write_file(path, |w| w.write_all(&bytes))
}

/// Removes both files (a mirror that cannot be kept consistent).
pub(super) fn remove(files: &Files) {
    for path in [&files.base, &files.delta, &files.ids] {
        if let Err(e) = std::fs::remove_file(path)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!("cannot remove the read cache {}: {e}", path.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{seal, sealed_line};

    #[test]
    fn a_sealed_header_line_reads_and_any_byte_changed_in_it_does_not() {
        let json = br#"{"schema":5,"cursor":{"Since":"2026-12-05T18:32:35Z"},"incomplete":false}"#;
        // As the base holds it: padded with spaces, then its newline.
        let mut line = seal(json.to_vec(), false);
        line.resize(line.len() + 7, b' ');
        line.push(b'\n');
        assert!(sealed_line(&line));
        let end = line.trim_ascii_end().len();
        for at in 0..end {
            let mut changed = line.clone();
            changed[at] ^= 0x01;
            assert!(!sealed_line(&changed), "byte {at} changed");
        }
        // The placeholder's checksum is the widest, and not the line's.
        let placeholder = seal(json.to_vec(), true);
        assert!(placeholder.len() >= seal(json.to_vec(), false).len());
        assert!(!sealed_line(&placeholder));
        assert!(!sealed_line(json), "a line without its checksum");
    }
}
