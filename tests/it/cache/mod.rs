//! The read cache: warm reads, the summary, private cache directories.

mod base_sums;
mod deleted;
mod discoveries;
mod privacy;
mod read_cache;
mod recreated_forge;
mod signed;
mod summary;
mod swapped_files;
mod token_switch;
mod unsynced;
mod warm_writes;

/// The read cache on, resynced hourly: every read after the first is warm for a test's length.
pub fn hourly() -> forgestate::mirror::ReadCache {
    forgestate::mirror::ReadCache {
        enabled: true,
        resync_after: std::time::Duration::from_secs(3600),
    }
}

/// A client over the fake as `token`, with its caches under `dir` and the read cache on.
pub fn cached_as(
    fake: &crate::fake_forge::FakeForge,
    token: &str,
    dir: &std::path::Path,
) -> forgestate::Client<forgestate::backend::AnyThread> {
    crate::fake_forge::client(fake, token, dir)
        .read_cache(hourly())
        .build()
        .unwrap()
}

/// [`cached_as`] with the read cache off: what the thread itself answers.
pub fn uncached_as(
    fake: &crate::fake_forge::FakeForge,
    token: &str,
    dir: &std::path::Path,
) -> forgestate::Client<forgestate::backend::AnyThread> {
    cached_as(fake, token, dir).without_read_cache()
}

/// [`cached_as`] the bot.
pub fn cached(
    fake: &crate::fake_forge::FakeForge,
    dir: &std::path::Path,
) -> forgestate::Client<forgestate::backend::AnyThread> {
    cached_as(fake, crate::fake_forge::BOT_TOKEN, dir)
}

/// [`uncached_as`] the bot.
pub fn uncached(
    fake: &crate::fake_forge::FakeForge,
    dir: &std::path::Path,
) -> forgestate::Client<forgestate::backend::AnyThread> {
    uncached_as(fake, crate::fake_forge::BOT_TOKEN, dir)
}

/// The read cache's delta file as its JSON text, without its checksum line.
pub fn delta_json(path: &std::path::Path) -> String {
    let text = String::from_utf8(std::fs::read(path).unwrap()).unwrap();
    let (sum, json) = text.split_once('\n').expect("a checksum line");
    assert_eq!(sum.len(), 64, "the delta starts with its checksum");
    json.to_string()
}

/// Writes `json` as the delta file at `path`, sealed with its checksum as forgestate seals it:
/// a test that plants a delta means it to be read.
pub fn write_delta_json(path: &std::path::Path, json: &str) {
    use sha2::Digest;
    let sum: String = sha2::Sha256::digest(json.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    std::fs::write(path, format!("{sum}\n{json}")).unwrap();
}
