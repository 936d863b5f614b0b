//! The reader's hook into a streaming listing ([`Digest`], handed over in [`super::Keep`]):
//! opaque to the store, which moves a comment to it and knows nothing of what it makes.

use super::Comment;

/// A reader's hook into a listing as it streams: called with each kept comment as the comment
/// arrives, it may take the body (leaving it empty) once it has made what it needs of it, so that
/// the bodies of a long thread are never all held at once; a digest made by [`Digest::whole`]
/// may take the whole comment (its author and address too), the store then keeping only what
/// it needs to place the comment. The store knows nothing of what the reader makes: it moves an
/// opaque comment to an opaque function. A comment whose body is still there was not digested (a
/// store that does not stream), and the reader reads it as usual.
#[derive(Clone)]
pub struct Digest(std::sync::Arc<DigestFn>);

/// The function inside a [`Digest`]: a comment, which it may take; `true` when it took the
/// comment whole.
type DigestFn = dyn Fn(&mut Comment) -> bool + Send + Sync;

impl Digest {
    /// A digest calling `f` with each kept comment's id and body.
    pub fn new(f: impl Fn(u64, &mut String) + Send + Sync + 'static) -> Digest {
        Digest(std::sync::Arc::new(move |c: &mut Comment| {
            f(c.id, &mut c.body);
            false
        }))
    }

    /// A digest calling `f` with each kept comment: `f` answers `true` when it took the comment
    /// whole (its body, author and address), so the store keeps only its id, times and place.
    pub fn whole(f: impl Fn(&mut Comment) -> bool + Send + Sync + 'static) -> Digest {
        Digest(std::sync::Arc::new(f))
    }

    /// Hands a comment to the reader; `true` when it took it whole.
    pub fn apply(&self, comment: &mut Comment) -> bool {
        (self.0)(comment)
    }
}

impl std::fmt::Debug for Digest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Digest(..)")
    }
}

impl PartialEq for Digest {
    fn eq(&self, other: &Digest) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Digest {}
