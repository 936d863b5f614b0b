//! Header strings most records repeat (the format version, the agent, the session, a
//! checkpoint's phase, a health report's status) shared
//! between the headers that name them, so a cold read of a long thread holds one copy of each,
//! not one a record (issue #44: a header's strings grew the read's memory with every comment).

use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::Arc;

/// How many values of one field are remembered before they are all forgotten: a thread's
/// records name a few dozen agents and sessions, taking turns.
const KNOWN: usize = 1024;

/// Which header field a string is: each has its own known values.
#[derive(Clone, Copy)]
pub(super) enum Field {
    Version = 0,
    Agent = 1,
    Session = 2,
    /// A checkpoint's phase.
    Phase = 3,
    /// A health report's status.
    Status = 4,
}

thread_local! {
    /// The values of each field seen on this thread. Bounded: at most [`KNOWN`] short strings a
    /// field, whatever is read.
    static SEEN: RefCell<[HashSet<Arc<str>>; 5]> = RefCell::new(Default::default());
}

/// `text` as a shared string: the copy a header of this thread already holds when it is the
/// same text, else a new one, remembered.
pub(super) fn shared(field: Field, text: String) -> Arc<str> {
    SEEN.with(|seen| {
        let Ok(mut seen) = seen.try_borrow_mut() else {
            return text.into();
        };
        let known = &mut seen[field as usize];
        if let Some(found) = known.get(text.as_str()) {
            return found.clone();
        }
        if known.len() >= KNOWN {
            known.clear();
            known.shrink_to_fit();
        }
        let made: Arc<str> = text.into();
        known.insert(made.clone());
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
        assert!(!Arc::ptr_eq(&a, &s), "each field keeps its own");
        let other = shared(Field::Agent, "other".into());
        assert_eq!(&*other, "other");
        assert!(Arc::ptr_eq(&a, &shared(Field::Agent, "worker".into())));
    }

    #[test]
    fn only_so_many_values_are_remembered_and_each_comes_back_as_given() {
        let names: Vec<String> = (0..3000).map(|i| format!("agent-{i}")).collect();
        for name in &names {
            assert_eq!(&*shared(Field::Agent, name.clone()), name.as_str());
        }
        SEEN.with(|seen| assert!(seen.borrow()[Field::Agent as usize].len() <= KNOWN));
        for name in &names {
            assert_eq!(&*shared(Field::Agent, name.clone()), name.as_str());
        }
    }
}
