//! Unit tests of the elements decoded on workers (`pool.rs`): whatever the workers finish first,
//! the list is filed in its order and decodes, or fails, as the whole answer's reader says; a
//! worker that panics fails the decode without a hang.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};

use super::super::pool::Plan;
use super::super::{Filter, Piece};
use super::slice;
use super::tests::{INLINE, Outcome, PLANS, answer, comment, split_by, trusting, whole};

/// Workers, a batch an element, and room for the whole list in flight.
fn workers(n: usize, work: super::super::pool::Work) -> Plan {
    Plan {
        workers: n,
        batch: 1,
        in_flight: 1 << 20,
        work,
    }
}

/// Decodes `text` by every plan and `extra`, all bytes at once and a few at a time, and asserts
/// each says what the whole answer's reader says.
fn same_by(text: &str, filter: &Filter, extra: &[Plan]) -> Outcome {
    let want = Outcome::of(whole(text.as_bytes(), filter));
    for plan in PLANS.iter().chain(extra) {
        for sizes in [&[1 << 20][..], &[1000, 7]] {
            let (got, _) = split_by(text.as_bytes(), sizes, filter, 1 << 20, *plan);
            assert_eq!(got, want, "{plan:?} by {sizes:?}");
        }
    }
    want
}

#[test]
fn the_list_is_filed_in_its_order_whichever_batch_is_made_first() {
    // Bodies of very different sizes, so the workers finish out of turn; another author's
    // comments in between (skipped), and a cap on other issues' bodies that defers one.
    let items: Vec<String> = (0..300u64)
        .map(|i| {
            let body = "x".repeat(if i % 7 == 0 { 20_000 } else { i as usize % 13 });
            comment(i, if i % 5 == 0 { "mallory" } else { "ca-bot" }, &body)
        })
        .collect();
    let (text, _) = answer(&items);
    let filter = trusting(&["ca-bot"], 1 << 20);
    let Outcome::List(list) = same_by(&text, &filter, &[workers(4, slice)]) else {
        panic!("not a list")
    };
    assert_eq!(list.seen, 300);
    assert_eq!(list.comments.len(), 240);
    let ids: Vec<u64> = list.comments.iter().map(|c| c.id.0).collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(ids, sorted, "filed in the list's order");
}

#[test]
fn kept_bodies_over_the_cap_fail_the_list_on_workers_too() {
    let items: Vec<String> = (0..50)
        .map(|i| comment(i, "ca-bot", "0123456789"))
        .collect();
    let (text, _) = answer(&items);
    let mut filter = Filter::all();
    filter.max_kept = 245;
    assert_eq!(
        same_by(&text, &filter, &[workers(2, slice)]),
        Outcome::OverCap
    );
}

/// Set once the element marked `late-broken` has been decoded.
static LATE_DONE: AtomicBool = AtomicBool::new(false);

