//! Unit tests of the splitter: every answer decodes, or fails with the same words at the same
//! place, as reading the whole answer with serde_json's streaming reader does, however the
//! bytes arrive; and a huge element is never held.

use std::io::{self, Read};

use serde_json::{Value, json};

use super::super::{Failed, Filter, State, decode_holding};
use super::{Split, Tail};
use crate::forge::models::CommentList;

/// The decode as it was before the splitter: the whole answer through serde_json's reader.
fn whole<R: Read>(reader: R, filter: &Filter) -> Result<CommentList, Failed> {
    let mut state = State::new(filter);
    let mut de = serde_json::Deserializer::from_reader(reader);
    let tail = Tail {
        state: &mut state,
        after_value: false,
        close: None,
    };
    let done = serde::Deserializer::deserialize_seq(&mut de, tail).and_then(|()| de.end());
    match done {
        Ok(()) => Ok(state.out),
        Err(_) if state.over => Err(Failed::OverCap),
        Err(e) => Err(Failed::Json(e)),
    }
}

fn trusting(logins: &[&str], max_body: usize) -> Filter {
    let mut filter = Filter::all();
    filter.authors = Some(logins.iter().map(|l| l.to_string()).collect());
    filter.max_body = max_body;
    filter
}

/// A reader that hands out its bytes `sizes` at a time, in turn.
struct Trickle<'a> {
    text: &'a [u8],
    sizes: &'a [usize],
    turn: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let want = self.sizes[self.turn % self.sizes.len()];
        self.turn += 1;
        let n = want.min(buf.len()).min(self.text.len());
        buf[..n].copy_from_slice(&self.text[..n]);
        self.text = &self.text[n..];
        Ok(n)
    }
}

fn split(text: &[u8], sizes: &[usize], filter: &Filter, hold: usize) -> (Outcome, Split) {
    let reader = Trickle {
        text,
        sizes,
        turn: 0,
    };
    let (list, split) = decode_holding(reader, filter, hold);
    (Outcome::of(list), split)
}

/// A decode's outcome, comparable.
#[derive(Debug, PartialEq)]
enum Outcome {
    List(CommentList),
    Error(String),
    OverCap,
}

impl Outcome {
    fn of(list: Result<CommentList, Failed>) -> Outcome {
        match list {
            Ok(list) => Outcome::List(list),
            Err(Failed::Json(e)) => Outcome::Error(e.to_string()),
            Err(Failed::OverCap) => Outcome::OverCap,
        }
    }
}

/// The ways bytes arrive: all at once, and a few bytes at a time.
const SIZES: &[&[usize]] = &[&[1 << 20], &[1], &[2], &[3, 1], &[7, 5, 1, 6, 2, 4, 3]];

/// Asserts that `text` decodes as the whole answer's reader decodes it, however it arrives.
fn same(text: &[u8], filter: &Filter) -> Outcome {
    let want = Outcome::of(whole(text, filter));
    for sizes in SIZES {
        for hold in [1 << 20, 16] {
            let (got, _) = split(text, sizes, filter, hold);
            assert_eq!(
                got,
                want,
                "{:?} by {sizes:?}, holding {hold}",
                String::from_utf8_lossy(text)
            );
        }
    }
    want
}

/// A comment as Forgejo sends it, the poster before the body, with brackets and nesting in the
/// fields forgestate does not read.
fn comment(id: u64, login: &str, body: &str) -> String {
    let fields = [
        ("id", json!(id)),
        (
            "html_url",
            json!(format!("https://f.example/o/r/issues/1#issuecomment-{id}")),
        ),
        (
            "user",
            json!({"id": 7, "login": login, "created": null, "full_name": "[a] {b}"}),
        ),
        ("body", json!(body)),
        ("assets", json!([[], {"x": [1, {"y": "]}"}]}])),
        ("created_at", json!("2026-07-14T09:47:31Z")),
        ("updated_at", json!("2026-07-14T09:48:00Z")),
    ];
    let inner: Vec<String> = fields.iter().map(|(k, v)| format!("{k:?}:{v}")).collect();
    format!("{{{}}}", inner.join(","))
}

