//! Pagination headers of list endpoints: `Link` (`rel="next"` and friends) and `X-Total-Count`.
//!
//! Only issue and label lists are paginated. The per-issue comment list never is: it returns every
//! comment in one answer, and sending `page`/`limit` there does nothing.

use reqwest::header::HeaderMap;

/// One page of a paginated list, as walked by `ForgeClient::all_pages`: its items, the number of
/// the page after it (when the headers say one follows), and the total the server reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Page<T> {
    /// The items of this page, in the server's order.
    pub items: Vec<T>,
    /// The number of the next page, or `None` when this is the last one.
    pub next: Option<u32>,
    /// `X-Total-Count`, when the server sent it.
    pub total: Option<u64>,
    /// The page number the `Link: rel="next"` URL names, when it names one: a walk checks that
    /// it goes forward (a server whose `next` never advances would loop it forever).
    pub linked: Option<u32>,
}

impl<T> Page<T> {
    /// Page `number` of a walk that saw `seen_before` items on the pages before it. An empty
    /// page is always the last, so a server that keeps promising more cannot loop a walk forever
    /// on empty answers.
    pub fn new(items: Vec<T>, headers: &HeaderMap, number: u32, seen_before: u64) -> Page<T> {
        let seen = seen_before.saturating_add(items.len() as u64);
        let next = if more_pages(headers, seen, items.len()) {
            number.checked_add(1)
        } else {
            None
        };
        Page {
            items,
            next,
            total: total_count(headers),
            linked: link(headers, "next").as_deref().and_then(page_number),
        }
    }
}

/// The URL of a relation in a `Link` header: `<url>; rel="next",<url>; rel="last"`.
pub fn link(headers: &HeaderMap, rel: &str) -> Option<String> {
    let value = headers.get(reqwest::header::LINK)?.to_str().ok()?;
    value.split(',').find_map(|entry| {
        let (url, params) = entry.trim().split_once(';')?;
        let url = url.trim().strip_prefix('<')?.strip_suffix('>')?;
        let wanted = params.split(';').any(|p| {
            p.trim()
                .strip_prefix("rel=")
                .is_some_and(|r| r.trim_matches('"').split_whitespace().any(|r| r == rel))
        });
        wanted.then(|| url.to_string())
    })
}

/// The `page` query parameter of a URL, when it has a numeric one.
pub fn page_number(url: &str) -> Option<u32> {
    let query = url.split_once('?')?.1;
    let query = query.split('#').next().unwrap_or(query);
    query
        .split('&')
        .find_map(|kv| kv.strip_prefix("page="))
        .and_then(|n| n.trim().parse().ok())
}

