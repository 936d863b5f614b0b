//! One comment as the mirror keeps it: who and when, and the parsed record split into its
//! header (kept in the index, cheap to load) and its data (raw JSON text, parsed only for the
//! records an answer needs).

use chrono::DateTime;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

pub(super) use super::head::{Head, Stamp};
use super::sig::Sig;
use crate::format::{ParseError, parse_keeping_data};
use crate::scan::{Checked, CommentInfo, Verifier};
use crate::store::{Comment, Skip, Unreadable};

/// One comment in the mirror.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Slot {
    /// The store's comment id.
    pub i: u64,
    /// The author.
    pub a: String,
    /// Created at.
    pub c: Stamp,
    /// Updated at.
    pub u: Stamp,
    /// The web address, when the store has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub w: Option<String>,
    /// What the body is.
    pub b: Body,
}

/// What a comment's body is.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) enum Body {
    /// A record: its header, and where its data is.
    R(Box<Head>, Blob),
    /// Not a record (no marker line).
    N,
    /// Meant as a record but invalid: the body, parsed again when read (it is rare, and the
    /// parse error and marker line come back exactly as the parser says).
    I(String),
    /// Has a marker line, posted by an author not trusted when it was read: the body is not
    /// kept (the mirror is rebuilt when the trusted authors change).
    S,
    /// The store could not read the comment.
    U(String),
    /// The store skipped the body as over the parser's cap: its length and the cap, in bytes.
    L(u64, u64),
    /// [`Body::L`], with the beginning of the body the store kept (`store::Unreadable::head`),
    /// which names whose record it was meant to be.
    Lh(u64, u64, String),
}

impl Body {
    /// What `body` is, as an author `trusted` or not posted it; a record's signature is
    /// checked with `verify`, when the reader has keys.
    pub(super) fn of(
        body: String,
        trusted: bool,
        verify: Option<&Verifier>,
    ) -> Result<Body, serde_json::Error> {
        // The data is kept as its text: only the records an answer needs are parsed further.
        Ok(match parse_keeping_data(&body) {
            Err(ParseError::NoMarker) => Body::N,
            Err(ParseError::TooLarge { .. })
                if crate::format::marker_in_head(&body) == Some(None) =>
            {
                Body::N
            }
            _ if !trusted => Body::S,
            Err(_) => Body::I(body),
            Ok((record, text)) => {
                let (mut head, data) = Head::split(record);
                head.z = verify.map(|v| Sig::of(v.check(&body)));
                let data = match text {
                    Some(text) => text,
                    None => serde_json::value::to_raw_value(&data)?,
                };
                Body::R(Box::new(head), Blob::In(data))
            }
        })
    }

    /// The body as [`Body::of`] says it for an author not trusted, from what it says for one
    /// who is: a comment with a marker line is not kept.
    pub(super) fn distrusted(self) -> Body {
        match self {
            Body::R(..) | Body::I(_) => Body::S,
            other => other,
        }
    }
}

/// Where a record's data is: at an offset of the base file's data area, or inline.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) enum Blob {
    /// `(offset, length, checksum)` in the base file's data area (or a spill): the checksum
    /// ([`super::files::sum`]) of those bytes, checked as they are read back, so a byte
    /// changed on disk is never believed.
    At(u64, u64, u32),
    /// The data's JSON text.
    In(Box<RawValue>),
}

impl Slot {
    /// A listed comment as a slot; `trusted` says whether its author counts (an untrusted
    /// author's body is not kept).
    pub fn of(
        mut comment: Comment,
        trusted: bool,
        verify: Option<&Verifier>,
    ) -> Result<Slot, serde_json::Error> {
        let b = Body::of(std::mem::take(&mut comment.body), trusted, verify)?;
        Ok(Slot::holding(comment, b))
    }

    /// `comment` as a slot holding `b`, what was made of its body (the body itself is not read).
    pub fn holding(comment: Comment, b: Body) -> Slot {
        Slot {
            i: comment.id,
            a: comment.author,
            c: Stamp(comment.created_at),
            u: Stamp(comment.updated_at),
            w: comment.url,
            b,
        }
    }

    /// An unreadable comment (with an id) as a slot.
    pub fn unreadable(u: &Unreadable, id: u64) -> Slot {
        let created = u.created_at.unwrap_or(DateTime::UNIX_EPOCH);
        Slot {
            i: id,
            a: u.author.clone().unwrap_or_default(),
            c: Stamp(created),
            u: Stamp(u.updated_at.unwrap_or(created)),
            w: u.url.clone(),
            b: match u.skipped {
                Some(Skip::Untrusted) => Body::S,
                // Plainly not a record: kept as any other comment that is not one.
                Some(Skip::TooLarge { .. })
                    if u.head.as_deref().and_then(crate::format::marker_in_head) == Some(None) =>
                {
                    Body::N
                }
                Some(Skip::TooLarge { len, cap }) => match &u.head {
                    Some(head) => Body::Lh(len as u64, cap as u64, head.clone()),
                    None => Body::L(len as u64, cap as u64),
                },
                None => Body::U(u.reason.clone()),
            },
        }
    }

