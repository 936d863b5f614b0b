//! Which boot of the machine wrote a mirror file, so the mirror can skip fsync and stay right.
//!
//! The mirror's files are written by rename without fsync (`fsutil::write_by_rename`) where the
//! machine names its boot (Linux: `/proc/sys/kernel/random/boot_id`), and stamped with it. Until
//! the machine stops, every reader sees a renamed file whole, as written (the page cache is the
//! file); only a crash of the machine can leave one torn, empty or stale, and a crash starts
//! another boot. So a file stamped with another boot is never read: it is rebuilt from the
//! thread, as a missing one is. Where the boot is unknown, files are written durably (fsynced)
//! and unstamped, as before; an unstamped file is read as it always was.

use std::sync::OnceLock;

/// Writes the mirror file `path` by rename, fsynced only where the boot is unknown, in a
/// private directory made first.
pub(super) fn write_file(
    path: &std::path::Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        crate::fsutil::create_private_dir(dir).map_err(|e| e.to_string())?;
    }
    crate::fsutil::write_by_rename(path, true, durable(), write).map_err(|e| e.to_string())
}

/// This boot's name, when the machine gives one.
pub(super) fn this() -> Option<&'static str> {
    static BOOT: OnceLock<Option<String>> = OnceLock::new();
    BOOT.get_or_init(read).as_deref()
}

#[cfg(target_os = "linux")]
fn read() -> Option<String> {
    let text = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let text = text.trim();
    // A UUID: anything else (an empty or odd file) is no name.
    (text.len() == 36 && text.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-'))
        .then(|| text.to_string())
}

#[cfg(not(target_os = "linux"))]
fn read() -> Option<String> {
    None
}

/// Whether a file stamped `stamp` may be read in this boot: unstamped (fsynced), or written
/// in this boot.
pub(super) fn readable(stamp: Option<&str>) -> bool {
    stamp.is_none_or(|s| this() == Some(s))
}

/// Whether writes are durable (fsynced): only where the boot is unknown.
pub(super) fn durable() -> bool {
    this().is_none()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_file_of_another_boot_is_not_readable_and_an_unstamped_one_is() {
        assert!(super::readable(None));
        assert!(!super::readable(Some("not-a-boot")));
        if let Some(boot) = super::this() {
            assert!(super::readable(Some(boot)));
            assert!(!super::durable());
        }
    }
}