/// `X-Total-Count`, when present and numeric.
pub fn total_count(headers: &HeaderMap) -> Option<u64> {
    headers
        .get("x-total-count")?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Whether another page follows: fewer items seen than `X-Total-Count` when the server sent it
/// (a `next` link past the total is not followed), else a `next` link.
pub fn more_pages(headers: &HeaderMap, seen: u64, page_len: usize) -> bool {
    if page_len == 0 {
        return false;
    }
    match total_count(headers) {
        Some(t) => seen < t,
        None => link(headers, "next").is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(link: &str, total: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("link", HeaderValue::from_str(link).unwrap());
        h.insert("x-total-count", HeaderValue::from_str(total).unwrap());
        h
    }

    #[test]
    fn last_page_has_no_next() {
        let h = headers(
            "<https://x/issues?page=1>; rel=\"first\",<https://x/issues?page=2>; rel=\"prev\"",
            "5",
        );
        assert_eq!(link(&h, "next"), None);
        assert!(!more_pages(&h, 5, 1));
        assert!(
            more_pages(&h, 4, 1),
            "X-Total-Count alone says one more remains"
        );
        assert!(!more_pages(&h, 4, 0), "an empty page ends the walk");
    }

    #[test]
    fn a_page_knows_its_successor_and_the_total() {
        let h = headers("<https://x/issues?page=3>; rel=\"next\"", "7");
        let page = Page::new(vec!['a', 'b'], &h, 2, 2);
        assert_eq!(
            page,
            Page {
                items: vec!['a', 'b'],
                next: Some(3),
                total: Some(7),
                linked: Some(3),
            }
        );
        let last = headers("<https://x/issues?page=1>; rel=\"first\"", "7");
        assert_eq!(Page::new(vec!['g'], &last, 4, 6).next, None);
        assert_eq!(
            Page::new(vec!['e', 'f'], &last, 3, 4).next,
            Some(4),
            "X-Total-Count alone says one more remains"
        );
        assert_eq!(Page::new(Vec::<char>::new(), &h, 5, 6).next, None);
        assert_eq!(Page::new(vec!['z'], &h, u32::MAX, 0).next, None);
        let bare = Page::new(vec!['a'], &HeaderMap::new(), 1, 0);
        assert_eq!((bare.next, bare.total), (None, None));
    }

    #[test]
    fn the_total_ends_a_walk_whatever_the_link_says() {
        let h = headers("<https://x/issues?limit=2&page=5>; rel=\"next\"", "6");
        assert!(!more_pages(&h, 6, 2), "the total is reached");
        assert!(more_pages(&h, 4, 2));
        assert_eq!(Page::new(vec!['e', 'f'], &h, 3, 4).next, None);
        assert_eq!(Page::new(vec!['e', 'f'], &h, 3, 4).linked, Some(5));
        assert_eq!(
            page_number("https://x/i?limit=50&page=2&state=open"),
            Some(2)
        );
        assert_eq!(page_number("https://x/i?page=x"), None);
        assert_eq!(page_number("https://x/i"), None);
    }

    /// The recorded headers in `tests/fixtures/forgejo-api/` (the reference material's
    /// recordings, committed; moved here from the integration tests, now
    /// `tests/it/forge/recorded_answers.rs`, when this module became private to the crate).
    fn examples() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/forgejo-api")
    }

    /// The headers and body of a recorded `.http` file.
    fn recorded(name: &str) -> (HeaderMap, String) {
        let path = examples().join("recorded").join(name);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        let text = text.replace("\r\n", "\n");
        let (head, body) = text.split_once("\n\n").unwrap_or((&text, ""));
        let mut h = HeaderMap::new();
        for line in head.lines() {
            if let Some((k, v)) = line.split_once(':') {
                h.append(
                    reqwest::header::HeaderName::from_bytes(k.trim().as_bytes()).unwrap(),
                    HeaderValue::from_str(v.trim()).unwrap(),
                );
            }
        }
        (h, body.trim().to_string())
    }

    #[test]
    fn the_recorded_list_headers_parse() {
        let (h, body) = recorded("gitea.com--issues-list--page3-link-header.http");
        let items: Vec<serde_json::Value> = serde_json::from_str(&body).unwrap();
        assert!(link(&h, "next").unwrap().contains("page=4"));
        assert!(link(&h, "prev").unwrap().contains("page=2"));
        assert!(link(&h, "first").unwrap().contains("page=1"));
        assert!(more_pages(&h, 6, 2));
        let page = Page::new(items, &h, 3, 4);
        assert_eq!((page.next, page.total), (Some(4), Some(7)));

        let (h, body) = recorded("gitea.com--issue-comments--page-limit-ignored.http");
        let items: Vec<serde_json::Value> = serde_json::from_str(&body).unwrap();
        assert_eq!(total_count(&h), Some(items.len() as u64));
        assert_eq!(
            link(&h, "next"),
            None,
            "the comment list is never paginated"
        );
    }

    #[test]
    fn every_documented_link_header_has_a_first_relation() {
        let path = examples().join("response-headers.json");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        let doc: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text).unwrap();
        let mut seen = 0;
        for (scenario, v) in doc.iter().filter(|(k, _)| !k.starts_with('_')) {
            let Some(l) = v["headers"]["Link"].as_str() else {
                continue;
            };
            let mut h = HeaderMap::new();
            h.insert("link", HeaderValue::from_str(l).unwrap());
            assert!(link(&h, "first").is_some(), "{scenario}");
            seen += 1;
        }
        assert!(seen > 0, "no Link header in response-headers.json");
    }
}
