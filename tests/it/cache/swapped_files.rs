//! Two forges' cache files swapped under each other's names (a careless operator's copy, this
//! session's attack, hole 4): the issue-number file names the forge it was written for, so the
//! swapped one is not believed, and with it the read cache it vouched for; each forge's answers
//! stay its own.

use crate::fake_forge;
use fake_forge::{BOT_TOKEN, FakeForge, session};
use forgestate::format::Record;
use forgestate::scan::Filter;
use serde_json::json;
use std::path::Path;

/// The (agent, session, phase) of every record `list` answers for the forge at `url`.
async fn listed(url: &str, dir: &Path) -> Vec<(String, String, String)> {
    let client = fake_forge::client_trusting(url, BOT_TOKEN, dir)
        .build()
        .unwrap();
    let scan = client.list(&Filter::default(), None).await.unwrap();
    (scan.entries.iter())
        .map(|e| {
            let r = &e.record;
            (
                r.agent.clone(),
                r.session.clone(),
                r.phase().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn swapped_cache_files_never_answer_for_the_other_forge() {
    let (a, b) = (FakeForge::start().await, FakeForge::start().await);
    session(&a);
    session(&b);
    let dir = tempfile::tempdir().unwrap();
    for (fake, records) in [
        (&a, &[("w", "s", "A-only")][..]),
        (&b, &[("w", "s", "B-only"), ("x", "t", "B-x")][..]),
    ] {
        let client = fake_forge::client_trusting(&fake.uri(), BOT_TOKEN, dir.path())
            .build()
            .unwrap();
        for (agent, s, phase) in records {
            let record = Record::checkpoint(agent, s, phase, json!({})).unwrap();
            client.save(record).await.posted().unwrap();
        }
    }
    let (a_before, b_before) = (
        listed(&a.uri(), dir.path()).await,
        listed(&b.uri(), dir.path()).await,
    );
    assert_eq!(a_before.len(), 1);
    assert_eq!(b_before.len(), 2);

    // Swap every cache file of the two forges (issue number, base, delta, id index).
    let cache = dir.path().join("cache");
    let stem = |fake: &FakeForge| {
        let port = fake.uri().rsplit(':').next().unwrap().to_string();
        let names: Vec<String> = std::fs::read_dir(&cache)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(&format!("_{port}__")) && n.ends_with(".json"))
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        names[0].trim_end_matches(".json").to_string()
    };
    let (sa, sb) = (stem(&a), stem(&b));
    let mut swapped = 0;
    for ext in ["json", "mirror", "mirror-delta", "mirror-ids"] {
        let (pa, pb) = (
            cache.join(format!("{sa}.{ext}")),
            cache.join(format!("{sb}.{ext}")),
        );
        if pa.exists() && pb.exists() {
            let t = cache.join("swap");
            std::fs::rename(&pa, &t).unwrap();
            std::fs::rename(&pb, &pa).unwrap();
            std::fs::rename(&t, &pb).unwrap();
            swapped += 1;
        }
    }
    assert!(
        swapped >= 2,
        "the issue-number file and the base were swapped"
    );

    assert_eq!(listed(&a.uri(), dir.path()).await, a_before);
    assert_eq!(listed(&b.uri(), dir.path()).await, b_before);
}
