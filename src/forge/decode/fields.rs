//! The fields of a comment element that forgestate reads, each decoded typed straight from the
//! bytes (no field map, no JSON value per comment), or kept as a JSON value when it has another
//! shape, so the lenient path ([`Comment::classify`]) words the element exactly as it always did.
//!
//! Every seed here accepts any JSON value: a field of an odd type never stops the stream (an
//! error from serde_json mid-element would end the whole list), it only makes its element take
//! the lenient path.

use std::fmt;
use std::marker::PhantomData;

use chrono::{DateTime, FixedOffset, Utc};
use serde::de::value::SeqAccessDeserializer;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::NUMBER_TOKEN;
use crate::forge::models::{Comment, CommentId, User};

/// A field as read: of the expected type, or whatever it was instead.
pub(super) enum Got<T> {
    /// The expected type.
    Ok(T),
    /// Another shape, kept for the lenient path's reason.
    Odd(Value),
}

impl<T> Got<T> {
    fn ok(&self) -> Option<&T> {
        match self {
            Got::Ok(t) => Some(t),
            Got::Odd(_) => None,
        }
    }
}

/// A field's expected type, read from a JSON scalar.
pub(super) trait Scalar: Sized {
    /// From a JSON string.
    fn from_str(_: &str) -> Option<Self> {
        None
    }
    /// From a JSON number, given as its text (serde_json's `arbitrary_precision`).
    fn from_number(_: &str) -> Option<Self> {
        None
    }
    /// From a JSON number that is a `u64`: what [`Scalar::from_number`] makes of its text.
    fn from_u64(_: u64) -> Option<Self> {
        None
    }
    /// From `null`.
    fn from_null() -> Option<Self> {
        None
    }
}

impl Scalar for u64 {
    fn from_u64(n: u64) -> Option<u64> {
        Some(n)
    }
    fn from_number(text: &str) -> Option<u64> {
        // As serde reads a `u64` from a JSON value: an integer, or a non-negative `i64`.
        text.parse::<u64>()
            .ok()
            .or_else(|| text.parse::<i64>().ok().and_then(|n| u64::try_from(n).ok()))
    }
}

impl Scalar for i64 {
    fn from_u64(n: u64) -> Option<i64> {
        i64::try_from(n).ok()
    }
    fn from_number(text: &str) -> Option<i64> {
        text.parse::<i64>()
            .ok()
            .or_else(|| text.parse::<u64>().ok().and_then(|n| i64::try_from(n).ok()))
    }
}

impl Scalar for String {
    fn from_str(s: &str) -> Option<String> {
        Some(s.to_owned())
    }
}

impl Scalar for DateTime<Utc> {
    fn from_str(s: &str) -> Option<DateTime<Utc>> {
        // What chrono's `Deserialize` accepts; the shape Forgejo writes read on a short path.
        plain_time(s).or_else(|| {
            s.parse::<DateTime<FixedOffset>>()
                .ok()
                .map(|t| t.with_timezone(&Utc))
        })
    }
}

/// A time written exactly `YYYY-MM-DDTHH:MM:SS` then `Z` or `±HH:MM` (no fraction, no leap
/// second, an offset under a day), read without chrono's general parser: the time chrono reads
/// from it. `None` for any other text, which chrono's parser then decides.
fn plain_time(s: &str) -> Option<DateTime<Utc>> {
    use chrono::{NaiveDate, NaiveDateTime, NaiveTime, TimeZone};
    let b = s.as_bytes();
    let digits = |from: usize, len: usize| -> Option<u32> {
        b.get(from..from + len)?.iter().try_fold(0, |n, &d| {
            d.is_ascii_digit().then(|| n * 10 + u32::from(d - b'0'))
        })
    };
    let at = |i: usize, c: u8| b.get(i) == Some(&c);
    if !(at(4, b'-') && at(7, b'-') && at(10, b'T') && at(13, b':') && at(16, b':')) {
        return None;
    }
    let offset = match b.get(19..)? {
        b"Z" => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (hours, minutes) = (digits(20, 2)?, digits(23, 2)?);
            if hours > 23 || minutes > 59 {
                return None;
            }
            let secs = i32::try_from(hours * 3600 + minutes * 60).ok()?;
            if *sign == b'-' { -secs } else { secs }
        }
        _ => return None,
    };
    let year = i32::try_from(digits(0, 4)?).ok()?;
    let date = NaiveDate::from_ymd_opt(year, digits(5, 2)?, digits(8, 2)?)?;
    let time = NaiveTime::from_hms_opt(digits(11, 2)?, digits(14, 2)?, digits(17, 2)?)?;
    FixedOffset::east_opt(offset)?
        .from_local_datetime(&NaiveDateTime::new(date, time))
        .single()
        .map(|t| t.with_timezone(&Utc))
}

