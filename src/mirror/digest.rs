//! What the mirror makes of each comment as a listing streams in ([`crate::store::Digest`]): the
//! body is parsed on the decoding thread while the rest of the answer downloads, and a record's
//! data goes straight to a spill file beside the mirror, so a cold read holds each comment's
//! header, not its body or its data: peak memory follows the number of comments times a header,
//! not the thread's size.
//!
//! The spill is unlinked as soon as it is created (it lives while this process holds it open),
//! so nothing is left behind by a crash; the base written from a full read copies the data out of
//! it, and an incremental read takes its few records back in memory before the delta is saved
//! (the delta keeps its data inline).

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

use super::files::Data;
use super::slot::{Blob, Body, Slot};
use crate::scan::Verifier;
use crate::store::{Comment, Digest};

/// The bodies one listing's digest made, by comment id, and the spill their data went to.
#[derive(Clone, Default)]
pub(super) struct Digested(Arc<Mutex<Made>>);

#[derive(Default)]
struct Made {
    bodies: HashMap<u64, Result<Body, String>>,
    spill: Option<Spill>,
    /// The reader's signature check, when it has keys.
    verify: Option<Arc<Verifier>>,
}

struct Spill {
    file: BufWriter<File>,
    /// Where the next record's data goes.
    len: u64,
    /// A write failed: the spill is not read back (and later records stay in memory).
    broken: bool,
}

impl Digested {
    /// A digested listing whose records' data spills into a new file in `dir` (when one can be
    /// made there; else the data stays in memory).
    pub fn spilling(dir: &Path) -> Digested {
        Digested::into(spill_file(dir))
    }

    /// A digested listing whose records' data spills into `file`.
    fn into(file: Option<File>) -> Digested {
        let made = Made {
            bodies: HashMap::new(),
            verify: None,
            spill: file.map(|file| Spill {
                file: BufWriter::with_capacity(256 * 1024, file),
                len: 0,
                broken: false,
            }),
        };
        Digested(Arc::new(Mutex::new(made)))
    }

    /// This digest, checking each record's signature with `verify`.
    pub fn verifying(self, verify: Option<&Verifier>) -> Digested {
        if let Ok(mut made) = self.0.lock() {
            made.verify = verify.cloned().map(Arc::new);
        }
        self
    }

    /// The digest to hand the store: it takes each kept body and keeps what [`Body::of`] makes
    /// of it (as for a trusted author: a store keeps only those), a record's data in the spill.
    pub fn digest(&self) -> Digest {
        let made = self.clone();
        Digest::new(move |id, body| {
            // Poisoned: the body stays where it is, and is read as usual.
            let Ok(mut made) = made.0.lock() else {
                return;
            };
            let mut body = Body::of(std::mem::take(body), true, made.verify.as_deref())
                .map_err(|e| e.to_string());
            if let (Ok(Body::R(_, blob)), Some(spill)) = (&mut body, made.spill.as_mut()) {
                spill.take(blob);
            }
            made.bodies.insert(id, body);
        })
    }

    /// `comment` as a slot: from what the digest made of it when it took the body, else parsed
    /// now.
    pub fn slot(&self, comment: Comment, trusted: bool) -> Result<Slot, String> {
        let (made, verify) = match self.0.lock() {
            Ok(mut m) => {
                let made = match comment.body.is_empty() {
                    true => m.bodies.remove(&comment.id),
                    false => None,
                };
                // The table gives its memory back as the slots take the bodies out of it.
                if m.bodies.capacity() >= 1024 && m.bodies.len() < m.bodies.capacity() / 4 {
                    m.bodies.shrink_to_fit();
                }
                (made, m.verify.clone())
            }
            Err(_) => (None, None),
        };
        let Some(made) = made else {
            return Slot::of(comment, trusted, verify.as_deref()).map_err(|e| e.to_string());
        };
        let b = made?;
        Ok(Slot::holding(
            comment,
            if trusted { b } else { b.distrusted() },
        ))
    }

    /// The spill, for reading the data of the slots made from it (`None` when nothing spilled).
    /// The digest spills no more after this. An error when the spill cannot be read back (its
    /// last writes failed): the slots that point into it are lost, so the listing must be read
    /// again (without a spill).
    pub fn data(&self) -> Result<Option<Arc<Data>>, String> {
        let Some(spill) = self.0.lock().ok().and_then(|mut m| m.spill.take()) else {
            return Ok(None);
        };
        if spill.broken {
            return Err("a write to the read cache's spill failed".into());
        }
        let file = spill.file.into_inner().map_err(|e| e.error().to_string())?;
        Ok((spill.len > 0).then(|| Arc::new(Data::whole(file))))
    }
}

impl Spill {
    /// Moves a record's data from memory to the end of the spill.
    fn take(&mut self, blob: &mut Blob) {
        let Blob::In(raw) = blob else {
            return;
        };
        if self.broken {
            return;
        }
        let bytes = raw.get().as_bytes();
        match self.file.write_all(bytes) {
            Ok(()) => {
                let len = bytes.len() as u64;
                *blob = Blob::At(self.len, len);
                self.len += len;
            }
            Err(e) => {
                tracing::debug!("cannot spill the read cache's data ({e}); keeping it in memory");
                self.broken = true;
            }
        }
    }
}

