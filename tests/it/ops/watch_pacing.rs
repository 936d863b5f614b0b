//! The watch's poll interval: the base while records arrive, doubling to a ceiling while idle.

use std::time::Duration;

use forgestate::client::watch::Pacer;

#[test]
fn the_interval_backs_off_while_idle_and_snaps_back_on_activity() {
    let s = Duration::from_secs;
    let mut p = Pacer::new(s(5), s(60));
    let mut waits = Vec::new();
    for _ in 0..6 {
        p.idle();
        waits.push(p.wait().as_secs());
    }
    assert_eq!(waits, [10, 20, 40, 60, 60, 60]);
    p.active();
    assert_eq!(p.wait(), s(5));
    let mut tight = Pacer::new(s(90), s(60));
    tight.idle();
    assert_eq!(tight.wait(), s(90), "the ceiling is never below the base");
}