/// [`slice`], but the element marked `early-slow` waits until the one marked `late-broken` has
/// been decoded by another worker (or a while has passed, so a broken test cannot hang).
fn early_waits_for_late(
    bytes: &[u8],
    closed: bool,
    filter: &Filter,
    deferred: Option<&BTreeSet<u64>>,
) -> Option<Piece> {
    let text = String::from_utf8_lossy(bytes);
    if text.contains("early-slow") {
        for _ in 0..20_000 {
            if LATE_DONE.load(Ordering::SeqCst) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
    let piece = slice(bytes, closed, filter, deferred);
    if text.contains("late-broken") {
        LATE_DONE.store(true, Ordering::SeqCst);
    }
    piece
}

#[test]
fn the_first_error_in_list_order_wins_though_a_later_batch_fails_first() {
    let mut items: Vec<String> = (0..40).map(|i| comment(i, "ca-bot", "fine")).collect();
    // Element 5 is slow to decode and, in one case, broken (`"a" "b"`: no comma); element 30 is
    // broken and decoded first.
    let slow = comment(5, "ca-bot", "early-slow");
    let broken_slow = slow.replacen(r#""body":"#, r#""x":"a" "b","body":"#, 1);
    items[30] = comment(30, "ca-bot", "late-broken").replacen(r#""id":30"#, r#""id":30 31"#, 1);
    for early in [slow, broken_slow] {
        items[5] = early.clone();
        let text = format!("[{}]", items.join(","));
        let want = Outcome::of(whole(text.as_bytes(), &Filter::all()));
        let Outcome::Error(e) = &want else {
            panic!("a broken list: {want:?}")
        };
        // The whole answer's reader stops at the first broken element.
        let column: usize = (e.rsplit("column ").next())
            .and_then(|c| c.parse().ok())
            .unwrap_or(0);
        let late = text.find("late-broken").unwrap_or(0);
        let first = if early.contains("\"x\"") {
            column < late
        } else {
            column > late
        };
        assert!(first, "{e}");
        LATE_DONE.store(false, Ordering::SeqCst);
        let plan = workers(3, early_waits_for_late);
        let (got, _) = split_by(text.as_bytes(), &[1 << 20], &Filter::all(), 1 << 20, plan);
        assert_eq!(got, want);
        assert!(
            LATE_DONE.load(Ordering::SeqCst),
            "the later one was decoded"
        );
    }
}

/// [`slice`], panicking on the element whose body is `boom` (or on every element).
fn boom(
    bytes: &[u8],
    closed: bool,
    filter: &Filter,
    deferred: Option<&BTreeSet<u64>>,
) -> Option<Piece> {
    let text = String::from_utf8_lossy(bytes);
    if text.contains("\"boom\"") || text.contains("\"all-boom\"") {
        panic!("a worker's bug");
    }
    slice(bytes, closed, filter, deferred)
}

#[test]
fn a_worker_that_panics_fails_the_decode_and_never_hangs_it() {
    for (bodies, batch) in [
        (&["fine", "boom"][..], 1),
        (&["all-boom"], 1),
        (&["boom"], 600),
    ] {
        let items: Vec<String> = (0..60)
            .map(|i| comment(i, "ca-bot", bodies[i as usize % bodies.len()]))
            .collect();
        let (text, _) = answer(&items);
        for workers in [2, 4] {
            let plan = Plan {
                workers,
                batch,
                in_flight: 2000,
                work: boom,
            };
            let (got, _) = split_by(text.as_bytes(), &[1 << 20], &Filter::all(), 1 << 20, plan);
            assert_eq!(
                got,
                Outcome::Error("a thread decoding the list stopped".into()),
                "{bodies:?} on {workers}"
            );
        }
    }
}

#[test]
fn below_four_cores_decodes_in_turn_and_more_take_four_workers_at_most() {
    let of = |cores| Plan::for_cores(cores, slice).workers;
    assert_eq!(of(1), 0);
    assert_eq!(of(2), 0);
    assert_eq!(of(3), 0);
    assert_eq!(of(4), 4);
    assert_eq!(of(64), 4);
    // In turn, no thread: as the whole answer's reader says (the other tests run it too).
    let items: Vec<String> = (0..20).map(|i| comment(i, "ca-bot", "mine")).collect();
    let (text, _) = answer(&items);
    let (got, split) = split_by(text.as_bytes(), &[3], &Filter::all(), 1 << 20, INLINE);
    assert_eq!(got, Outcome::of(whole(text.as_bytes(), &Filter::all())));
    assert_eq!(split.sliced, 20);
}

#[test]
fn a_huge_skipped_element_among_batches_is_passed_over_and_the_rest_filed_in_order() {
    let huge = "\\\"x]}".repeat(1 << 19);
    let mut items: Vec<String> = (0..200).map(|i| comment(i, "ca-bot", "mine")).collect();
    items[120] = comment(120, "mallory", &huge);
    let (text, _) = answer(&items);
    let filter = trusting(&["ca-bot"], 1 << 20);
    let want = Outcome::of(whole(text.as_bytes(), &filter));
    let hold = 64 * 1024;
    for plan in [workers(2, slice), workers(3, slice)] {
        for sizes in [&[1 << 20][..], &[16 * 1024, 3, 1000]] {
            let (got, split) = split_by(text.as_bytes(), sizes, &filter, hold, plan);
            assert_eq!(got, want);
            assert_eq!(split.sliced, 199, "every other element on the workers");
            // What was in flight before it was filed before it was read on.
            let bound = hold + 2 * super::super::source::READ + plan.in_flight;
            assert!(split.peak <= bound, "held {} bytes", split.peak);
        }
    }
    let Outcome::List(list) = want else {
        panic!("not a list")
    };
    assert_eq!(list.comments.len(), 199);
}

#[test]
fn a_list_cut_short_on_workers_is_the_whole_answer_s_error() {
    let items: Vec<String> = (0..30).map(|i| comment(i, "ca-bot", "mine")).collect();
    let (text, _) = answer(&items);
    for cut in (0..text.len()).step_by(97).chain([text.len() - 1]) {
        let out = same_by(&text[..cut], &Filter::all(), &[workers(2, slice)]);
        assert!(matches!(out, Outcome::Error(_)), "cut at {cut}: {out:?}");
    }
}