/// A new private file in `dir`, unlinked at once (Unix: it lives while open); `None` when it
/// cannot be made, or on a system where an open file cannot be unlinked.
fn spill_file(dir: &Path) -> Option<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        crate::fsutil::create_private_dir(dir).ok()?;
        let path = dir.join(format!(".spill-{}", super::random_hex()));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .ok()?;
        std::fs::remove_file(&path).ok()?;
        Some(file)
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        None
    }
}

/// Takes the data of `slots` that lives in `data` (a spill) back into memory: for slots that
/// outlive the spill (an incremental read's delta).
pub(super) fn inline(slots: &mut [Slot], data: &Data) -> Result<(), String> {
    for slot in slots {
        if let Body::R(_, blob @ Blob::At(..)) = &mut slot.b {
            let Blob::At(offset, len) = *blob else {
                continue;
            };
            let bytes = data.bytes(offset, len)?;
            let raw = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
            *blob = Blob::In(raw);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::DateTime;

    fn comment(id: u64, body: &str) -> Comment {
        Comment {
            id,
            author: "ca-bot".into(),
            created_at: DateTime::UNIX_EPOCH,
            updated_at: DateTime::UNIX_EPOCH,
            url: None,
            body: body.into(),
        }
    }

    fn record(phase: &str) -> String {
        let record =
            crate::format::Record::checkpoint("w", "s", phase, serde_json::json!({"p": phase}))
                .expect("a record");
        crate::format::Renderer::embedded()
            .and_then(|r| r.render(&record))
            .expect("a rendered record")
    }

    /// A slot as JSON, its data read from `data` when it is not inline.
    fn shown(mut slot: Slot, data: Option<&Data>) -> String {
        if let Some(data) = data {
            inline(std::slice::from_mut(&mut slot), data).unwrap();
        }
        serde_json::to_string(&slot).unwrap()
    }

    #[test]
    fn a_digested_body_makes_the_slot_a_parse_after_the_listing_makes() {
        let one = record("clone_complete");
        let two = record("subtask_1_complete");
        let bodies = [
            one.as_str(),
            "[CHECKPOINT] not json",
            "a person's comment",
            two.as_str(),
        ];
        let dir = tempfile::tempdir().unwrap();
        for (trusted, spill) in [(true, true), (false, true), (true, false), (false, false)] {
            let digested = match spill {
                true => Digested::spilling(dir.path()),
                false => Digested::default(),
            };
            let digest = digested.digest();
            for (i, body) in bodies.iter().enumerate() {
                let mut taken = body.to_string();
                digest.apply(i as u64, &mut taken);
                assert!(taken.is_empty(), "the digest takes the body");
            }
            let data = digested.data().unwrap();
            assert_eq!(data.is_some(), spill, "the records' data is in the spill");
            for (i, body) in bodies.iter().enumerate() {
                let made = digested.slot(comment(i as u64, ""), trusted).unwrap();
                let parsed = Slot::of(comment(i as u64, body), trusted, None).unwrap();
                assert_eq!(
                    shown(made, data.as_deref()),
                    shown(parsed, None),
                    "{body:?}, trusted: {trusted}, spill: {spill}"
                );
            }
            // A body the digest did not take is parsed as usual.
            let kept = digested.slot(comment(9, "a person's comment"), trusted);
            assert!(matches!(kept.unwrap().b, Body::N));
        }
        // The spills are unlinked at once: nothing is left in the directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_spill_that_cannot_be_written_is_never_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("read-only");
        std::fs::write(&path, "").unwrap();
        // Every write to it fails (once the buffer is flushed).
        let digested = Digested::into(Some(File::open(&path).unwrap()));
        let digest = digested.digest();
        for i in 0..2000 {
            digest.apply(i, &mut record(&format!("subtask_{i}_complete")));
        }
        assert!(
            digested.data().is_err(),
            "the caller reads the listing again"
        );
    }

    #[test]
    fn a_base_written_from_spilled_slots_reads_back_as_parsed() {
        let bodies: Vec<String> = (0..5)
            .map(|i| match i {
                2 => "a person's comment".to_string(),
                _ => record(&format!("subtask_{i}_complete")),
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let digested = Digested::spilling(dir.path());
        let digest = digested.digest();
        for (i, body) in bodies.iter().enumerate() {
            digest.apply(i as u64, &mut body.clone());
        }
        let spill = digested.data().unwrap().expect("the data spilled");
        let slots: Vec<Slot> = (0..bodies.len())
            .map(|i| digested.slot(comment(i as u64, ""), true).unwrap())
            .collect();
        let path = dir.path().join("t.mirror");
        let header = super::super::disk::Header {
            schema: super::super::disk::SCHEMA,
            generation: "g".into(),
            location: "here".into(),
            trust: None,
            synced_at: chrono::Utc::now(),
            cursor: None,
            warnings: Vec::new(),
            incomplete: false,
            index_len: 0,
            signing: None,
        };
        super::super::disk::write_base(&path, header, &slots, Some(&spill)).unwrap();
        let super::super::disk::Found::Ok((_, read, data)) = super::super::disk::load_base(&path)
        else {
            panic!("the base reads back");
        };
        assert_eq!(read.len(), bodies.len());
        for (slot, body) in read.into_iter().zip(&bodies) {
            let parsed = Slot::of(comment(slot.i, body), true, None).unwrap();
            assert_eq!(shown(slot, Some(&data)), shown(parsed, None), "{body:?}");
        }
    }
}
