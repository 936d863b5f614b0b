//! Turning a long list into another one element at a time while the first one's memory goes
//! back as it empties, so a long thread's listing is never held twice (issue #44: the cold
//! read's peak is the moment two of its lists are alive together).

/// `items` mapped by `f` (an element `f` answers `None` for is left out), in order. The source
/// gives its memory back as it empties: at no point are both lists held whole.
pub(crate) fn map_shrinking<T, U>(mut items: Vec<T>, mut f: impl FnMut(T) -> Option<U>) -> Vec<U> {
    // Reversed, so each `pop` takes the next element in order.
    items.reverse();
    let mut out = Vec::new();
    while let Some(item) = items.pop() {
        out.extend(f(item));
        // Halved when half empty: amortized O(1) per element, and a large buffer is unmapped
        // from its end, not copied.
        if items.capacity() >= 1024 && items.len() < items.capacity() / 2 {
            items.shrink_to_fit();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_element_is_mapped_in_order() {
        for len in [0usize, 1, 2, 1023, 1024, 1025, 5000] {
            let items: Vec<usize> = (0..len).collect();
            let out = map_shrinking(items, |i| (i % 3 != 1).then(|| i * 2));
            let want: Vec<usize> = (0..len).filter(|i| i % 3 != 1).map(|i| i * 2).collect();
            assert_eq!(out, want, "{len} elements");
        }
    }
}
