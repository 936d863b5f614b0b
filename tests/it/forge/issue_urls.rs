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
    assert_eq!(issue_in_url("/issues/18446744073709551615"), Some(u64::MAX));
    assert_eq!(issue_in_url("/issues/18446744073709551616"), None);
    assert_eq!(issue_in_url("/issues/007?x=1"), Some(7));
    assert_eq!(issue_in_url("/issues/12/"), Some(12));
    assert_eq!(issue_in_url("/issues/"), None);
    assert_eq!(issue_in_url("/issues/#3"), None);
    assert_eq!(
        issue_in_url("/issues/3/issues/4#5"),
        Some(4),
        "the last /issues/ counts"
    );
    assert_eq!(issue_in_url("/issues/4é"), None);
    assert_eq!(issue_in_url("/issues/\u{0664}"), None, "ASCII digits only");
    assert_eq!(issue_in_url("/issues/é/issues"), None);
}