/// Comments as one answer, and as the values the whole-list decoder takes.
fn answer(items: &[String]) -> (String, Vec<Value>) {
    let values = items
        .iter()
        .map(|c| serde_json::from_str(c).unwrap())
        .collect();
    (format!("[{}]", items.join(",")), values)
}

/// Bodies with what a scanner could trip on.
const TRICKY: &[&str] = &[
    "plain",
    "a \"quoted\" word",
    "ends in a backslash \\",
    "\\\\\\\"",
    "brackets ]}[{ and commas , inside",
    "\"]",
    "line\nbreaks\tand é ü 🦀",
    "\u{1}\u{1f}",
    "",
];

#[test]
fn tricky_strings_decode_as_the_whole_answer_does_however_the_bytes_arrive() {
    let items: Vec<String> = TRICKY
        .iter()
        .enumerate()
        .map(|(i, body)| comment(i as u64, "ca-bot", body))
        .collect();
    let (text, items) = answer(&items);
    let Outcome::List(list) = same(text.as_bytes(), &Filter::all()) else {
        panic!("not a list");
    };
    assert_eq!(list, CommentList::decode(items));
    let bodies: Vec<&str> = list.comments.iter().map(|c| c.body.as_str()).collect();
    assert_eq!(bodies, TRICKY);
}

#[test]
fn one_break_at_every_offset_changes_nothing() {
    let items: Vec<String> = TRICKY[..4]
        .iter()
        .enumerate()
        .map(|(i, body)| comment(i as u64, "ca-bot", body))
        .collect();
    let (text, items) = answer(&items);
    let want = Outcome::List(CommentList::decode(items));
    for cut in 0..=text.len() {
        let sizes = [cut, usize::MAX];
        assert_eq!(
            split(text.as_bytes(), &sizes, &Filter::all(), 1 << 20).0,
            want,
            "cut at {cut}"
        );
    }
}

#[test]
fn spacing_nesting_and_odd_elements_decode_as_the_whole_answer_does() {
    let a = comment(1, "ca-bot", "one");
    let b = comment(2, "mallory", "two");
    for text in [
        "[]".to_string(),
        " \n\t[ \r\n ] \n".to_string(),
        format!("\n[\n  {a} ,\n\n\t{b}\n]\n"),
        format!("[{a},[[1,[2]],{{\"a\":[]}}],{{\"x\":{{\"y\":[{{}}]}}}},{b}]"),
        format!("[1,-2.5e3,true,false,null,\"s\",\"\",{a},12345678901234567890123]"),
        format!("[[],{{}},{b} ,{a}]"),
    ] {
        let filter = trusting(&["ca-bot"], 1 << 20);
        for filter in [Filter::all(), filter] {
            let Outcome::List(list) = same(text.as_bytes(), &filter) else {
                panic!("{text}: not a list");
            };
            assert!(list.seen >= list.comments.len(), "{text}");
        }
    }
}

#[test]
fn a_broken_answer_fails_with_the_words_and_place_of_the_whole_answer_s_reader() {
    let a = comment(1, "ca-bot", "one");
    let texts = [
        String::new(),
        "   ".into(),
        "{\"message\": \"no\"}".into(),
        "<html>Sign in</html>".into(),
        "[".into(),
        "[1,]".into(),
        "[1 2]".into(),
        "[1}".into(),
        "[12abc]".into(),
        "[-]".into(),
        "[tru]".into(),
        "[nul,1]".into(),
        "[\"a\"b]".into(),
        "[{\"a\":1]".into(),
        "[{\"a\" 1}]".into(),
        "[\"\\x\"]".into(),
        "[\"a\nb\"]".into(),
        "[1] 2".into(),
        "[] x".into(),
        "\n\n[1,\n\n  ]".into(),
        format!("[{a},\n {a}\n ,\n  {{\"id\":\n tru}}]"),
        format!("[{a},{a}"),
        format!("[{a},{a},"),
        format!("[{a}\n\n,{{\"body\": \"unterminated"),
        format!("[{a}] {a}"),
        format!("[{a},\n{a}x]"),
    ];
    for text in texts {
        let out = same(text.as_bytes(), &Filter::all());
        assert!(matches!(out, Outcome::Error(_)), "{text:?}: {out:?}");
    }
}

