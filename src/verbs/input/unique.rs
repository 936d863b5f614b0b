//! A key given twice in one JSON object (`{"a": 1, "a": 2}`): serde_json keeps the last value
//! and drops the other without a word, so a request that says two things is refused instead.
//! Every face checks its JSON text here (the CLI's `--data`, MCP's line gate). Pure.

use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};

/// Where a key is repeated: the key, and the path of the object that holds it (`x.y[2]`, empty
/// for the top-level object).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repeated {
    /// The key given twice.
    pub key: String,
    /// The object holding it, as `a.b[0]`; empty at the top.
    pub at: String,
}

impl Repeated {
    /// `what has the key "a" twice (in x.y[0]); ...`, naming the JSON as `what`.
    pub fn describe(&self, what: &str) -> String {
        let place = match self.at.is_empty() {
            true => String::new(),
            false => format!(" (in {})", self.at),
        };
        format!(
            "{what} has the key {:?} twice{place}; JSON with a repeated key is ambiguous (one \
             value would be dropped without a word), so give each key once",
            self.key
        )
    }
}

/// The first key given twice in one object of the JSON `text`, if any. Text that is not JSON
/// (or nests past serde_json's limit) has no repeated key here: parsing it reports that.
pub fn repeated_key(text: &str) -> Option<Repeated> {
    let found = RefCell::new(None);
    let mut path = Vec::new();
    let mut de = serde_json::Deserializer::from_str(text);
    let seed = Check {
        path: &mut path,
        found: &found,
    };
    let _ = seed.deserialize(&mut de);
    found.into_inner()
}

/// One step of the path to a value.
enum Step {
    Key(String),
    Index(usize),
}

fn render(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(k) if !out.is_empty() => {
                out.push('.');
                out.push_str(k);
            }
            Step::Key(k) => out.push_str(k),
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// Walks one value, checking every object in it; stops at the first repeated key.
struct Check<'a> {
    path: &'a mut Vec<Step>,
    found: &'a RefCell<Option<Repeated>>,
}

impl<'de> DeserializeSeed<'de> for Check<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Check<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut i = 0;
        loop {
            self.path.push(Step::Index(i));
            let next = seq.next_element_seed(Check {
                path: &mut *self.path,
                found: self.found,
            });
            self.path.pop();
            if next?.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if keys.contains(&key) {
                *self.found.borrow_mut() = Some(Repeated {
                    key,
                    at: render(self.path),
                });
                return Err(A::Error::custom("a repeated key"));
            }
            self.path.push(Step::Key(key.clone()));
            let value = map.next_value_seed(Check {
                path: &mut *self.path,
                found: self.found,
            });
            self.path.pop();
            value?;
            keys.insert(key);
        }
        Ok(())
    }
}
