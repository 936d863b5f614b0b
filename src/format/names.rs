//! Agent and session names that could pass for one another. Pure.
//!
//! A new record's names are kept in NFC, so `é` typed as one code point or as `e` and a combining
//! accent is one name. And a name is refused when it mixes letters of the alphabets whose
//! letters look alike (Latin, Greek, Cyrillic, Armenian: `аgent` with a Cyrillic `а`), or stacks
//! combining marks on one letter (more than two, or the same one twice, which renders as one).
//! Names in any one script, with digits and punctuation, pass; so do ASCII names, all that seed
//! 003's Python agents write. Two more look-alikes are refused, by Unicode's own tables: a
//! character that NFKC changes (fullwidth `ｗ`, mathematical bold `𝐰`, the ligature `ﬁ`, the
//! numeral `Ⅰ`), and a name whose every character has an ASCII look-alike (UTS #39's
//! confusables skeleton, from the `unicode-security` crate: Latin `ɑgent`, all-Cyrillic `аре`,
//! `agent‐x` with a U+2010 hyphen), which could pass for an ASCII name.

use std::borrow::Cow;

use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

/// The most combining marks one letter may carry (after NFC, which composes the common ones).
pub const MAX_MARKS: usize = 2;

/// `name` in NFC (borrowed when it already is, as every ASCII name is).
pub fn nfc(name: &str) -> Cow<'_, str> {
    match name.is_ascii() || unicode_normalization::is_nfc(name) {
        true => Cow::Borrowed(name),
        false => Cow::Owned(name.nfc().collect()),
    }
}

/// A name that could pass for another, and why (worded to follow the field's name).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LookAlike {
    /// A letter of `script` in a name whose other letters are mostly of `first`.
    #[error(
        "mixes scripts: U+{code:04X} at character {at} is a {script} letter among {first} ones; \
         letters of these alphabets look alike, so one name could pass for another (a Cyrillic \
         \"а\" for a Latin \"a\"); write the name in one script",
        at = .index + 1
    )]
    MixedScript {
        /// The letter's code point.
        code: u32,
        /// Its script.
        script: &'static str,
        /// The script of most of the name's other letters.
        first: &'static str,
        /// Its position, in characters (0-based).
        index: usize,
    },
    /// A character that NFKC changes: a styled, combined or width form of plainer text.
    #[error(
        "has a look-alike character: U+{code:04X} at character {at} is a styled, combined or \
         width form of {plain:?} (fullwidth, mathematical, a ligature or a numeral), so the name \
         could pass for one written with {plain:?}; write {plain:?} itself",
        at = .index + 1
    )]
    Compatibility {
        /// The character's code point.
        code: u32,
        /// What NFKC makes of it (`w` for fullwidth `ｗ`, `fi` for `ﬁ`).
        plain: String,
        /// Its position, in characters (0-based).
        index: usize,
    },
    /// A name every character of which has an ASCII look-alike (UTS #39's skeleton), with this
    /// non-ASCII character first.
    #[error(
        "could pass for an ASCII name: U+{code:04X} at character {at} looks like {like:?}, and \
         every other character of the name has an ASCII look-alike too; write the name in \
         ASCII, or with letters that look like no ASCII ones",
        at = .index + 1
    )]
    PassesForAscii {
        /// The character's code point.
        code: u32,
        /// Its ASCII look-alike (`a` for `ɑ`, `-` for U+2010).
        like: String,
        /// Its position, in characters (0-based).
        index: usize,
    },
    /// A combining mark past `MAX_MARKS` (two) on one letter, or the same mark twice.
    #[error(
        "stacks combining marks: U+{code:04X} at character {at} is {what} on one letter, which \
         renders like a name without it; keep at most {MAX_MARKS} different marks on a letter",
        at = .index + 1,
        what = match .repeated {
            true => "the same mark twice",
            false => "a mark past the second",
        }
    )]
    StackedMarks {
        /// The mark's code point.
        code: u32,
        /// Its position, in characters (0-based).
        index: usize,
        /// It repeats the mark before it.
        repeated: bool,
    },
}

