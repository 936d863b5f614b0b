//! The progress hook long work reports through: start, each advance and one end, even when the
//! task is dropped early.

use std::sync::{Arc, Mutex};

use forgestate::progress::{ProgressHook, Step};

type Log = Arc<Mutex<Vec<(String, u64, Option<u64>, bool)>>>;

fn recording() -> (ProgressHook, Log) {
    let log: Log = Arc::default();
    let sink = Arc::clone(&log);
    let hook = ProgressHook::new(move |s: &Step<'_>| {
        sink.lock()
            .unwrap()
            .push((s.task.to_string(), s.done, s.total, s.finished));
    });
    (hook, log)
}

#[test]
fn a_task_reports_its_start_each_advance_and_its_end_once() {
    let (hook, log) = recording();
    {
        let mut task = hook.task("flushing", Some(3));
        task.advance(1);
        task.set_total(Some(4));
        task.advance(2);
    }
    let log = log.lock().unwrap().clone();
    let t = || "flushing".to_string();
    assert_eq!(
        log,
        vec![
            (t(), 0, Some(3), false),
            (t(), 1, Some(3), false),
            (t(), 3, Some(4), false),
            (t(), 3, Some(4), true),
        ]
    );
}

#[test]
fn a_task_dropped_early_still_reports_its_end() {
    let (hook, log) = recording();
    let stop = |hook: &ProgressHook| -> Result<(), ()> {
        let mut task = hook.task("syncing", None);
        task.advance(5);
        Err(())?;
        task.advance(5);
        Ok(())
    };
    assert!(stop(&hook).is_err());
    let last = log.lock().unwrap().last().cloned();
    assert_eq!(last, Some(("syncing".to_string(), 5, None, true)));
}

#[test]
fn the_silent_hook_reports_nothing_and_still_counts() {
    let hook = ProgressHook::default();
    assert!(hook.is_silent());
    let mut task = hook.task("x", None);
    task.advance(2);
    assert_eq!(task.done(), 2);
}
