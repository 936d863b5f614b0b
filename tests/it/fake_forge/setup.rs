//! Setting the fake up for a test: clients built through the front door with short budgets,
//! and the repositories the tests start from.

use std::path::Path;
use std::time::Duration;

use forgestate::ForgeBuilder;
use forgestate::defaults::{DRAIN_MAX_BACKOFF_SECS, LABEL, TITLE};
use forgestate::durable::DrainPolicy;

use super::{FakeForge, OWNER, REPO};

/// The retry budget of [`client`]: long enough for a few backoffs (200 ms, 400 ms, ...), short
/// enough that a test which spends it all stays quick.
pub const RETRY_BUDGET: Duration = Duration::from_millis(1500);
/// The per-attempt timeout of quick probes in [`client`].
pub const QUICK_TIMEOUT: Duration = Duration::from_millis(300);
/// The wait budget of [`client`]: longer than any test.
pub const TEST_WAIT: Duration = Duration::from_secs(3600);
/// The whole-request timeout of [`client`].
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// A client builder over the fake, through the front door ([`forgestate::Client::forge`]): the
/// fake's URL, [`OWNER`]/[`REPO`], `token`, the session issue number cached in `dir/cache`, and
/// short budgets ([`RETRY_BUDGET`], [`QUICK_TIMEOUT`], [`REQUEST_TIMEOUT`], a one-second drain).
/// No outbox unless the test adds one (`.outbox(dir.join("outbox"))`): without one a failure is
/// an error, which is what most tests check. Finish with `.build()`.
pub fn client(fake: &FakeForge, token: &str, dir: &Path) -> ForgeBuilder {
    client_at(&fake.uri(), token, dir)
}

/// The bot's client over the fake ([`client`] with [`BOT_TOKEN`](super::BOT_TOKEN)), built.
pub fn bot(fake: &FakeForge, dir: &Path) -> forgestate::Client<forgestate::backend::AnyThread> {
    client(fake, super::BOT_TOKEN, dir)
        .build()
        .expect("the bot's client over the fake")
}

/// [`client`] for a forge at `url` (the fake behind a proxy, say). With
/// `FORGESTATE_TEST_READ_CACHE=off` in the test run's environment, the read cache is off, so the
/// whole suite can be run both ways.
pub fn client_at(url: &str, token: &str, dir: &Path) -> ForgeBuilder {
    // The fake's other accounts trust the bot, as a second bot account (or a person running
    // forgestate) that writes to the bot's thread is configured: only a trusted author's issue
    // is the session thread.
    let trusted: Vec<String> = match token == super::BOT_TOKEN {
        true => Vec::new(),
        false => vec!["ca-bot".to_string()],
    };
    client_trusting(url, token, dir).trusted_authors(trusted)
}

/// [`client_at`] trusting no one but the token's own account, whoever it is.
pub fn client_trusting(url: &str, token: &str, dir: &Path) -> ForgeBuilder {
    let cache = forgestate::mirror::ReadCache {
        enabled: std::env::var("FORGESTATE_TEST_READ_CACHE").as_deref() != Ok("off"),
        ..Default::default()
    };
    forgestate::Client::forge(url, OWNER, REPO)
        .read_cache(cache)
        .token(secrecy::SecretString::from(token))
        .cache_dir(dir.join("cache"))
        .timeouts(Duration::from_secs(1), REQUEST_TIMEOUT)
        .retry_budget(RETRY_BUDGET)
        // A wait budget no test reaches, so the per-request budgets above decide as they always
        // did (and no outage marker is left); tests/it/outage/ tests the wait itself.
        .wait(TEST_WAIT)
        .quick_timeout(QUICK_TIMEOUT)
        .drain(DrainPolicy {
            budget: Duration::from_secs(1),
            max_backoff: Duration::from_secs(DRAIN_MAX_BACKOFF_SECS),
        })
}

/// Twelve other automation issues, listed over pages of five; returns the automation label's id.
fn twelve_automation_issues(fake: &FakeForge) -> i64 {
    fake.state().max_response_items = 5;
    let label = fake.add_label(LABEL);
    for n in 0..12 {
        fake.add_issue(&format!("automation task {n}"), &[label], false);
    }
    label
}

/// [`twelve_automation_issues`] around two decoys with the session title: one open with another
/// label, one closed with the right label. Returns the automation label's id.
pub fn crowded_with_labelled_decoys(fake: &FakeForge) -> i64 {
    let label = twelve_automation_issues(fake);
    let other = fake.add_label("Kind/Bug");
    fake.add_issue(TITLE, &[other], false); // right title, wrong label
    fake.add_issue(TITLE, &[label], true); // closed: never used
    label
}

/// [`twelve_automation_issues`] plus one open decoy with the session title and no label at all.
pub fn crowded_with_unlabelled_decoy(fake: &FakeForge) {
    twelve_automation_issues(fake);
    fake.add_issue(TITLE, &[], false);
}

/// The session issue, labelled, with no comments yet; returns its number.
pub fn session(fake: &FakeForge) -> u64 {
    let label = fake.add_label(LABEL);
    fake.add_issue(TITLE, &[label], false)
}
