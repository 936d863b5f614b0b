//! Two comments holding one record `Id` that say different things: the first counts (the
//! dedupe rule), and readers are told, naming both comments, since the later one may be the
//! record a person's edit of the earlier one displaced. An exact copy stays silent.

use super::{Rejected, Rejection};
use crate::format::{Kind, Record};

/// The kind and agent of `copy`, a later comment's record with `first`'s identity, when it
/// says something other than `first` ([`Record::says_the_same`]).
pub(crate) fn differs(first: &Record, copy: &Record) -> Option<(Kind, String)> {
    (!first.says_the_same(copy)).then(|| (copy.kind(), copy.agent.clone()))
}

/// One warning for each [`Rejection::Conflict`] among `rejected`, naming both comments.
pub fn conflict_warnings(rejected: &[Rejected]) -> impl Iterator<Item = String> + '_ {
    rejected.iter().filter_map(|r| {
        let Rejection::Conflict {
            record_id,
            first_comment,
        } = &r.code
        else {
            return None;
        };
        let which = match r.comment.id {
            Some(id) => format!("comment {id}"),
            None => "a comment".to_string(),
        };
        let whose = match &r.marker {
            Some((kind, agent)) => format!(" ({} {agent})", kind.name()),
            None => String::new(),
        };
        Some(format!(
            "comment {first_comment} and {which}{whose} both hold record {record_id} but say \
             different things: one of them was edited after posting (an `Id:` line changed?); \
             comment {first_comment} is read, {which} is not — see `list --invalid`"
        ))
    })
}
