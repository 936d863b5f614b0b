//! A decoded comment handed to the reader's digest ([`crate::store::Digest`]) as it is decoded.
//! What the digest takes whole leaves behind only what the forge's list needs to place it: its
//! id, times and issue (the address cut to its `/issues/N`), so a cold read's list of a long
//! thread holds no body, address or login per comment.

use super::models::{Comment, User};
use crate::store::{self, Digest, issue_in_url};

/// `comment` after `digest` saw it: as it was but for what the digest took.
pub(super) fn hand(digest: &Digest, comment: Comment) -> Comment {
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
    let whole = digest.apply(&mut handed);
    let user = poster.map(|(id, created)| User {
        id,
        login: handed.author,
        created,
    });
    let html_url = handed.url.unwrap_or_default();
    let (html_url, issue_url) = match issue {
        Some(n) if whole => (String::new(), format!("/issues/{n}")),
        _ => (html_url, issue_url),
    };
    Comment {
        id,
        html_url,
        issue_url,
        user,
        body: handed.body,
        created_at,
        updated_at,
    }
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
    fn a_comment_taken_whole_keeps_its_id_times_and_issue_only() {
        let whole = Digest::whole(|c| {
            std::mem::take(&mut c.body);
            std::mem::take(&mut c.author);
            c.url.take();
            true
        });
        for issue_url in ["https://forge/o/r/issues/12", ""] {
            let left = hand(&whole, comment(issue_url));
            assert_eq!(comment_issue(&left), Some(12), "{issue_url:?}");
            assert_eq!(
                (left.id, left.created_at),
                (CommentId(7), chrono::DateTime::UNIX_EPOCH)
            );
            assert!(left.body.is_empty() && left.html_url.is_empty());
            assert_eq!(left.user.map(|u| (u.id, u.login)), Some((3, String::new())));
        }
    }

    #[test]
    fn a_comment_whose_body_alone_was_taken_keeps_the_rest() {
        let bodies = Digest::new(|_, body| body.clear());
        let left = hand(&bodies, comment("https://forge/o/r/issues/12"));
        let mut want = comment("https://forge/o/r/issues/12");
        want.body.clear();
        assert_eq!(left, want);
    }
}
