//! The reader's hook into a streaming listing ([`Digest`], handed over in [`super::Keep`]):
//! opaque to the store, which moves a comment to it and knows nothing of what it makes.

use chrono::{DateTime, Utc};

use super::Comment;

/// A reader's hook into a listing as it streams: called with each kept comment as the comment
/// arrives, it may take the body (leaving it empty) once it has made what it needs of it, so that
/// the bodies of a long thread are never all held at once; a digest made by [`Digest::whole`]
/// may take the whole comment (its author and address too), the store then keeping only what
/// it needs to place the comment. The store knows nothing of what the reader makes: it moves an
/// opaque comment to an opaque function. A comment whose body is still there was not digested (a
/// store that does not stream), and the reader reads it as usual.
///
/// A store that lets the digest take comments whole says, once the listing is made, which of
/// them it lists ([`Digest::listed`]): the others (another issue's, a list read again) are not
/// the reader's to use.
#[derive(Clone)]
pub struct Digest {
    take: std::sync::Arc<TakeFn>,
    listed: std::sync::Arc<ListedFn>,
    /// When the newest comment the listing holds of those taken whole last changed: the
    /// listing's next cursor counts it ([`super::internal`]'s `list_delta_since`).
    newest: std::sync::Arc<std::sync::Mutex<Option<DateTime<Utc>>>>,
}

/// What takes each comment in a [`Digest`]: it may take the comment; `true` when it took it
/// whole.
type TakeFn = dyn Fn(&mut Comment) -> bool + Send + Sync;

/// What a [`Digest`] is told of the comments it took whole that the listing holds, by id.
type ListedFn = dyn Fn(Vec<u64>) + Send + Sync;

impl Digest {
    /// A digest calling `f` with each kept comment's id and body.
    pub fn new(f: impl Fn(u64, &mut String) + Send + Sync + 'static) -> Digest {
        Digest {
            take: std::sync::Arc::new(move |c: &mut Comment| {
                f(c.id, &mut c.body);
                false
            }),
            listed: std::sync::Arc::new(|_| {}),
            newest: Default::default(),
        }
    }

    /// A digest calling `take` with each kept comment: it answers `true` when it took the
    /// comment whole (its body, author and address), so the store keeps only its id and place;
    /// `listed` is told which of those the listing holds.
    pub fn whole(
        take: impl Fn(&mut Comment) -> bool + Send + Sync + 'static,
        listed: impl Fn(Vec<u64>) + Send + Sync + 'static,
    ) -> Digest {
        Digest {
            take: std::sync::Arc::new(take),
            listed: std::sync::Arc::new(listed),
            newest: Default::default(),
        }
    }

    /// Hands a comment to the reader; `true` when it took it whole.
    pub fn apply(&self, comment: &mut Comment) -> bool {
        (self.take)(comment)
    }

    /// Tells the reader which comments it took whole the listing holds, by id, each once, and
    /// when the newest of them last changed.
    pub fn listed(&self, ids: Vec<u64>, newest: Option<DateTime<Utc>>) {
        if let Ok(mut at) = self.newest.lock() {
            *at = newest;
        }
        (self.listed)(ids)
    }

    /// When the newest comment [listed](Digest::listed) last changed.
    pub fn newest_listed(&self) -> Option<DateTime<Utc>> {
        self.newest.lock().ok().and_then(|at| *at)
    }
}

impl std::fmt::Debug for Digest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Digest(..)")
    }
}

impl PartialEq for Digest {
    fn eq(&self, other: &Digest) -> bool {
        std::sync::Arc::ptr_eq(&self.take, &other.take)
    }
}

impl Eq for Digest {}
