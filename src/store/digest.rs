//! The reader's hook into a streaming listing ([`Digest`], handed over in [`super::Keep`]):
//! opaque to the store, which moves a body to it and knows nothing of what it makes.

/// A reader's hook into a listing as it streams: called with each kept comment's id and body as
/// the comment arrives, it may take the body (leaving it empty) once it has made what it needs of
/// it, so that the bodies of a long thread are never all held at once. The store knows nothing of
/// what the reader makes: it moves an opaque body to an opaque function. A comment whose body is
/// still there was not digested (a store that does not stream), and the reader reads it as usual.
#[derive(Clone)]
pub struct Digest(std::sync::Arc<DigestFn>);

/// The function inside a [`Digest`]: a comment's id and its body, which it may take.
type DigestFn = dyn Fn(u64, &mut String) + Send + Sync;

impl Digest {
    /// A digest calling `f` with each kept comment's id and body.
    pub fn new(f: impl Fn(u64, &mut String) + Send + Sync + 'static) -> Digest {
        Digest(std::sync::Arc::new(f))
    }

    /// Hands comment `id`'s body to the reader.
    pub fn apply(&self, id: u64, body: &mut String) {
        (self.0)(id, body)
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
