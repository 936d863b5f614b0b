//! A comment's `body` as the streaming decoder reads it: kept when it is a string within the
//! cap, measured and dropped when over it, kept as it is (for the reason it gives) otherwise.

use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::NUMBER_TOKEN;
use crate::store::Skip;

/// What became of an element's `body`.
pub(super) enum Body {
    /// No `body` key.
    Missing,
    /// A string within the cap.
    Kept(String),
    /// Not a string: kept as it is, for the reason it gives.
    Odd(Value),
    /// Dropped unread or unkept, with the beginning of a body dropped as too large.
    Skipped(Skip, Option<String>),
    /// On an issue the filter drops: skipped unread, and the comment with it.
    Dropped,
}

/// Reads a body: a string is kept when within the cap, else only measured.
pub(super) struct BodySeed(pub usize);

impl<'de> DeserializeSeed<'de> for BodySeed {
    type Value = Body;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Body, D::Error> {
        d.deserialize_any(self)
    }
}

impl BodySeed {
    fn string(self, s: &str) -> Body {
        if s.len() > self.0 {
            Body::Skipped(
                Skip::TooLarge {
                    len: s.len(),
                    cap: self.0,
                },
                Some(crate::store::body_head(s)),
            )
        } else {
            Body::Kept(s.to_string())
        }
    }
}

impl<'de> Visitor<'de> for BodySeed {
    type Value = Body;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a comment body")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Body, E> {
        Ok(self.string(s))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Body, E> {
        if s.len() > self.0 {
            return Ok(self.string(&s));
        }
        Ok(Body::Kept(s))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Body, E> {
        Ok(Body::Odd(Value::Null))
    }

    fn visit_none<E: de::Error>(self) -> Result<Body, E> {
        self.visit_unit()
    }

    odd_scalars!(Body, |_, v| Body::Odd(v));

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Body, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Body::Odd(Value::Array(Vec::new())))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Body, A::Error> {
        // A number, under `arbitrary_precision`, or an object: either way not a string.
        let mut obj = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == NUMBER_TOKEN {
                let n: String = map.next_value()?;
                let n = n
                    .parse::<serde_json::Number>()
                    .map_or(Value::Null, Value::Number);
                return Ok(Body::Odd(n));
            }
            map.next_value::<IgnoredAny>()?;
            obj.insert(key, Value::Null);
        }
        Ok(Body::Odd(Value::Object(obj)))
    }
}