impl Scalar for Option<DateTime<Utc>> {
    fn from_str(s: &str) -> Option<Self> {
        DateTime::<Utc>::from_str(s).map(Some)
    }
    fn from_null() -> Option<Self> {
        Some(None)
    }
}

/// Reads one field as a `T` when it is one, else as a JSON value.
pub(super) struct Want<T>(PhantomData<T>);

impl<T> Want<T> {
    pub fn new() -> Want<T> {
        Want(PhantomData)
    }
}

impl<'de, T: Scalar> DeserializeSeed<'de> for Want<T> {
    type Value = Got<T>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Got<T>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<T: Scalar> Want<T> {
    fn number(text: &str) -> Got<T> {
        match T::from_number(text) {
            Some(t) => Got::Ok(t),
            None => Got::Odd(
                text.parse::<serde_json::Number>()
                    .map_or(Value::Null, Value::Number),
            ),
        }
    }
}

impl<'de, T: Scalar> Visitor<'de> for Want<T> {
    type Value = Got<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Got<T>, E> {
        Ok(T::from_str(s).map_or_else(|| Got::Odd(Value::String(s.to_owned())), Got::Ok))
    }

    odd_scalars!(Got<T>, |_, v| Got::Odd(v); visit_bool(bool), visit_f64(f64));

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Got<T>, E> {
        Ok(Want::number(&n.to_string()))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Got<T>, E> {
        // An id, on every comment: no text made of it when it is what is wanted.
        match T::from_u64(n) {
            Some(t) => Ok(Got::Ok(t)),
            None => Ok(Want::number(&n.to_string())),
        }
    }

    fn visit_unit<E: de::Error>(self) -> Result<Got<T>, E> {
        Ok(T::from_null().map_or(Got::Odd(Value::Null), Got::Ok))
    }

    fn visit_none<E: de::Error>(self) -> Result<Got<T>, E> {
        self.visit_unit()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Got<T>, A::Error> {
        Ok(Got::Odd(Value::deserialize(SeqAccessDeserializer::new(
            seq,
        ))?))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Got<T>, A::Error> {
        // A number, under `arbitrary_precision`, or an object.
        match map.next_key_seed(Name(FirstKey::of))? {
            None => Ok(Got::Odd(Value::Object(Map::new()))),
            Some(FirstKey::Number) => Ok(map.next_value_seed(NumberText(PhantomData::<T>))?),
            Some(FirstKey::Name(key)) => Ok(Got::Odd(rest_of_object(key, map)?)),
        }
    }
}

/// The text of a number under `arbitrary_precision`, read as a `T`.
struct NumberText<T>(PhantomData<T>);

impl<'de, T: Scalar> DeserializeSeed<'de> for NumberText<T> {
    type Value = Got<T>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Got<T>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de, T: Scalar> Visitor<'de> for NumberText<T> {
    type Value = Got<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a number")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Got<T>, E> {
        Ok(Want::<T>::number(s))
    }
}

/// A field name, read without a copy and told apart by its function.
pub(super) struct Name<K>(pub fn(&str) -> K);

impl<'de, K> DeserializeSeed<'de> for Name<K> {
    type Value = K;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<K, D::Error> {
        d.deserialize_str(self)
    }
}

impl<K> Visitor<'_> for Name<K> {
    type Value = K;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<K, E> {
        Ok((self.0)(s))
    }
}

/// The first key of a map: serde_json's number token, or a name.
enum FirstKey {
    Number,
    Name(String),
}

impl FirstKey {
    fn of(s: &str) -> FirstKey {
        match s {
            NUMBER_TOKEN => FirstKey::Number,
            _ => FirstKey::Name(s.to_owned()),
        }
    }
}

/// An object whose first key was read already, as a JSON value.
fn rest_of_object<'de, A: MapAccess<'de>>(first: String, mut map: A) -> Result<Value, A::Error> {
    let mut obj = Map::new();
    obj.insert(first, map.next_value::<Value>()?);
    while let Some((k, v)) = map.next_entry::<String, Value>()? {
        obj.insert(k, v);
    }
    Ok(Value::Object(obj))
}

/// The keys of a comment element that forgestate reads.
pub(super) enum Key {
    Id,
    HtmlUrl,
    IssueUrl,
    User,
    Body,
    CreatedAt,
    UpdatedAt,
    /// The element is a number (under `arbitrary_precision`).
    Number,
    Other,
}

impl Key {
    pub fn of(s: &str) -> Key {
        match s {
            "id" => Key::Id,
            "html_url" => Key::HtmlUrl,
            "issue_url" => Key::IssueUrl,
            "user" => Key::User,
            "body" => Key::Body,
            "created_at" => Key::CreatedAt,
            "updated_at" => Key::UpdatedAt,
            NUMBER_TOKEN => Key::Number,
            _ => Key::Other,
        }
    }
}

/// Reads a comment's `user`: a poster, `null`, or something else.
pub(super) struct UserSeed;

impl<'de> DeserializeSeed<'de> for UserSeed {
    type Value = Got<Option<User>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

/// The keys of a poster that forgestate reads.
enum UserKey {
    Id,
    Login,
    Created,
    Number,
    Other,
}

impl UserKey {
    fn of(s: &str) -> UserKey {
        match s {
            "id" => UserKey::Id,
            "login" => UserKey::Login,
            "created" => UserKey::Created,
            NUMBER_TOKEN => UserKey::Number,
            _ => UserKey::Other,
        }
    }
}

impl<'de> Visitor<'de> for UserSeed {
    type Value = Got<Option<User>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Got::Ok(None))
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        self.visit_unit()
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut id: Option<Got<i64>> = None;
        let mut login: Option<Got<String>> = None;
        let mut created: Option<Got<Option<DateTime<Utc>>>> = None;
        while let Some(key) = map.next_key_seed(Name(UserKey::of))? {
            match key {
                UserKey::Id => id = Some(map.next_value_seed(Want::new())?),
                UserKey::Login => login = Some(map.next_value_seed(Want::new())?),
                UserKey::Created => created = Some(map.next_value_seed(Want::new())?),
                UserKey::Number => {
                    let n = map.next_value_seed(NumberText(PhantomData::<i64>))?;
                    return Ok(Got::Odd(into_value(n, Value::from)));
                }
                UserKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if let (Some(Got::Ok(id)), Some(Got::Ok(login))) = (&id, &login) {
            let created = match &created {
                None => Some(None),
                Some(Got::Ok(c)) => Some(*c),
                Some(Got::Odd(_)) => None,
            };
            if let Some(created) = created {
                return Ok(Got::Ok(Some(User {
                    id: *id,
                    login: login.clone(),
                    created,
                })));
            }
        }
        // Only the fields a `User` reads: the others never change what it says of one.
        let mut obj = Map::new();
        if let Some(id) = id {
            obj.insert("id".into(), into_value(id, Value::from));
        }
        if let Some(login) = login {
            obj.insert("login".into(), into_value(login, Value::String));
        }
        if let Some(created) = created {
            obj.insert(
                "created".into(),
                into_value(created, |c| time_value(c.as_ref())),
            );
        }
        Ok(Got::Odd(Value::Object(obj)))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(Got::Odd(Value::String(s.to_owned())))
    }

    odd_scalars!(Got<Option<User>>, |_, v| Got::Odd(v));

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Ok(Got::Odd(Value::deserialize(SeqAccessDeserializer::new(
            seq,
        ))?))
    }
}

fn into_value<T>(got: Got<T>, f: impl FnOnce(T) -> Value) -> Value {
    match got {
        Got::Ok(t) => f(t),
        Got::Odd(v) => v,
    }
}

fn time_value(t: Option<&DateTime<Utc>>) -> Value {
    t.and_then(|t| serde_json::to_value(t).ok())
        .unwrap_or(Value::Null)
}

/// The fields of one comment element read so far.
#[derive(Default)]
pub(super) struct Fields {
    pub id: Option<Got<u64>>,
    pub html_url: Option<Got<String>>,
    pub issue_url: Option<Got<String>>,
    pub user: Option<Got<Option<User>>>,
    pub created_at: Option<Got<DateTime<Utc>>>,
    pub updated_at: Option<Got<DateTime<Utc>>>,
}

impl Fields {
    /// The poster's login, once `user` has been read.
    pub fn login(&self) -> Option<&str> {
        match self.user.as_ref()? {
            Got::Ok(user) => user.as_ref().map(|u| u.login.as_str()),
            Got::Odd(v) => v.get("login")?.as_str(),
        }
    }

