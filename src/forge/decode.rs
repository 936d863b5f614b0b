//! Decoding a comment list element by element as its bytes arrive, keeping only what a reader
//! will use.
//!
//! The per-issue comment list is one unpaginated JSON array, so a long thread is one large
//! answer. [`decode_list`] reads it from any [`Read`] (the HTTP body, in `http/stream.rs`), finds
//! each element's end and builds each comment from its fields (`decode/split.rs`), so the raw
//! answer is never held: only one element's bytes at a time, plus the comments kept. A
//! comment whose author [`Filter`] does not keep has its body skipped unread (the author comes
//! before the body in Forgejo's field order; when a server sends them the other way round, the
//! body is held until its element ends, up to the body cap), and a body over the cap is
//! measured and dropped. Both come back as unreadable
//! comments marked [`Skip`], with their id, author and times. One odd element is one unreadable
//! comment, exactly as [`CommentList::decode`] decides it. No IO of its own, no format knowledge.

use std::collections::BTreeSet;
use std::fmt;
use std::io::Read;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Visitor methods for the scalars that are not what the visitor wants: each hands `wrap` the
/// visitor and the scalar as a JSON value.
macro_rules! odd_scalars {
    ($ret:ty, $wrap:expr) => {
        odd_scalars!($ret, $wrap; visit_bool(bool), visit_i64(i64), visit_u64(u64), visit_f64(f64));
    };
    ($ret:ty, $wrap:expr; $($name:ident($t:ty)),*) => {$(
        fn $name<E: de::Error>(self, v: $t) -> Result<$ret, E> {
            Ok(($wrap)(self, Value::from(v)))
        }
    )*};
}

mod body;
mod fields;
mod scan;
mod source;
mod split;

use body::{Body, BodySeed};
use fields::{Fields, Key, Name, UserSeed, Want};

use super::handoff::Handed;
use super::models::{Comment, CommentList, UnreadableComment};
use crate::store::Skip;

/// Which comments to keep, resolved: the trusted logins (the token's own included), the body
/// cap, and the most body bytes one listing may keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Filter {
    /// `None` keeps every author.
    pub authors: Option<BTreeSet<String>>,
    /// Bodies longer than this are skipped.
    pub max_body: usize,
    /// The most body bytes kept in one listing (the client sets its `max_response_bytes`).
    pub max_kept: usize,
    /// Comments on these issues are dropped altogether, their bodies skipped unread (a
    /// repository-wide list holds other issues' comments).
    pub drop_issues: BTreeSet<u64>,
    /// The issues whose bodies count toward [`Filter::max_kept`] (`None`: every issue's). In a
    /// repository-wide list these are the thread's known members: the comments of other issues
    /// (whose membership is not yet known) are held up to a `max_kept` of their own, and past it
    /// their issue is [deferred](CommentList::deferred), its bodies skipped unread, so another
    /// issue's large comments (a bot's CI logs) never fail the read.
    pub members: Option<BTreeSet<u64>>,
    /// Called on each kept comment as it is decoded ([`crate::store::Keep::digest`]).
    pub digest: Option<crate::store::Digest>,
}

impl Filter {
    /// Keeps everything.
    pub fn all() -> Filter {
        Filter {
            authors: None,
            max_body: usize::MAX,
            max_kept: usize::MAX,
            drop_issues: BTreeSet::new(),
            members: None,
            digest: None,
        }
    }

    /// Keeps only `me`'s comments, whatever their size.
    pub fn only(me: String) -> Filter {
        let authors = Some(BTreeSet::from([me]));
        Filter {
            authors,
            ..Filter::all()
        }
    }

    /// Keeps what `keep` keeps, with `me` (the token's login) among the authors.
    pub fn new(keep: &crate::store::Keep, me: Option<String>) -> Filter {
        let mut authors = keep.authors.clone();
        authors.iter_mut().for_each(|a| a.extend(me.clone()));
        let (max_body, digest) = (keep.max_body, keep.digest.clone());
        Filter {
            authors,
            max_body,
            digest,
            ..Filter::all()
        }
    }

    /// Whether the element whose `issue_url` (read so far) is this is on an issue to drop.
    fn drops(&self, issue_url: Option<&str>) -> bool {
        !self.drop_issues.is_empty()
            && issue_url
                .and_then(crate::store::issue_in_url)
                .is_some_and(|n| self.drop_issues.contains(&n))
    }

    /// Whether the bodies of `issue`'s comments count toward [`Filter::max_kept`].
    fn counts(&self, issue: Option<u64>) -> bool {
        self.members
            .as_ref()
            .is_none_or(|m| issue.is_some_and(|n| m.contains(&n)))
    }

    fn keeps(&self, author: &str) -> bool {
        self.authors.as_ref().is_none_or(|a| a.contains(author))
    }
}