#[test]
fn an_answer_cut_anywhere_fails_as_the_whole_answer_s_reader_says() {
    let items: Vec<String> = (0..3)
        .map(|i| comment(i, "ca-bot", TRICKY[i as usize]))
        .collect();
    let (text, _) = answer(&items);
    for cut in 0..text.len() {
        let out = same(&text.as_bytes()[..cut], &Filter::all());
        assert!(matches!(out, Outcome::Error(_)), "cut at {cut}: {out:?}");
    }
}

#[test]
fn bad_bytes_in_a_string_fail_only_where_they_are_read() {
    let good = comment(1, "ca-bot", "x");
    for login in ["ca-bot", "mallory"] {
        // Invalid UTF-8 in the body: read (and refused) for a trusted author, passed over
        // unread for another.
        let mut bad = comment(2, login, "BAD").into_bytes();
        let at = bad.windows(3).position(|w| w == b"BAD").unwrap();
        bad[at] = 0xff;
        let text = [
            b"[",
            good.as_bytes(),
            b",",
            &bad,
            b",",
            good.as_bytes(),
            b"]",
        ]
        .concat();
        let filter = trusting(&["ca-bot"], 1 << 20);
        let out = same(&text, &filter);
        match login {
            "ca-bot" => assert!(matches!(out, Outcome::Error(_)), "{out:?}"),
            _ => assert!(
                matches!(out, Outcome::List(ref l) if l.seen == 3),
                "{out:?}"
            ),
        }
    }
}

/// An element nested `depth` levels deep (itself the first).
fn nested(depth: usize) -> String {
    format!(
        "{{\"id\":1,\"assets\":{}{}}}",
        "[".repeat(depth - 1),
        "]".repeat(depth - 1)
    )
}

#[test]
fn nesting_up_to_the_reader_s_limit_is_decided_as_the_whole_answer_s_reader_decides() {
    let a = comment(1, "ca-bot", "one");
    for depth in [120, 126, 127, 128, 129, 200] {
        // In a field passed over, and in one read.
        let deep = nested(depth);
        let read = deep.replace("assets", "user");
        for element in [deep, read] {
            let text = format!("[{a},{element},{a}]");
            same(text.as_bytes(), &Filter::all());
        }
    }
}

#[test]
fn an_object_read_in_place_is_decided_as_the_whole_answer_s_reader_decides() {
    // Brackets in a string (as many as the depth rule counts: the scan decides then),
    // characters of several bytes across the read window's end, and lengths far from the last.
    let items = [
        comment(1, "ca-bot", &"{[".repeat(200)),
        comment(2, "ca-bot", &"é🦀".repeat(3000)),
        comment(3, "ca-bot", "x"),
        comment(4, "ca-bot", &"é".repeat(9000)),
        comment(5, "ca-bot", "🦀"),
    ];
    let (text, _) = answer(&items);
    let Outcome::List(list) = same(text.as_bytes(), &Filter::all()) else {
        panic!("not a list")
    };
    assert_eq!(list.comments.len(), 5);
    assert_eq!(list.comments[1].body, "é🦀".repeat(3000));
    let (_, split) = split(text.as_bytes(), &[1 << 20], &Filter::all(), 1 << 20);
    assert_eq!(split.sliced, 5, "every element through a slice reader");
}