    /// `issue_url`, when it has been read and is a string.
    pub fn issue_url(&self) -> Option<&str> {
        self.issue_url.as_ref()?.ok().map(String::as_str)
    }

    /// The number of the issue the fields read so far say the element is on.
    pub fn issue(&self) -> Option<u64> {
        let html = self.html_url.as_ref().and_then(Got::ok).map(String::as_str);
        [self.issue_url(), html]
            .into_iter()
            .flatten()
            .find(|u| !u.is_empty())
            .and_then(crate::store::issue_in_url)
    }

    /// Whether every field a [`Comment`] needs came with its type, and a poster.
    pub fn readable(&self) -> bool {
        matches!(self.id, Some(Got::Ok(_)))
            && matches!(self.html_url, Some(Got::Ok(_)))
            && matches!(self.user, Some(Got::Ok(Some(_))))
            && matches!(self.created_at, Some(Got::Ok(_)))
            && matches!(self.updated_at, Some(Got::Ok(_)))
    }

    /// The comment, without its body, when [`Fields::readable`]; else the fields back.
    pub fn comment(self) -> Result<Comment, Box<Fields>> {
        match self {
            Fields {
                id: Some(Got::Ok(id)),
                html_url: Some(Got::Ok(html_url)),
                issue_url,
                user: Some(Got::Ok(Some(user))),
                created_at: Some(Got::Ok(created_at)),
                updated_at: Some(Got::Ok(updated_at)),
            } => Ok(Comment {
                id: CommentId(id),
                html_url,
                // As the lenient `issue_url` of [`Comment`]: empty unless a string.
                issue_url: match issue_url {
                    Some(Got::Ok(u)) => u,
                    _ => String::new(),
                },
                user: Some(user),
                body: String::new(),
                created_at,
                updated_at,
            }),
            fields => Err(Box::new(fields)),
        }
    }