/// Why a list could not be decoded.
#[derive(Debug)]
pub(crate) enum Failed {
    /// The bytes are not a JSON array (or the reader failed: the caller knows which).
    Json(serde_json::Error),
    /// The kept bodies passed [`Filter::max_kept`].
    OverCap,
}

/// Decodes a JSON array of comments from `reader`, keeping what `filter` keeps.
pub(crate) fn decode_list<R: Read>(reader: R, filter: &Filter) -> Result<CommentList, Failed> {
    decode_holding(reader, filter, hold(filter)).0
}

/// The most of one element the splitter holds before the streaming reader takes it over: a body
/// the filter may keep, with room for its escapes and the other fields.
fn hold(filter: &Filter) -> usize {
    filter
        .max_body
        .saturating_mul(2)
        .saturating_add(64 * 1024)
        .clamp(1 << 20, 8 << 20)
}

/// [`decode_list`], holding at most about `hold` bytes of one element.
fn decode_holding<R: Read>(
    reader: R,
    filter: &Filter,
    hold: usize,
) -> (Result<CommentList, Failed>, split::Split) {
    let mut state = State::new(filter);
    let (done, split) = split::run(reader, &mut state, hold);
    let list = match done {
        Ok(()) => Ok(state.out),
        Err(_) if state.over => Err(Failed::OverCap),
        Err(e) => Err(Failed::Json(e)),
    };
    (list, split)
}

struct State<'f> {
    filter: &'f Filter,
    kept: usize,
    /// The body bytes kept of issues that do not count ([`Filter::counts`]).
    kept_other: usize,
    over: bool,
    out: CommentList,
}

impl<'f> State<'f> {
    /// Nothing decoded yet, keeping what `filter` keeps.
    fn new(filter: &'f Filter) -> State<'f> {
        State {
            filter,
            kept: 0,
            kept_other: 0,
            over: false,
            out: CommentList::default(),
        }
    }
}

/// The key serde_json uses (with `arbitrary_precision`) to hand a number over as a map.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// What one element comes to, before the part that depends on the elements before it (the
/// listing's cap, [`State::apply`]): what it files.
pub(super) enum Piece {
    Nothing,
    Unreadable(UnreadableComment),
    Keep(Keep),
}

/// A readable comment, to keep unless the listing's cap says otherwise.
pub(super) struct Keep {
    comment: Comment,
    issue: Option<u64>,
}

/// One element of the array: usually a comment object. A body on one of the issues `deferred`
/// so far is skipped unread, and the element dropped.
pub(super) struct Element<'f> {
    pub filter: &'f Filter,
    pub deferred: &'f BTreeSet<u64>,
}

impl<'de> DeserializeSeed<'de> for Element<'_> {
    type Value = Piece;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Piece, D::Error> {
        d.deserialize_any(self)
    }
}

/// An element that is not an object: unreadable, said as the list decoder says it.
fn odd(item: Value) -> Piece {
    match Comment::classify(&item) {
        Err(odd) => Piece::Unreadable(*odd),
        Ok(_) => Piece::Nothing,
    }
}

impl<'de> Visitor<'de> for Element<'_> {
    type Value = Piece;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a comment")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Piece, A::Error> {
        let mut fields = Fields::default();
        let mut body = Body::Missing;
        while let Some(key) = map.next_key_seed(Name(Key::of))? {
            match key {
                Key::Number => {
                    let n: Value = map.next_value()?;
                    let n = n
                        .as_str()
                        .and_then(|n| n.parse::<serde_json::Number>().ok())
                        .map_or(Value::Null, Value::Number);
                    return Ok(odd(n));
                }
                Key::Id => fields.id = Some(map.next_value_seed(Want::new())?),
                Key::HtmlUrl => fields.html_url = Some(map.next_value_seed(Want::new())?),
                Key::IssueUrl => fields.issue_url = Some(map.next_value_seed(Want::new())?),
                Key::User => fields.user = Some(map.next_value_seed(UserSeed)?),
                Key::CreatedAt => fields.created_at = Some(map.next_value_seed(Want::new())?),
                Key::UpdatedAt => fields.updated_at = Some(map.next_value_seed(Want::new())?),
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
                Key::Body => {
                    let issue = fields.issue();
                    let deferred = issue.is_some_and(|n| self.deferred.contains(&n));
                    body = match fields.login() {
                        _ if self.filter.drops(fields.issue_url()) || deferred => {
                            map.next_value::<IgnoredAny>()?;
                            Body::Dropped
                        }
                        Some(author) if !self.filter.keeps(author) => {
                            map.next_value::<IgnoredAny>()?;
                            Body::Skipped(Skip::Untrusted, None)
                        }
                        _ => map.next_value_seed(BodySeed(self.filter.max_body))?,
                    };
                }
            }
        }
        Ok(finish(self.filter, fields, body))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Piece, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(odd(Value::Array(Vec::new())))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Piece, E> {
        Ok(odd(Value::String(String::new())))
    }

    odd_scalars!(Piece, |_, v| odd(v));

    fn visit_unit<E: de::Error>(self) -> Result<Piece, E> {
        Ok(odd(Value::Null))
    }

    fn visit_none<E: de::Error>(self) -> Result<Piece, E> {
        self.visit_unit()
    }
}

