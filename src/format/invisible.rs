//! Characters that render as nothing, or as a blank, or that reorder text: the one table the
//! header checks (`validate.rs`) and the secret finder (`shapes.rs`) share. Pure.
//!
//! A name holding one of these can display exactly as another name (`agent⠀` as `agent`), and a
//! secret with one inside (a zero-width space in the middle of a token) no longer matches the
//! secret byte for byte. The table follows Unicode's Default_Ignorable_Code_Point property and
//! the format (Cf) category, plus the white space other than U+0020 and the characters that draw
//! an empty cell (braille blank, hangul fillers, Egyptian hieroglyph blanks).

/// What kind of invisible character `c` is, or `None` for an ordinary visible character (the
/// plain space U+0020 included). Controls (`char::is_control`) are not listed here: the header
/// checks refuse them on their own, with their own message.
pub(crate) fn kind(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' => {
            "a bidirectional embedding, override or isolate"
        }
        '\u{200E}' | '\u{200F}' | '\u{061C}' => "a bidirectional mark",
        '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' => "a zero-width character",
        // White space other than the plain space: no-break, en/em/thin/hair, ideographic,
        // ogham, the line and paragraph separators.
        '\u{00A0}'
        | '\u{1680}'
        | '\u{2000}'..='\u{200A}'
        | '\u{2028}'
        | '\u{2029}'
        | '\u{202F}'
        | '\u{205F}'
        | '\u{3000}' => "white space other than the plain space",
        // Characters that draw an empty cell.
        '\u{2800}' => "the braille blank, which renders as a space",
        '\u{1D159}' => "a musical symbol that renders blank (null notehead)",
        '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}' => "a hangul filler, which renders blank",
        '\u{13430}'..='\u{1345F}' => "an Egyptian hieroglyph format control or blank",
        // The rest of Default_Ignorable_Code_Point and of the format (Cf) category: soft hyphen,
        // grapheme joiner, Arabic and Syriac number signs, Khmer inherent vowels, Mongolian
        // selectors, invisible operators, deprecated format characters, variation selectors,
        // interlinear annotation, shorthand format controls, musical formatting, tags.
        '\u{00AD}'
        | '\u{034F}'
        | '\u{0600}'..='\u{0605}'
        | '\u{06DD}'
        | '\u{070F}'
        | '\u{0890}'
        | '\u{0891}'
        | '\u{08E2}'
        | '\u{17B4}'
        | '\u{17B5}'
        | '\u{180B}'..='\u{180F}'
        | '\u{2061}'..='\u{2065}'
        | '\u{206A}'..='\u{206F}'
        | '\u{FE00}'..='\u{FE0F}'
        | '\u{FFF0}'..='\u{FFFB}'
        | '\u{110BD}'
        | '\u{110CD}'
        | '\u{16FE4}'
        | '\u{1BCA0}'..='\u{1BCA3}'
        | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0000}'..='\u{E0FFF}' => "an invisible formatting character",
        _ => return None,
    })
}

/// True for a character that renders as nothing at all (everything [`kind`] lists except white
/// space and the blanks, which show as a gap). These are dropped before looking for a known
/// secret, so `to\u{200B}ken` still matches `token`.
pub(crate) fn is_zero_width(c: char) -> bool {
    !c.is_whitespace()
        && !matches!(
            c,
            '\u{2800}' | '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}'
        )
        && kind(c).is_some()
}

/// `text` without its zero-width characters, and for each byte of the result the offset of the
/// same byte in `text`. `None` when `text` has none (the common case: nothing is copied).
pub(crate) fn strip_zero_width(text: &str) -> Option<(String, Vec<usize>)> {
    if text.is_ascii() || !text.chars().any(is_zero_width) {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut map = Vec::with_capacity(text.len());
    for (at, c) in text.char_indices() {
        if is_zero_width(c) {
            continue;
        }
        out.push(c);
        map.extend(at..at + c.len_utf8());
    }
    Some((out, map))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stripping_maps_every_byte_back() {
        let text = "a\u{200B}b\u{2060}é";
        let (clean, map) = strip_zero_width(text).unwrap();
        assert_eq!(clean, "abé");
        assert_eq!(map, vec![0, 4, 8, 9]);
        assert_eq!(strip_zero_width("plain"), None);
        assert_eq!(strip_zero_width("a\u{2800}b"), None, "a blank shows");
    }
}