    /// The fields as a JSON object, for the lenient path.
    pub fn into_map(self) -> Map<String, Value> {
        let mut obj = Map::new();
        let time = |t: DateTime<Utc>| time_value(Some(&t));
        if let Some(id) = self.id {
            obj.insert("id".into(), into_value(id, Value::from));
        }
        if let Some(u) = self.html_url {
            obj.insert("html_url".into(), into_value(u, Value::String));
        }
        if let Some(u) = self.issue_url {
            obj.insert("issue_url".into(), into_value(u, Value::String));
        }
        if let Some(user) = self.user {
            let user = into_value(user, |u| {
                u.and_then(|u| serde_json::to_value(u).ok())
                    .unwrap_or(Value::Null)
            });
            obj.insert("user".into(), user);
        }
        if let Some(t) = self.created_at {
            obj.insert("created_at".into(), into_value(t, time));
        }
        if let Some(t) = self.updated_at {
            obj.insert("updated_at".into(), into_value(t, time));
        }
        obj
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_u64_reads_as_its_text_reads() {
        for n in [0, 1, 42, i64::MAX as u64, i64::MAX as u64 + 1, u64::MAX] {
            let text = n.to_string();
            assert_eq!(u64::from_u64(n), u64::from_number(&text), "{n}");
            assert_eq!(i64::from_u64(n), i64::from_number(&text), "{n}");
            assert_eq!(String::from_u64(n), String::from_number(&text), "{n}");
            let times = (
                DateTime::<Utc>::from_u64(n),
                DateTime::<Utc>::from_number(&text),
            );
            assert_eq!(times.0, times.1, "{n}");
        }
        assert_eq!(i64::from_u64(u64::MAX), None);
    }

    #[test]
    fn a_plain_time_is_the_time_chrono_reads_and_any_other_is_left_to_chrono() {
        let chrono = |s: &str| {
            s.parse::<DateTime<FixedOffset>>()
                .ok()
                .map(|t| t.with_timezone(&Utc))
        };
        let plain = [
            "2026-07-14T09:47:31Z",
            "2026-07-14T09:48:00+00:00",
            "2026-07-01T00:00:00+02:00",
            "2026-07-01T00:00:00-00:00",
            "0000-01-01T00:00:00+23:59",
            "9999-12-31T23:59:59-23:59",
            "2024-02-29T12:00:00-05:30",
        ];
        for s in plain {
            assert!(plain_time(s).is_some(), "{s}");
            assert_eq!(plain_time(s), chrono(s), "{s}");
        }
        let other = [
            "2026-07-14T09:47:31.5Z",
            "2026-07-14T09:47:60Z",
            "2026-07-14t09:47:31Z",
            "2026-07-14 09:47:31Z",
            "2026-07-14T09:47:31z",
            "2026-07-14T09:47:31UTC",
            "2026-07-14T09:47:31+24:00",
            "2026-07-14T09:47:31+05:60",
            "2026-07-14T09:47:31+0500",
            "2026-07-14T09:47:31",
            "2026-07-14T09:47:31Z ",
            "2023-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-07-14T24:00:00Z",
            "+2026-07-14T09:47:31Z",
            "2026-7-14T09:47:31Z",
            "2026-07-14T09:4a:31Z",
            "",
            "yesterday",
        ];
        for s in other {
            assert_eq!(plain_time(s), None, "{s}");
            assert_eq!(DateTime::<Utc>::from_str(s), chrono(s), "{s}");
        }
    }
}
