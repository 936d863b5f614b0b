//! Rotation keeps the edit flag (issue #29 hole 3): a record whose comment was edited after
//! posting is carried with an `Edited-At:` line, so its copy on the new issue (a fresh, unedited
//! comment) is still flagged by `resume` and `list`, through a second rotation too.

use crate::fake_forge;

use fake_forge::{FakeForge, OPS_TOKEN, bot, session};
use forgestate::format::Record;
use forgestate::scan::Filter;
use serde_json::json;

const W: &str = "implementation-worker";

fn cp(phase: &str) -> Record {
    Record::checkpoint(W, "s1", phase, json!({"step": phase})).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_carried_copy_of_an_edited_record_is_still_flagged_as_edited() {
    let fake = FakeForge::start().await;
    let n = session(&fake);
    let dir = tempfile::tempdir().unwrap();
    let c = bot(&fake, dir.path());
    c.save(cp("clone_complete")).await.posted().unwrap();
    let other = Record::checkpoint(W, "s2", "clone_complete", json!({})).unwrap();
    c.save(other).await.posted().unwrap();
    let posted = c.save(cp("subtask_1_complete")).await.posted().unwrap();
    fake.age(600);
    let body = (fake.comments_on(n).into_iter())
        .find(|x| x.id == posted.comment_id)
        .unwrap()
        .body;
    let edited = body.replace("\"step\": \"subtask_1_complete\"", "\"step\": \"changed\"");
    assert_eq!(
        fake.edit_comment_as(OPS_TOKEN, posted.comment_id, &edited)
            .await,
        200
    );

    // (phase, edited) of each record read, sorted; the third is the record the head of the
    // first rotation gets before the second.
    let expected = [
        ("clone_complete".to_string(), false),
        ("clone_complete".to_string(), false),
        ("subtask_1_complete".to_string(), true),
    ];
    let mut issue = n;
    for round in 0..2 {
        // An hour on, a cold read of the new issue no longer reaches the older one's comments:
        // what it reads of the records is the copies.
        fake.age(3600);
        if round == 1 {
            // A rotation needs a record of the head's own beside the carried ones.
            let third = Record::checkpoint(W, "s3", "clone_complete", json!({})).unwrap();
            let writer = bot(&fake, tempfile::tempdir().unwrap().path());
            writer.save(third).await.posted().unwrap();
        }
        let rotation = bot(&fake, tempfile::tempdir().unwrap().path())
            .rotate()
            .await
            .unwrap();
        let to = rotation
            .to
            .unwrap_or_else(|| panic!("round {round}: {rotation:?}"));
        assert_ne!(to, issue);
        issue = to;
        let copies = fake.comments_on(issue);
        let copy = copies
            .iter()
            .find(|x| x.body.contains("Phase: subtask_1_complete"))
            .unwrap_or_else(|| panic!("round {round}: carried"));
        assert!(copy.body.contains("\nEdited-At: "), "{}", copy.body);
        assert!(
            copies
                .iter()
                .filter(|x| x.body.contains("Phase: clone_complete"))
                .all(|x| !x.body.contains("Edited-At:")),
            "an unedited record is carried clean"
        );

        let fresh = bot(&fake, tempfile::tempdir().unwrap().path());
        let listed = fresh.list(&Filter::default(), None).await.unwrap();
        let mut flags: Vec<(String, bool)> = listed
            .entries
            .iter()
            .map(|e| (e.record.phase().unwrap().to_string(), e.comment.edited))
            .collect();
        flags.sort();
        assert_eq!(flags, expected[1 - round..].to_vec(), "round {round}");
        let copy = (listed.entries.iter())
            .find(|e| e.record.phase() == Some("subtask_1_complete"))
            .unwrap();
        assert_eq!(copy.comment.issue, Some(issue), "the copy is what was read");
        let resumed = fresh.resume(W, "s1").await.unwrap();
        assert!(
            resumed
                .warnings
                .iter()
                .any(|w| w.contains("edited after posting")),
            "round {round}: {:?}",
            resumed.warnings
        );
    }
}
