//! Pagination headers of list endpoints: `Link` (`rel="next"` and friends) and `X-Total-Count`.
//!
//! Only issue and label lists are paginated. The per-issue comment list never is: it returns every
//! comment in one answer, and sending `page`/`limit` there does nothing.

use reqwest::header::HeaderMap;

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

/// Whether another page follows: a `next` link, or fewer items seen than the total.
pub fn more_pages(headers: &HeaderMap, seen: u64, page_len: usize) -> bool {
    if page_len == 0 {
        return false;
    }
    link(headers, "next").is_some() || total_count(headers).is_some_and(|t| seen < t)
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
    fn parses_the_recorded_gitea_link_header() {
        let h = headers(
            "<https://gitea.com/api/v1/repos/gitea/test_repo/issues?limit=2&page=4&state=all&type=issues>; rel=\"next\",<https://gitea.com/api/v1/repos/gitea/test_repo/issues?limit=2&page=4&state=all&type=issues>; rel=\"last\",<https://gitea.com/api/v1/repos/gitea/test_repo/issues?limit=2&page=1&state=all&type=issues>; rel=\"first\",<https://gitea.com/api/v1/repos/gitea/test_repo/issues?limit=2&page=2&state=all&type=issues>; rel=\"prev\"",
            "7",
        );
        assert!(link(&h, "next").unwrap().contains("page=4"));
        assert!(link(&h, "prev").unwrap().contains("page=2"));
        assert!(link(&h, "first").unwrap().contains("page=1"));
        assert_eq!(total_count(&h), Some(7));
        assert!(more_pages(&h, 6, 2));
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
}
