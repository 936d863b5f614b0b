//! A decoded comment handed to the reader's digest ([`crate::store::Digest`]) as it is decoded.
//! What the digest takes whole leaves behind only what the forge's list needs to place it: its
//! id, issue and time ([`Taken`]), so a cold read's list of a long thread holds 40 bytes a
//! comment.

use super::models::{Comment, Taken, User};
use crate::store::{self, Digest, issue_in_url};

/// What became of a comment handed to the digest.
#[derive(Debug, PartialEq)]
pub(super) enum Handed {
    /// Taken whole: what the list keeps of it.
    Taken(Taken),
    /// Left to the list, as it was but for what the digest took of it (its body).
    Left(Comment),
}

/// Hands `comment` to `digest`.
pub(super) fn hand(digest: &Digest, comment: Comment) -> Handed {
    let Comment {
        id,
        html_url,
        issue_url,
        user,
        body,
        created_at,
        updated_at,
    } = comment;
    // Where the forge's list finds the issue (`chain/read.rs`, `comment_issue`).
    let issue = match issue_url.is_empty() {
        true => issue_in_url(&html_url),
        false => issue_in_url(&issue_url),
    };
    let (poster, login) = match user {
        Some(User { id, login, created }) => (Some((id, created)), login),
        None => (None, String::new()),
    };
    let mut handed = store::Comment {
        id: id.0,
        author: login,
        created_at,
        updated_at,
        url: Some(html_url),
        body,
    };
    if digest.apply(&mut handed) {
        return Handed::Taken(Taken {
            id,
            issue,
            updated_at,
        });
    }
    let user = poster.map(|(id, created)| User {
        id,
        login: handed.author,
        created,
    });
    Handed::Left(Comment {
        id,
        html_url: handed.url.unwrap_or_default(),
        issue_url,
        user,
        body: handed.body,
        created_at,
        updated_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forge::models::CommentId;

    /// The issue the forge's list places a comment on (as `chain/read.rs` does).
    fn comment_issue(c: &Comment) -> Option<u64> {
        match c.issue_url.is_empty() {
            true => issue_in_url(&c.html_url),
            false => issue_in_url(&c.issue_url),
        }
    }

    fn comment(issue_url: &str) -> Comment {
        Comment {
            id: CommentId(7),
            html_url: "https://forge/o/r/issues/12#issuecomment-7".into(),
            issue_url: issue_url.into(),
            user: Some(User {
                id: 3,
                login: "ca-bot".into(),
                created: None,
            }),
            body: "[CHECKPOINT] one".into(),
            created_at: chrono::DateTime::UNIX_EPOCH,
            updated_at: chrono::DateTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn a_comment_taken_whole_keeps_its_id_and_issue_only() {
        let whole = Digest::whole(
            |c| {
                std::mem::take(&mut c.body);
                true
            },
            |_| {},
        );
        for issue_url in ["https://forge/o/r/issues/12", ""] {
            let want = Taken {
                id: CommentId(7),
                issue: comment_issue(&comment(issue_url)),
                updated_at: chrono::DateTime::UNIX_EPOCH,
            };
            assert_eq!(want.issue, Some(12));
            assert_eq!(hand(&whole, comment(issue_url)), Handed::Taken(want));
        }
    }

    #[test]
    fn a_comment_whose_body_alone_was_taken_keeps_the_rest() {
        let bodies = Digest::new(|_, body| body.clear());
        let left = hand(&bodies, comment("https://forge/o/r/issues/12"));
        let mut want = comment("https://forge/o/r/issues/12");
        want.body.clear();
        assert_eq!(left, Handed::Left(want));
    }
}
