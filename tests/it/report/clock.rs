//! One consistent clock for ages when the forge's `Date` and its comment times disagree.

use chrono::{Duration, Utc};
use forgestate::report::clock::{Clock, consistent};

#[test]
fn a_time_from_the_future_moves_now_up_and_a_small_skew_does_not() {
    let now = Utc::now();
    let c = consistent(now, now, Some(now + Duration::hours(2)));
    assert_eq!(c.now, now + Duration::hours(2));
    assert_eq!(c.ahead, Some(Duration::hours(2)));
    assert!(c.warning().unwrap().contains("2h behind"));
    let calm = |now| Clock {
        now,
        ahead: None,
        date_ahead: None,
    };
    for newest in [
        None,
        Some(now - Duration::hours(1)),
        Some(now + Duration::seconds(30)),
    ] {
        assert_eq!(consistent(now, now, newest), calm(now));
    }
    // The forge's clock and Date both behind this machine: Date is kept.
    let behind = now - Duration::hours(2);
    assert_eq!(
        consistent(behind, now, Some(behind - Duration::minutes(5))),
        calm(behind)
    );
}

#[test]
fn a_date_ahead_of_this_machine_and_of_every_stamp_is_not_believed() {
    let local = Utc::now();
    let date = local + Duration::hours(2);
    let posted = local - Duration::seconds(10);
    let c = consistent(date, local, Some(posted));
    assert_eq!(c.now, local, "ages on this machine's clock");
    assert_eq!(c.date_ahead, Some(Duration::hours(2)));
    assert_eq!(c.ahead, None);
    let w = c.warning().unwrap();
    assert!(w.contains("2h ahead of this machine's clock"), "{w}");
    let quiet = consistent(date, local, None);
    assert_eq!(
        (quiet.now, quiet.date_ahead),
        (local, Some(Duration::hours(2)))
    );
    // A stamp that runs ahead of this machine bears Date out: this machine is behind.
    let fresh = date - Duration::seconds(20);
    let c = consistent(date, local, Some(fresh));
    assert_eq!((c.now, c.ahead, c.date_ahead), (date, None, None));
    assert_eq!(c.warning(), None);
    // Date a little ahead (whole seconds, latency) is noise.
    let c = consistent(local + Duration::seconds(30), local, Some(posted));
    assert_eq!(c.date_ahead, None);
}