    /// What the thread's ordering rule needs of the record this slot holds (nothing for a
    /// comment that is not a readable record).
    pub fn posting(&self) -> crate::scan::Posting {
        match &self.b {
            Body::R(head, _) => head.posting(),
            Body::I(body) => crate::format::parse(body)
                .map(|r| crate::scan::posting(&r))
                .unwrap_or_default(),
            _ => crate::scan::Posting::default(),
        }
    }

    /// [`Slot::posting`], with what makes a record without an `Id` the same record as its
    /// copies (`format/identity.rs`): its payload is read back for it (from `data` when the
    /// base holds it). Such records are seed 003's, and few. Fails when the data cannot be
    /// read back from `data` (gone, cut short, or changed on disk): a record never goes
    /// without its sameness, counted twice or hiding another.
    pub fn posting_in(
        &self,
        data: Option<&super::files::Data>,
    ) -> Result<crate::scan::Posting, String> {
        let mut posting = self.posting();
        if let Body::R(head, blob) = &self.b
            && posting.id.is_none()
        {
            let value = match blob {
                // Inline data was parsed as the record was: it reads.
                Blob::In(raw) => serde_json::from_str(raw.get()).ok(),
                Blob::At(off, len, sum) => Some(
                    data.ok_or("a record's data is in a base that is gone")?
                        .read(*off, *len, *sum)?,
                ),
            };
            posting.same = value.map(|v| head.record(v).sameness());
        }
        Ok(posting)
    }

    /// Where the record this slot holds stands in the thread's order.
    pub fn place(&self) -> crate::scan::Place {
        crate::scan::place(&self.info(), &self.posting())
    }

    /// Whether the slot holds a takeover record (`[TAKEOVER]`).
    pub fn is_takeover(&self) -> bool {
        matches!(&self.b, Body::R(head, _) if head.is_takeover())
    }

    /// Whether this slot is a record validly signed (with the reader's keys).
    pub fn signed(&self) -> bool {
        matches!(&self.b, Body::R(head, _) if head.z == Some(Sig::Ok))
    }

    /// What the signature check makes of this record, placed in the thread: `None` when it is
    /// believed (marking `info` when it is unsigned), else why not. `first_signed` is the
    /// comment id of the thread's first validly signed record.
    pub fn doubt(&self, first_signed: Option<u64>, info: &mut CommentInfo) -> Option<String> {
        let Body::R(head, _) = &self.b else {
            return None;
        };
        let checked = head.z.as_ref().map_or(Checked::Believed, Sig::checked);
        crate::scan::gated(checked, first_signed.is_some_and(|f| f < self.i), info)
    }

    /// Whether [`Slot::doubt`] refuses this record (without building its comment).
    pub fn refused(&self, first_signed: Option<u64>) -> bool {
        match &self.b {
            Body::R(head, _) => match head.z {
                Some(Sig::Bad(_)) => true,
                Some(Sig::No) => first_signed.is_some_and(|f| f < self.i),
                _ => false,
            },
            _ => false,
        }
    }

    /// Whether this record is believed without a signature (posted before `first_signed`).
    pub fn unsigned(&self, first_signed: Option<u64>) -> bool {
        matches!(&self.b, Body::R(head, _) if head.z == Some(Sig::No))
            && !self.refused(first_signed)
    }

    /// The comment as the scan reports it.
    pub fn info(&self) -> CommentInfo {
        CommentInfo {
            author: self.a.clone(),
            url: self.w.clone(),
            ..self.info_bare()
        }
    }

    /// [`Slot::info`] without its author and address (empty): what the thread's order needs.
    pub fn info_bare(&self) -> CommentInfo {
        CommentInfo {
            id: Some(self.i),
            author: String::new(),
            created_at: self.c.0,
            updated_at: self.u.0,
            url: None,
            issue: self.w.as_deref().and_then(crate::store::issue_in_url),
            edited: crate::scan::edited_after_posting(self.c.0, self.u.0)
                || matches!(&self.b, Body::R(head, _) if head.edited_at().is_some()),
            pending: false,
            unsigned: false,
        }
    }
}

/// The comment id of the first validly signed record among `slots`.
pub(super) fn first_signed(slots: &[Slot]) -> Option<u64> {
    slots.iter().filter(|s| s.signed()).map(|s| s.i).min()
}
