//! The issue number is read from a comment's or issue's web URL, and from nothing else.

use forgestate::store::issue_in_url;

#[test]
fn the_issue_is_read_from_a_web_url() {
    let url = "https://forge.example/o/r/issues/12#issuecomment-3";
    assert_eq!(issue_in_url(url), Some(12));
    assert_eq!(issue_in_url("https://forge.example/o/r/issues/7"), Some(7));
    assert_eq!(issue_in_url("https://forge.example/o/r/pulls/7"), None);
    assert_eq!(issue_in_url("https://forge.example/o/r/issues/7x"), None);
    assert_eq!(issue_in_url(""), None);
    assert_eq!(issue_in_url("/issues/99999999999999999999999"), None);
}