/// What one comment object files.
///
/// A comment whose fields all came typed is built from them; any other element takes the
/// lenient path, its fields as a JSON object, so it is worded as it always was.
fn finish(filter: &Filter, fields: Fields, body: Body) -> Piece {
    if filter.drops(fields.issue_url()) {
        return Piece::Nothing;
    }
    let issue = fields.issue();
    let (text, odd_body) = match body {
        Body::Dropped => return Piece::Nothing,
        Body::Missing => (None, None),
        Body::Odd(v) => (None, Some(v)),
        Body::Kept(text) => (Some(text), None),
        Body::Skipped(skip, head) => {
            let mut odd = skipped(fields.into_map(), skip);
            odd.head = head;
            return Piece::Unreadable(odd);
        }
    };
    let text = match text {
        Some(text) if fields.readable() => text,
        text => return lenient(filter, fields, text, odd_body, issue),
    };
    if !filter.keeps(fields.login().unwrap_or("")) {
        // The body came before the poster: it was held for this element only.
        return Piece::Unreadable(skipped(fields.into_map(), Skip::Untrusted));
    }
    let mut comment = match fields.comment() {
        Ok(comment) => comment,
        Err(fields) => return lenient(filter, *fields, Some(text), odd_body, issue),
    };
    comment.body = text;
    keeping(comment, issue)
}

/// An element whose fields did not all come typed: decided as [`Comment::classify`] decides a
/// JSON object.
fn lenient(
    filter: &Filter,
    fields: Fields,
    text: Option<String>,
    odd_body: Option<Value>,
    issue: Option<u64>,
) -> Piece {
    let mut obj = fields.into_map();
    match (&text, odd_body) {
        (Some(_), _) => {
            obj.insert("body".into(), Value::String(String::new()));
        }
        (None, Some(v)) => {
            obj.insert("body".into(), v);
        }
        (None, None) => {}
    }
    let item = Value::Object(obj);
    let mut comment = match Comment::classify(&item) {
        Ok(c) => c,
        Err(odd) => return Piece::Unreadable(*odd),
    };
    let author = comment.user.as_ref().map_or("", |u| u.login.as_str());
    if !filter.keeps(author) {
        // The body came before the poster: it was held for this element only.
        let Value::Object(fields) = item else {
            return Piece::Nothing;
        };
        return Piece::Unreadable(skipped(fields, Skip::Untrusted));
    }
    comment.body = text.unwrap_or_default();
    keeping(comment, issue)
}

/// A readable comment to keep.
fn keeping(comment: Comment, issue: Option<u64>) -> Piece {
    Piece::Keep(Keep { comment, issue })
}

/// A comment skipped unread, or unkept.
fn skipped(fields: Map<String, Value>, skip: Skip) -> UnreadableComment {
    let mut odd = UnreadableComment::salvage(&Value::Object(fields));
    odd.reason = match skip {
        Skip::Untrusted => "posted by an author who is not trusted; skipped unread".into(),
        Skip::TooLarge { len, cap } => {
            format!("the body is {len} bytes, over the {cap}-byte cap; skipped")
        }
    };
    odd.skipped = Some(skip);
    tracing::trace!(comment = ?odd.id, "{}", odd.reason);
    odd
}

impl State<'_> {
    /// Files one element in its turn. `Err` when keeping it would pass the listing's cap (the
    /// state says so).
    pub(super) fn apply(&mut self, piece: Piece) -> Result<(), ()> {
        self.out.seen += 1;
        match piece {
            Piece::Nothing => Ok(()),
            Piece::Unreadable(odd) => {
                self.out.unreadable.push(odd);
                Ok(())
            }
            Piece::Keep(keep) => match self.keep(keep) {
                Ok(()) => Ok(()),
                Err(()) => {
                    self.over = true;
                    Err(())
                }
            },
        }
    }

    /// Keeps a readable comment, counting its body toward the listing's cap.
    fn keep(&mut self, keep: Keep) -> Result<(), ()> {
        let Keep { comment, issue } = keep;
        let len = comment.body.len();
        if self.filter.counts(issue) {
            self.kept = self.kept.saturating_add(len);
            if self.kept > self.filter.max_kept {
                return Err(());
            }
        } else if self.kept_other.saturating_add(len) > self.filter.max_kept {
            // Its issue's comments are read on their own, if it turns out to be a member.
            self.out.deferred.extend(issue);
            return Ok(());
        } else {
            self.kept_other += len;
        }
        let Some(digest) = &self.filter.digest else {
            self.out.comments.push(comment);
            return Ok(());
        };
        match super::handoff::hand(digest, comment) {
            Handed::Taken(taken) => self.out.taken.push(taken),
            Handed::Left(comment) => self.out.comments.push(comment),
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;
