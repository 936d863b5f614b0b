//! File-system helpers shared by every writer: one atomic write, one private directory.
//!
//! The atomic-write contract: write a dot-named temp file in the target's directory, fsync it,
//! rename it over the target, then fsync the directory. A crash leaves the old file or the new
//! one, plus at worst a stray temp file that readers ignore (its name starts with a dot). Hints,
//! files a crash may lose (`write_hint`, `write_by_rename` without `durable`), skip the fsyncs.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` atomically. With `private`, the file is readable by its owner only.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8], private: bool) -> io::Result<()> {
    write_atomic_with(path, private, |w| w.write_all(bytes))
}

/// [`write_atomic`] of what `write` writes (buffered, and seekable: a writer may go back to
/// fill in a length), so a large file is never held whole.
pub(crate) fn write_atomic_with(
    path: &Path,
    private: bool,
    write: impl FnOnce(&mut io::BufWriter<File>) -> io::Result<()>,
) -> io::Result<()> {
    write_by_rename(path, private, true, write)
}

/// What `write` writes, to a temp file renamed over `path`; with `durable`, the temp file is
/// fsynced before the rename and the directory after it ([`write_atomic`]), else neither
/// ([`write_hint`]).
pub(crate) fn write_by_rename(
    path: &Path,
    private: bool,
    durable: bool,
    write: impl FnOnce(&mut io::BufWriter<File>) -> io::Result<()>,
) -> io::Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let tmp = temp_name(path);
    let result = (|| {
        // A large buffer: a mirror's base is megabytes of small writes (8 KiB would be a
        // system call every 8 KiB).
        let mut out = io::BufWriter::with_capacity(256 * 1024, new_file(&tmp, private)?);
        write(&mut out)?;
        let file = out.into_inner().map_err(|e| e.into_error())?;
        if durable {
            file.sync_all()?;
        }
        drop(file);
        std::fs::rename(&tmp, path)?;
        match durable {
            true => sync_dir(dir),
            false => Ok(()),
        }
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Writes `bytes` to `path` by rename, without fsync: for hints a crash may lose (the lineage
/// files of `client::known`), whose readers take a missing, empty or torn file as none. Readers
/// still never see half a file; what is saved is the two fsyncs per write (several ms each on a
/// virtual disk), which every checkpoint would pay.
pub(crate) fn write_hint(path: &Path, bytes: &[u8], private: bool) -> io::Result<()> {
    write_by_rename(path, private, false, |w| w.write_all(bytes))
}

/// A dot-named temp path beside `path`, unique within this machine.
fn temp_name(path: &Path) -> PathBuf {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".tmp-{}-{n}-{name}", std::process::id()))
}

/// Creates a new file (never an existing one); with `private`, mode 0600.
pub(crate) fn new_file(path: &Path, private: bool) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    if private {
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    }
    #[cfg(not(unix))]
    let _ = private;
    options.open(path)
}

/// Creates `dir` and its parents; the last component readable by its owner only (0700).
pub(crate) fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Reads a regular file of at most `cap` bytes without ever blocking on it: the file is opened
/// non-blocking (a FIFO or device would otherwise hang the open or the read), and its type and
/// size are checked on the opened handle, not on the path. A missing file is `NotFound`; anything
/// that is not a regular file is `InvalidData` ("is not a regular file"); so is a larger file.
/// A file owned by another user is `PermissionDenied` carrying [`NotOurs`]: nobody else's file
/// is state we act on.
pub(crate) fn read_regular(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    read_capped(open_regular(path, false)?, cap)
}

/// [`read_regular`] for a cache file: also refused (`PermissionDenied` carrying [`NotOurs`])
/// when anyone but its owner may write it, since they could have chosen what it says.
pub(crate) fn read_private(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    read_capped(open_private(path)?, cap)
}

/// Opens a file we may trust as a cache, without blocking: a regular file, ours, and writable by
/// no one else (see [`read_private`]).
pub(crate) fn open_private(path: &Path) -> io::Result<File> {
    open_regular(path, true)
}

fn open_regular(path: &Path, private: bool) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "is not a regular file",
        ));
    }
    if !owned_by_me(&meta) || (private && writable_by_others(&meta)) {
        return Err(io::Error::new(io::ErrorKind::PermissionDenied, NotOurs));
    }
    Ok(file)
}

fn read_capped(file: File, cap: u64) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let len = file.metadata()?.len();
    if len > cap {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("is {len} bytes, more than the {cap} allowed"),
        ));
    }
    let mut bytes = Vec::new();
    file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("grew past the {cap} bytes allowed while it was read"),
        ));
    }
    Ok(bytes)
}

/// Whether the group or others may write a file or directory.
pub(crate) fn writable_by_others(meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        meta.mode() & 0o022 != 0
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        false
    }
}

/// Why [`read_regular`] refused a file: another user owns it.
#[derive(Debug, thiserror::Error)]
#[error("is owned by another user, or writable by others")]
pub(crate) struct NotOurs;

impl NotOurs {
    /// Whether `e` is this refusal.
    pub(crate) fn is(e: &io::Error) -> bool {
        e.get_ref().is_some_and(|inner| inner.is::<NotOurs>())
    }
}

/// Whether a directory may hold state we act on: owned by the effective user and writable by
/// no one else. The error says what to do; `risk` completes "writable by others, so ...".
#[cfg(unix)]
pub(crate) fn check_private_dir(dir: &Path, risk: &str) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(dir)?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is owned by uid {}, not by you (uid {me}); use a directory of your own",
                dir.display(),
                meta.uid()
            ),
        ));
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is writable by others (mode {mode:o}), so {risk}; run `chmod 700 {}`",
                dir.display(),
                dir.display()
            ),
        ));
    }
    Ok(())
}

/// Whether a directory may hold state we act on (always, where there are no Unix owners).
#[cfg(not(unix))]
pub(crate) fn check_private_dir(_dir: &Path, _risk: &str) -> io::Result<()> {
    Ok(())
}

/// Whether an opened file belongs to the effective user (always, where there are no owners).
pub(crate) fn owned_by_me(meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid has no preconditions and cannot fail.
        meta.uid() == unsafe { libc::geteuid() }
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        true
    }
}

/// Creates `dir` private if it is missing, then checks it is private (an existing directory, or
/// one another account made first, may not be): where cache files are written.
pub(crate) fn make_private_dir(dir: &Path, risk: &str) -> io::Result<()> {
    create_private_dir(dir)?;
    check_private_dir(dir, risk)
}

/// Flushes a directory's entries to disk (best effort: not every platform can open a directory).
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    match File::open(dir) {
        Ok(d) => d.sync_all().or(Ok(())),
        Err(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_atomically_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.json");
        write_atomic(&path, b"one", true).unwrap();
        write_atomic(&path, b"two", true).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temp file is left behind");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("f");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_regular(&fifo, 10).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        let file = dir.path().join("g");
        std::fs::write(&file, b"0123456789x").unwrap();
        assert!(read_regular(&file, 10).is_err(), "over the cap");
        assert_eq!(read_regular(&file, 11).unwrap(), b"0123456789x");
    }

    #[test]
    fn a_failed_write_leaves_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing-dir").join("f");
        assert!(write_atomic(&path, b"x", false).is_err());
        assert!(!path.exists());
    }
}