/// The first reason `name` (in NFC) could pass for another name, if any. Of mixed scripts,
/// the letter named is the first of the script with the fewest letters (the intruder: the `а`
/// of `аgent`).
pub fn look_alike(name: &str) -> Option<LookAlike> {
    if name.is_ascii() {
        return None;
    }
    // Per script met: (script, letters, first letter's code point and position).
    let mut scripts: Vec<(&'static str, usize, u32, usize)> = Vec::new();
    let (mut marks, mut last_mark) = (0usize, None);
    for (index, c) in name.chars().enumerate() {
        // Marks are counted decomposed: `é` and a second acute is an `e` with the same mark twice.
        for part in std::iter::once(c).nfd() {
            if !is_mark(part) {
                (marks, last_mark) = (0, None);
                continue;
            }
            marks += 1;
            let repeated = last_mark == Some(part);
            if marks > MAX_MARKS || repeated {
                return Some(LookAlike::StackedMarks {
                    code: part as u32,
                    index,
                    repeated,
                });
            }
            last_mark = Some(part);
        }
        if is_mark(c) {
            continue;
        }
        let Some(script) = confusable_script(c) else {
            continue;
        };
        match scripts.iter_mut().find(|s| s.0 == script) {
            Some(s) => s.1 += 1,
            None => scripts.push((script, 1, c as u32, index)),
        }
    }
    if scripts.len() < 2 {
        return compatibility(name).or_else(|| passes_for_ascii(name));
    }
    // The fewest letters; of equals, the script met later.
    let intruder = scripts
        .iter()
        .enumerate()
        .min_by_key(|(i, s)| (s.1, std::cmp::Reverse(*i)))
        .map(|(_, s)| *s)?;
    let others = scripts
        .iter()
        .filter(|s| s.0 != intruder.0)
        .max_by_key(|s| s.1)
        .map_or("", |s| s.0);
    Some(LookAlike::MixedScript {
        code: intruder.2,
        script: intruder.0,
        first: others,
        index: intruder.3,
    })
}

/// The first character of `name` that NFKC changes, if any.
fn compatibility(name: &str) -> Option<LookAlike> {
    name.chars().enumerate().find_map(|(index, c)| {
        let plain: String = std::iter::once(c).nfkc().collect();
        let mut own = [0u8; 4];
        if plain == *c.encode_utf8(&mut own) {
            return None;
        }
        Some(LookAlike::Compatibility {
            code: c as u32,
            plain,
            index,
        })
    })
}

/// When every character of `name` (not ASCII) has an ASCII look-alike, its first non-ASCII one.
fn passes_for_ascii(name: &str) -> Option<LookAlike> {
    if !unicode_security::skeleton(name).all(|c| c.is_ascii()) {
        return None;
    }
    let (index, c) = name.chars().enumerate().find(|(_, c)| !c.is_ascii())?;
    let mut own = [0u8; 4];
    Some(LookAlike::PassesForAscii {
        code: c as u32,
        like: unicode_security::skeleton(c.encode_utf8(&mut own)).collect(),
        index,
    })
}

fn is_mark(c: char) -> bool {
    matches!(
        get_general_category(c),
        GeneralCategory::NonspacingMark
            | GeneralCategory::SpacingMark
            | GeneralCategory::EnclosingMark
    )
}

/// The script of a letter of the alphabets whose letters are mistaken for one another, or
/// `None` for anything else (digits, punctuation, other scripts: a name in Japanese mixes three
/// scripts and that is fine).
fn confusable_script(c: char) -> Option<&'static str> {
    if !c.is_alphabetic() {
        return None;
    }
    Some(match c as u32 {
        0x41..=0x5A
        | 0x61..=0x7A
        | 0xAA
        | 0xBA
        | 0xC0..=0x24F
        | 0x250..=0x2AF
        | 0x1D00..=0x1D7F
        | 0x1E00..=0x1EFF
        | 0x2C60..=0x2C7F
        | 0xA720..=0xA7FF
        | 0xAB30..=0xAB6F
        | 0xFF21..=0xFF3A
        | 0xFF41..=0xFF5A => "Latin",
        0x370..=0x3FF | 0x1F00..=0x1FFF => "Greek",
        0x400..=0x52F | 0x1C80..=0x1C8F | 0x2DE0..=0x2DFF | 0xA640..=0xA69F => "Cyrillic",
        0x531..=0x58F | 0xFB13..=0xFB17 => "Armenian",
        _ => return None,
    })
}
