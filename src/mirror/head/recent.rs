//! Header strings most records repeat (the format version, the agent, the session) shared
//! between the headers that name them, so a cold read of a long thread holds one copy of each,
//! not one a record (issue #44: a header's strings grew the read's memory with every comment).

use std::cell::RefCell;
use std::sync::Arc;

/// How many recent values of one field are remembered: a thread's records name a handful of
/// agents and sessions, mostly in runs.
const RECENT: usize = 8;

/// Which header field a string is: each has its own recent values.
#[derive(Clone, Copy)]
pub(super) enum Field {
    Version = 0,
    Agent = 1,
    Session = 2,
}

thread_local! {
    /// The newest values of each field seen on this thread, newest first. Bounded: a few short
    /// strings a thread, whatever is read.
    static SEEN: RefCell<[Vec<Arc<str>>; 3]> = const {
        RefCell::new([Vec::new(), Vec::new(), Vec::new()])
    };
}

/// `text` as a shared string: the copy a recent header of this thread already holds when it is
/// the same text, else a new one, remembered.
pub(super) fn shared(field: Field, text: String) -> Arc<str> {
    SEEN.with(|seen| {
        let Ok(mut seen) = seen.try_borrow_mut() else {
            return Arc::from(text);
        };
        let recent = &mut seen[field as usize];
        if let Some(at) = recent.iter().position(|s| **s == *text) {
            let found = recent.remove(at);
            recent.insert(0, found.clone());
            return found;
        }
        let made: Arc<str> = Arc::from(text);
        recent.truncate(RECENT - 1);
        recent.insert(0, made.clone());
        made
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_text_is_one_copy_and_other_fields_or_texts_are_not_mixed_up() {
        let a = shared(Field::Agent, "worker".into());
        let b = shared(Field::Agent, "worker".into());
        assert!(Arc::ptr_eq(&a, &b), "one copy of a repeated agent");
        let s = shared(Field::Session, "worker".into());
        assert_eq!(&*s, "worker");
        let other = shared(Field::Agent, "other".into());
        assert_eq!(&*other, "other");
        assert!(Arc::ptr_eq(&a, &shared(Field::Agent, "worker".into())));
    }

    #[test]
    fn only_a_few_values_are_remembered_and_each_comes_back_as_given() {
        let names: Vec<String> = (0..100).map(|i| format!("agent-{i}")).collect();
        for name in &names {
            assert_eq!(&*shared(Field::Agent, name.clone()), name.as_str());
        }
        SEEN.with(|seen| assert!(seen.borrow()[Field::Agent as usize].len() <= RECENT));
        // The oldest was forgotten: a new copy, with the same text.
        assert_eq!(&*shared(Field::Agent, names[0].clone()), "agent-0");
    }
}