#[test]
fn kept_bodies_over_the_listing_cap_fail_the_listing_however_read() {
    let items: Vec<String> = (0..4).map(|i| comment(i, "ca-bot", "0123456789")).collect();
    let (text, _) = answer(&items);
    let mut filter = Filter::all();
    filter.max_kept = 35;
    assert_eq!(same(text.as_bytes(), &filter), Outcome::OverCap);
}

#[test]
fn a_huge_untrusted_comment_is_passed_over_unheld_and_the_split_carries_on() {
    let hold = 64 * 1024;
    let huge = "\\\"x]}".repeat(1 << 20);
    let mut items: Vec<String> = (0..10).map(|i| comment(i, "ca-bot", "mine")).collect();
    items[4] = comment(4, "mallory", &huge);
    let (text, _) = answer(&items);
    assert!(text.len() > 4 << 20);
    let filter = trusting(&["ca-bot"], 1 << 20);
    let want = Outcome::of(whole(text.as_bytes(), &filter));
    for sizes in [&[1 << 20][..], &[16 * 1024, 3, 1000]] {
        let (got, split) = split(text.as_bytes(), sizes, &filter, hold);
        assert_eq!(got, want);
        assert!(
            split.peak <= hold + 2 * super::super::source::READ,
            "held {} bytes",
            split.peak
        );
        assert_eq!(
            split.sliced, 9,
            "every other element through the slice reader"
        );
    }
    let Outcome::List(list) = want else {
        panic!("not a list")
    };
    assert_eq!(list.comments.len(), 9);
    assert_eq!(list.unreadable[0].login.as_deref(), Some("mallory"));
}

#[test]
fn a_trusted_body_far_over_the_cap_is_measured_and_the_split_carries_on() {
    let hold = 64 * 1024;
    let huge = "é".repeat(1 << 20);
    let items = [
        comment(1, "ca-bot", "mine"),
        comment(2, "ca-bot", &huge),
        comment(3, "ca-bot", "mine"),
    ];
    let (text, _) = answer(&items);
    let filter = trusting(&["ca-bot"], 1000);
    let (got, split) = split(text.as_bytes(), &[1 << 20], &filter, hold);
    assert_eq!(got, Outcome::of(whole(text.as_bytes(), &filter)));
    assert_eq!(split.sliced, 2);
    let Outcome::List(list) = got else {
        panic!("not a list")
    };
    assert_eq!(list.comments.len(), 2);
    assert_eq!(
        list.unreadable[0].skipped,
        Some(crate::store::Skip::TooLarge {
            len: 2 << 20,
            cap: 1000
        })
    );
}

/// A reader that fails after `ok` bytes.
struct Failing<'a> {
    text: &'a [u8],
    ok: usize,
}

impl Read for Failing<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.ok == 0 {
            return Err(io::Error::other("the connection failed"));
        }
        let n = buf.len().min(self.ok).min(self.text.len()).min(5);
        buf[..n].copy_from_slice(&self.text[..n]);
        self.text = &self.text[n..];
        self.ok -= n;
        Ok(n)
    }
}

#[test]
fn a_reader_that_fails_fails_the_decode_as_before() {
    let items: Vec<String> = (0..3).map(|i| comment(i, "ca-bot", "x")).collect();
    let (text, _) = answer(&items);
    let failing = |ok| Failing {
        text: text.as_bytes(),
        ok,
    };
    for ok in (0..text.len()).step_by(11) {
        let (list, _) = decode_holding(failing(ok), &Filter::all(), 1 << 20);
        let got = Outcome::of(list);
        let want = Outcome::of(whole(failing(ok), &Filter::all()));
        assert_eq!(got, want, "after {ok}");
        assert!(
            matches!(&got, Outcome::Error(e) if e.starts_with("the connection failed")),
            "{got:?}"
        );
    }
}
