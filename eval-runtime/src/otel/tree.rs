//! The tree a turn's spans form under the request's span, and the spans
//! that are not in it: a span is a step of the turn only when its chain of
//! parents reaches the request's span (of the attempt answered) without a
//! loop and without an ambiguous id (see the guide's "Traces" chapter).

use std::collections::HashMap;

use opentelemetry_proto::tonic::trace::v1::Span;

/// Where a span's chain of parents leads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// To the answered request's span, or to no parent at all: a span of
    /// the turn.
    Kept,
    /// To an earlier attempt's span (a retried request): not the turn's.
    Earlier,
    /// To a span that has not arrived: kept, and the trace is incomplete.
    Dangling,
    /// Around a loop (a span its own parent, or parents forming a cycle),
    /// or into one: refused.
    Cycle,
    /// Through a span id that two different spans have (or the request's
    /// own id): refused, the tree being ambiguous there.
    Duplicate,
    /// A copy of a span placed already (sent twice as it was, an
    /// exporter's retry): dropped, as the one span it is.
    Copy,
}

/// The place of each of `spans` under a request whose span is `root`, its
/// earlier attempts' being `earlier`.
pub(crate) fn places(spans: &[Span], root: &[u8], earlier: &[[u8; 8]]) -> Vec<Place> {
    // Each id's first span; ids two different spans have are ambiguous.
    let mut first: HashMap<&[u8], usize> = HashMap::new();
    let mut ambiguous: HashMap<&[u8], ()> = HashMap::new();
    for (i, s) in spans.iter().enumerate() {
        let id = s.span_id.as_slice();
        if id == root || earlier.iter().any(|e| e == id) {
            ambiguous.insert(id, ());
        }
        match first.get(id) {
            Some(&j) if spans[j] != *s => {
                ambiguous.insert(id, ());
            }
            Some(_) => {}
            None => {
                first.insert(id, i);
            }
        }
    }
    let mut place: Vec<Option<Place>> = vec![None; spans.len()];
    for (i, s) in spans.iter().enumerate() {
        let id = s.span_id.as_slice();
        if ambiguous.contains_key(id) {
            place[i] = Some(Place::Duplicate);
        } else if first.get(id) != Some(&i) {
            place[i] = Some(Place::Copy);
        }
    }
    for start in 0..spans.len() {
        if place[start].is_some() {
            continue;
        }
        // Up the chain until a span already placed, an end, or a span
        // seen on this walk (a loop).
        let mut path: Vec<usize> = Vec::new();
        let mut on_path: HashMap<usize, ()> = HashMap::new();
        let mut at = start;
        let end = loop {
            path.push(at);
            on_path.insert(at, ());
            let parent = spans[at].parent_span_id.as_slice();
            if parent.is_empty() || parent == root {
                break Place::Kept;
            }
            if earlier.iter().any(|e| e == parent) {
                break Place::Earlier;
            }
            if ambiguous.contains_key(parent) {
                break Place::Duplicate;
            }
            let Some(&up) = first.get(parent) else {
                break Place::Dangling;
            };
            if on_path.contains_key(&up) {
                break Place::Cycle;
            }
            if let Some(p) = place[up] {
                break p;
            }
            at = up;
        };
        for i in path {
            place[i] = Some(end);
        }
    }
    place
        .into_iter()
        .map(|p| p.unwrap_or(Place::Dangling))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(id: u8, parent: Option<u8>) -> Span {
        Span {
            span_id: vec![id; 8],
            parent_span_id: parent.map_or_else(|| vec![0xAA; 8], |p| vec![p; 8]),
            ..Span::default()
        }
    }

    const ROOT: [u8; 8] = [0xAA; 8];

    #[test]
    fn a_tree_under_the_request_is_kept_and_a_missing_parent_dangles() {
        let spans = [
            span(1, None),
            span(2, Some(1)),
            span(3, Some(2)),
            span(4, Some(9)),
        ];
        assert_eq!(
            places(&spans, &ROOT, &[]),
            [Place::Kept, Place::Kept, Place::Kept, Place::Dangling]
        );
        // No parent at all: a root of its own, kept (as before).
        let lone = Span {
            parent_span_id: Vec::new(),
            ..span(5, None)
        };
        assert_eq!(places(&[lone], &ROOT, &[]), [Place::Kept]);
    }

    #[test]
    fn a_span_its_own_parent_a_cycle_and_what_hangs_from_them_are_refused() {
        let spans = [
            span(1, None),
            span(2, Some(2)),
            span(3, Some(4)),
            span(4, Some(5)),
            span(5, Some(3)),
            span(6, Some(4)),
        ];
        assert_eq!(
            places(&spans, &ROOT, &[]),
            [
                Place::Kept,
                Place::Cycle,
                Place::Cycle,
                Place::Cycle,
                Place::Cycle,
                Place::Cycle
            ]
        );
    }

    #[test]
    fn two_different_spans_with_one_id_are_refused_and_a_resent_copy_counted_once() {
        let mut other = span(2, None);
        other.name = "other".into();
        let spans = [span(1, None), span(2, Some(1)), other, span(3, Some(2))];
        assert_eq!(
            places(&spans, &ROOT, &[]),
            [
                Place::Kept,
                Place::Duplicate,
                Place::Duplicate,
                Place::Duplicate
            ]
        );
        // The same span twice (an exporter's retry): the first kept.
        let resent = [span(1, None), span(1, None)];
        assert_eq!(places(&resent, &ROOT, &[]), [Place::Kept, Place::Copy]);
        // A span claiming the request's own id.
        assert_eq!(places(&[span(0xAA, None)], &ROOT, &[]), [Place::Duplicate]);
    }

    #[test]
    fn an_earlier_attempts_spans_are_placed_apart() {
        let earlier = [[0xBB; 8]];
        let spans = [span(1, Some(0xBB)), span(2, Some(1)), span(3, None)];
        assert_eq!(
            places(&spans, &ROOT, &earlier),
            [Place::Earlier, Place::Earlier, Place::Kept]
        );
    }
}
