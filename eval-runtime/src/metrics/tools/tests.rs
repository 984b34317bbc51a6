//! The tool metrics against hand-computed values (the arithmetic is in the
//! comments).

use super::*;
use crate::model::is_tool_metric_name;
use eval_datasets::metric::MetricKind;
use serde_json::json;

/// [`super::score`] of a spec: `None` for a metric of another family.
fn score(
    spec: &MetricSpec,
    sample: &Sample,
    response: &Response,
    turn: Option<usize>,
) -> Option<Result<f64, MetricError>> {
    match &spec.kind {
        MetricKind::Tools(kind) => Some(super::score(spec, kind, sample, response, turn)),
        _ => None,
    }
}

/// [`super::explain`] of a spec: `None` for a metric of another family.
fn explain(
    spec: &MetricSpec,
    sample: &Sample,
    response: &Response,
    turn: Option<usize>,
) -> Option<String> {
    match &spec.kind {
        MetricKind::Tools(kind) => super::explain(kind, sample, response, turn),
        _ => None,
    }
}

fn call(name: &str, args: Value) -> ToolCall {
    ToolCall::new(name).with_arguments(args)
}

fn named(names: &[&str]) -> Vec<ToolCall> {
    names.iter().map(|n| ToolCall::new(*n)).collect()
}

fn close(got: f64, want: f64) {
    assert!((got - want).abs() < 1e-12, "got {got}, want {want}");
}

#[test]
fn tool_called_is_an_exact_name_in_any_turn() {
    let calls = vec![
        call("lookup", json!({"query": "refunds"})),
        ToolCall::new("calculator").in_turn(1),
    ];
    assert_eq!(
        tool_called("calculator", &calls),
        1.0,
        "a later turn counts"
    );
    assert_eq!(
        tool_called(" calculator\n", &calls),
        1.0,
        "ground_truth trimmed"
    );
    assert_eq!(
        tool_called("Calculator", &calls),
        0.0,
        "names are case-sensitive"
    );
    assert_eq!(tool_called("calc", &calls), 0.0, "a prefix is not the name");
    assert_eq!(tool_called("lookup", &[]), 0.0, "no calls");
}

#[test]
fn tool_correctness_by_name() {
    let o = Correctness::default();
    // deepeval's docs example: expected [WebSearch], called [WebSearch,
    // ToolQuery]: 1 matched / 1 expected = 1 (an extra call costs nothing).
    assert_eq!(
        tool_correctness(
            &named(&["WebSearch"]),
            &named(&["WebSearch", "ToolQuery"]),
            o
        ),
        1.0
    );
    // expected [WebSearch, ToolQuery], called [WebSearch]: 1 / 2.
    assert_eq!(
        tool_correctness(
            &named(&["WebSearch", "ToolQuery"]),
            &named(&["WebSearch"]),
            o
        ),
        0.5
    );
    // Order does not matter by default: [a, b] vs [b, a]: 2 / 2.
    assert_eq!(
        tool_correctness(&named(&["a", "b"]), &named(&["b", "a"]), o),
        1.0
    );
    // Duplicates: each call is used once. [s, s] vs [s, s]: 2 / 2 (deepeval's
    // code, marking calls used by value, would give 1 / 2); [s, s] vs [s]: 1 / 2;
    // [s] vs [s, s]: 1 / 1.
    assert_eq!(
        tool_correctness(&named(&["s", "s"]), &named(&["s", "s"]), o),
        1.0
    );
    assert_eq!(
        tool_correctness(&named(&["s", "s"]), &named(&["s"]), o),
        0.5
    );
    assert_eq!(
        tool_correctness(&named(&["s"]), &named(&["s", "s"]), o),
        1.0
    );
    // Arguments are ignored without `parameters`.
    let e = [call("search", json!({"q": "paris"}))];
    let c = [call("search", json!({"q": "lyon"}))];
    assert_eq!(tool_correctness(&e, &c, o), 1.0);
    // Nothing expected: 1 only when nothing was called; nothing called: 0.
    assert_eq!(tool_correctness(&[], &[], o), 1.0);
    assert_eq!(tool_correctness(&[], &named(&["a"]), o), 0.0);
    assert_eq!(tool_correctness(&named(&["a"]), &[], o), 0.0);
}

#[test]
fn tool_correctness_with_parameters() {
    let o = Correctness::new(true, false, false);
    // keys {q, k}: q equal, k differs: 1/2.
    let e = [call("search", json!({"q": "paris", "k": 3}))];
    let c = [call("search", json!({"q": "paris", "k": 5}))];
    assert_eq!(tool_correctness(&e, &c, o), 0.5);
    // Nested: keys {filter, q, extra} (3): q equal 1/3; filter, both objects,
    // {a, b} with a equal: 1/2 of 1/3 = 1/6; extra only in the call: 0.
    // 1/3 + 1/6 = 1/2.
    let e = [call("f", json!({"filter": {"a": 1, "b": 2}, "q": "x"}))];
    let c = [call(
        "f",
        json!({"filter": {"a": 1, "b": 3}, "q": "x", "extra": true}),
    )];
    close(tool_correctness(&e, &c, o), 0.5);
    // The best of the unused calls: q=a matches the second call fully (1),
    // not the first (0): 1 / 1.
    let e = [call("s", json!({"q": "a"}))];
    let c = [call("s", json!({"q": "b"})), call("s", json!({"q": "a"}))];
    assert_eq!(tool_correctness(&e, &c, o), 1.0);
    // Python equality: 1 == 1.0, but 1 != "1".
    let e = [call("c", json!({"x": 1}))];
    assert_eq!(
        tool_correctness(&e, &[call("c", json!({"x": 1.0}))], o),
        1.0
    );
    assert_eq!(
        tool_correctness(&e, &[call("c", json!({"x": "1"}))], o),
        0.0
    );
    // An expected call with no arguments against one with some: keys {x},
    // none shared: 0.
    assert_eq!(
        tool_correctness(&named(&["c"]), &[call("c", json!({"x": 1}))], o),
        0.0
    );
    // Two expected, two calls: (1/2 + 1) / 2 = 3/4.
    let e = [
        call("a", json!({"x": 1, "y": 2})),
        call("b", json!({"z": 1})),
    ];
    let c = [
        call("b", json!({"z": 1})),
        call("a", json!({"x": 1, "y": 9})),
    ];
    assert_eq!(tool_correctness(&e, &c, o), 0.75);
}

#[test]
fn tool_correctness_with_ordering() {
    let o = Correctness::new(false, true, false);
    // [A, B, C] vs [B, A, C]: longest common subsequence [A, C] (or [B, C]),
    // 2 / 3.
    close(
        tool_correctness(&named(&["A", "B", "C"]), &named(&["B", "A", "C"]), o),
        2.0 / 3.0,
    );
    // deepeval's docs example: [WebSearch, ToolQuery, WebSearch] vs
    // [WebSearch, WebSearch, ToolQuery]: LCS [WebSearch, ToolQuery], 2 / 3
    // (above the default threshold 0.5).
    close(
        tool_correctness(
            &named(&["WebSearch", "ToolQuery", "WebSearch"]),
            &named(&["WebSearch", "WebSearch", "ToolQuery"]),
            o,
        ),
        2.0 / 3.0,
    );
    // Extra calls in between do not break the subsequence: [A, B] in
    // [A, X, B]: 2 / 2.
    assert_eq!(
        tool_correctness(&named(&["A", "B"]), &named(&["A", "X", "B"]), o),
        1.0
    );
    // Weighted by the argument match: A pair keys {x, z}, x equal: 1/2; B
    // pair: 1; (1/2 + 1) / 2 = 3/4.
    let o = Correctness::new(true, true, false);
    let e = [call("A", json!({"x": 1})), call("B", json!({"y": 1}))];
    let c = [
        call("A", json!({"x": 1, "z": 2})),
        call("B", json!({"y": 1})),
    ];
    assert_eq!(tool_correctness(&e, &c, o), 0.75);
    // Reversed, only one pair can keep the order; the heavier, B (1): 1 / 2.
    let c_rev = [
        call("B", json!({"y": 1})),
        call("A", json!({"x": 1, "z": 2})),
    ];
    assert_eq!(tool_correctness(&e, &c_rev, o), 0.5);
    assert_eq!(tool_correctness(&[], &[], o), 1.0);
    assert_eq!(tool_correctness(&[], &named(&["A"]), o), 0.0);
    assert_eq!(tool_correctness(&named(&["A"]), &[], o), 0.0);
}

#[test]
fn tool_correctness_exact() {
    let o = Correctness::new(false, false, true);
    assert_eq!(
        tool_correctness(&named(&["a", "b"]), &named(&["a", "b"]), o),
        1.0
    );
    assert_eq!(
        tool_correctness(&named(&["a", "b"]), &named(&["b", "a"]), o),
        0.0
    );
    assert_eq!(
        tool_correctness(&named(&["a", "b"]), &named(&["a", "b", "c"]), o),
        0.0
    );
    // `ordering` has no effect beside `exact`.
    let both = Correctness::new(false, true, true);
    assert_eq!(
        tool_correctness(&named(&["a", "b"]), &named(&["a", "x", "b"]), both),
        0.0
    );
    assert_eq!(tool_correctness(&[], &[], o), 1.0);
    assert_eq!(tool_correctness(&[], &named(&["a"]), o), 0.0);
    // Arguments: only with `parameters`, and then equal as a whole.
    let e = [call("a", json!({"x": 1, "y": 2}))];
    let c = [call("a", json!({"y": 2, "x": 1.0}))];
    let d = [call("a", json!({"x": 1, "y": 3}))];
    assert_eq!(tool_correctness(&e, &d, o), 1.0);
    let p = Correctness::new(true, false, true);
    assert_eq!(tool_correctness(&e, &c, p), 1.0, "key order and 1 == 1.0");
    assert_eq!(tool_correctness(&e, &d, p), 0.0, "no partial credit");
}

#[test]
fn tool_call_accuracy_follows_ragas_0_4_3() {
    // ragas' docs example: both calls, in order, every argument: 2/2 = 1.
    let reference = [
        call("weather_check", json!({"location": "New York"})),
        call(
            "temperature_conversion",
            json!({"temperature_fahrenheit": 75}),
        ),
    ];
    assert_eq!(tool_call_accuracy(&reference, &reference, true), 1.0);
    // Swapped: names [temperature_conversion, weather_check] are not the
    // reference's: 0; without strict order both are sorted by name, the
    // same sequence, pairs (weather, weather), (temp, temp): 2/2 = 1.
    let swapped = [reference[1].clone(), reference[0].clone()];
    assert_eq!(tool_call_accuracy(&reference, &swapped, true), 0.0);
    assert_eq!(tool_call_accuracy(&reference, &swapped, false), 1.0);
    // Half the arguments: reference {a, b}, call {a, b', c}: 1/2 (the extra
    // argument costs nothing).
    let r = [call("f", json!({"a": 1, "b": 2}))];
    let c = [call("f", json!({"a": 1, "b": 3, "c": 9}))];
    assert_eq!(tool_call_accuracy(&r, &c, true), 0.5);
    // Arguments compare as text: "75" matches 75, "75.0" does not.
    let r = [call("t", json!({"f": "75"}))];
    assert_eq!(
        tool_call_accuracy(&r, &[call("t", json!({"f": 75}))], true),
        1.0
    );
    let r = [call("t", json!({"f": 75.0}))];
    assert_eq!(
        tool_call_accuracy(&r, &[call("t", json!({"f": 75}))], true),
        0.0
    );
    // Names aligned, one call's arguments all wrong: (1 + 0) / 2 = 1/2;
    // two pairs of half and all the arguments: (1/2 + 1) / 2 = 3/4.
    let r = [call("s", json!({"q": "a"})), call("t", json!({"q": "b"}))];
    let c = [call("s", json!({"q": "a"})), call("t", json!({"q": "x"}))];
    assert_eq!(tool_call_accuracy(&r, &c, true), 0.5);
    let r = [
        call("s", json!({"q": "a", "k": 1})),
        call("t", json!({"x": 1})),
    ];
    let c = [
        call("s", json!({"q": "a", "k": 2})),
        call("t", json!({"x": 1})),
    ];
    assert_eq!(tool_call_accuracy(&r, &c, true), 0.75);
    // No reference arguments, the call has some: 0 for that call.
    assert_eq!(
        tool_call_accuracy(&named(&["A"]), &[call("A", json!({"x": 1}))], true),
        0.0
    );
    // A call missing: [A, B] vs [A]: names not aligned either way: 0.
    assert_eq!(
        tool_call_accuracy(&named(&["A", "B"]), &named(&["A"]), true),
        0.0
    );
    assert_eq!(
        tool_call_accuracy(&named(&["A", "B"]), &named(&["A"]), false),
        0.0
    );
    // Edges: nothing either side 1; no calls 0; calls but no reference 0.
    assert_eq!(tool_call_accuracy(&[], &[], true), 1.0);
    assert_eq!(tool_call_accuracy(&named(&["A"]), &[], true), 0.0);
    assert_eq!(tool_call_accuracy(&[], &named(&["A"]), false), 0.0);
}

#[test]
fn tool_call_accuracy_pairs_calls_by_position() {
    // A retried call: reference [search(q=x)], the same call twice: names
    // [search, search] are not [search]: 0, in either order mode.
    let once = [call("search", json!({"q": "x"}))];
    let twice = [once[0].clone(), once[0].clone()];
    assert_eq!(tool_call_accuracy(&once, &twice, true), 0.0);
    assert_eq!(tool_call_accuracy(&once, &twice, false), 0.0);
    // An extra call in between: [A, C, B] is not [A, B]: 0 (sorted, [A, B,
    // C] is not [A, B] either).
    assert_eq!(
        tool_call_accuracy(&named(&["A", "B"]), &named(&["A", "C", "B"]), true),
        0.0
    );
    assert_eq!(
        tool_call_accuracy(&named(&["A", "B"]), &named(&["A", "C", "B"]), false),
        0.0
    );
    // Two calls of one name, arguments swapped. Strict order: names
    // aligned, but s(a) is paired with s(b) and s(b) with s(a): (0 + 0) / 2
    // = 0. Without: ragas sorts both lists by (name, argument name, argument
    // text), so both become [s(a), s(b)]: (1 + 1) / 2 = 1.
    let r = [call("s", json!({"q": "a"})), call("s", json!({"q": "b"}))];
    let c = [call("s", json!({"q": "b"})), call("s", json!({"q": "a"}))];
    assert_eq!(tool_call_accuracy(&r, &c, true), 0.0);
    assert_eq!(tool_call_accuracy(&r, &c, false), 1.0);
    // Sorted by argument text, then paired: references [s(b), s(a)] sort to
    // [s(a), s(b)], calls [s(a), s(c)] stay: (1 + 0) / 2 = 1/2.
    let r = [call("s", json!({"q": "b"})), call("s", json!({"q": "a"}))];
    let c = [call("s", json!({"q": "a"})), call("s", json!({"q": "c"}))];
    assert_eq!(tool_call_accuracy(&r, &c, false), 0.5);
    // The sort key is the argument *names* first: s(k=1) sorts before
    // s(q=0) ("k" < "q"), whatever the values; paired by position, (k=1,
    // k=1) and (q=0, q=0): 1.
    let r = [call("s", json!({"q": 0})), call("s", json!({"k": 1}))];
    let c = [call("s", json!({"k": 1})), call("s", json!({"q": 0}))];
    assert_eq!(tool_call_accuracy(&r, &c, false), 1.0);
}

#[test]
fn tool_call_accuracy_compares_arguments_as_pythons_str() {
    // An object argument is `str(dict)`: keys in the order written, so the
    // same object with its keys the other way round is other text: 0.
    let r = [call("f", json!({"filter": {"a": 1, "b": 2}}))];
    let c = [call("f", json!({"filter": {"b": 2, "a": 1}}))];
    assert_eq!(tool_call_accuracy(&r, &c, true), 0.0);
    assert_eq!(tool_call_accuracy(&r, &r, true), 1.0);
    // A list is `str(list)`, its strings quoted: [1, "a"] is `[1, 'a']`,
    // which the string "[1, 'a']" matches (and "[1, a]" does not).
    let r = [call("f", json!({"x": "[1, 'a']"}))];
    let c = [call("f", json!({"x": [1, "a"]}))];
    assert_eq!(tool_call_accuracy(&r, &c, true), 1.0);
    let r = [call("f", json!({"x": "[1, a]"}))];
    assert_eq!(tool_call_accuracy(&r, &c, true), 0.0);
}

#[test]
fn tool_call_accuracy_best_tolerates_retries() {
    // `pairing = "best"`: extra and retried calls are allowed, duplicates
    // pair by their best argument match.
    let once = [call("search", json!({"q": "x"}))];
    let twice = [once[0].clone(), once[0].clone()];
    // [search] is a subsequence of [search, search]; the first call scores
    // 1/1.
    assert_eq!(tool_call_accuracy_best(&once, &twice, true), 1.0);
    assert_eq!(tool_call_accuracy_best(&once, &twice, false), 1.0);
    // An extra call, strict order: [A, B] is a subsequence of [A, C, B]:
    // aligned; A and B each match fully (no arguments on either side: 1):
    // 2/2, no penalty with more calls than referenced = 1.
    assert_eq!(
        tool_call_accuracy_best(&named(&["A", "B"]), &named(&["A", "C", "B"]), true),
        1.0
    );
    // A call missing: [A, B] vs [A]: not aligned either way: 0.
    assert_eq!(
        tool_call_accuracy_best(&named(&["A", "B"]), &named(&["A"]), true),
        0.0
    );
    assert_eq!(
        tool_call_accuracy_best(&named(&["A", "B"]), &named(&["A"]), false),
        0.0
    );
    // Duplicates pair by best argument match, not position: s(a) takes the
    // second call, s(b) the first: 2/2.
    let r = [call("s", json!({"q": "a"})), call("s", json!({"q": "b"}))];
    let c = [call("s", json!({"q": "b"})), call("s", json!({"q": "a"}))];
    assert_eq!(tool_call_accuracy_best(&r, &c, true), 1.0);
    // Objects compare with their keys sorted: the same object either way
    // round: 1.
    let r = [call("f", json!({"filter": {"a": 1, "b": 2}}))];
    let c = [call("f", json!({"filter": {"b": 2, "a": 1}}))];
    assert_eq!(tool_call_accuracy_best(&r, &c, true), 1.0);
    // Edges as ragas': nothing either side 1; no calls 0; no reference 0.
    assert_eq!(tool_call_accuracy_best(&[], &[], true), 1.0);
    assert_eq!(tool_call_accuracy_best(&named(&["A"]), &[], true), 0.0);
    assert_eq!(tool_call_accuracy_best(&[], &named(&["A"]), false), 0.0);
}

#[test]
fn the_spec_chooses_the_pairing() {
    let spec = |s: &str| eval_datasets::metric::parse_specs(s).unwrap().remove(0);
    // The agent retried its call: ragas 0.4.3 scores 0, `pairing = "best"` 1.
    let sample = Sample::new("q").with_expected_tools([call("lookup", json!({"query": "x"}))]);
    let response = Response::new("done").with_tool_calls([
        call("lookup", json!({"query": "x"})),
        call("lookup", json!({"query": "x"})),
    ]);
    let by_position = spec("tool_call_accuracy");
    assert_eq!(
        score(&by_position, &sample, &response, None).unwrap(),
        Ok(0.0)
    );
    let best = spec(r#"tool_call_accuracy(pairing = "best")"#);
    assert_eq!(score(&best, &sample, &response, None).unwrap(), Ok(1.0));
    let loose = spec(r#"tool_call_accuracy(strict_order = false, pairing = "position")"#);
    assert_eq!(score(&loose, &sample, &response, None).unwrap(), Ok(0.0));
}

#[test]
fn argument_text_is_pythons() {
    // `pairing = "best"`'s text: str() with sorted keys, strings unquoted.
    assert_eq!(canonical_text(&json!(true)), "True");
    assert_eq!(canonical_text(&json!(null)), "None");
    assert_eq!(canonical_text(&json!(75)), "75");
    assert_eq!(canonical_text(&json!(75.0)), "75.0");
    assert_eq!(canonical_text(&json!(0.1)), "0.1");
    assert_eq!(canonical_text(&json!(1e16)), "1e+16");
    assert_eq!(canonical_text(&json!(1.5e-5)), "1.5e-05");
    assert_eq!(canonical_text(&json!(-2.5e20)), "-2.5e+20");
    assert_eq!(canonical_text(&json!([1, "x", [true]])), "[1, x, [True]]");
    // Objects with sorted keys: the same arguments in any order.
    assert_eq!(
        canonical_text(&json!({"b": 2, "a": {"d": 1, "c": 0}})),
        canonical_text(&json!({"a": {"c": 0, "d": 1}, "b": 2}))
    );
    // ragas 0.4.3's: Python's str(), containers as their repr.
    assert_eq!(python_str(&json!("it's")), "it's");
    assert_eq!(python_str(&json!(true)), "True");
    assert_eq!(python_str(&json!(null)), "None");
    assert_eq!(python_str(&json!(75)), "75");
    assert_eq!(python_str(&json!(1e16)), "1e+16");
    assert_eq!(
        python_str(&json!([1, "x", [true, null], 2.5])),
        "[1, 'x', [True, None], 2.5]"
    );
    assert_eq!(
        python_str(&json!({"b": 2, "a": {"d": "v", "c": []}})),
        "{'b': 2, 'a': {'d': 'v', 'c': []}}"
    );
    // repr's quotes: single, double when the text has a ' and no ".
    assert_eq!(
        python_str(&json!(["it's", "say \"hi\"", "both ' \""])),
        r#"["it's", 'say "hi"', 'both \' "']"#
    );
    // Escapes: \\, \n, \t, \r, other controls as \xhh; beyond ASCII what
    // is printable as itself (é, 😀), else \xhh (U+00A0, Zs), \uhhhh
    // (U+200B, Cf; U+E000, Co), \Uhhhhhhhh (U+E0001, Cf).
    assert_eq!(
        python_str(&json!([
            "a\\b\nc\td\re\u{1}\u{7f}",
            "é😀",
            "\u{a0}\u{200b}\u{e000}\u{e0001}"
        ])),
        r"['a\\b\nc\td\re\x01\x7f', 'é😀', '\xa0\u200b\ue000\U000e0001']"
    );
    // So `"True"` matches `true` in ragas' accuracy, not in its F1.
    let r = [call("f", json!({"on": "True"}))];
    let c = [call("f", json!({"on": true}))];
    assert_eq!(tool_call_accuracy(&r, &c, true), 1.0);
    assert_eq!(tool_call_f1(&r, &c), 0.0);
}

#[test]
fn json_numbers_compare_exactly() {
    let one = |x: Value| [call("c", json!({ "x": x }))];
    let p = Correctness::new(true, false, false);
    let equal = |a: Value, b: Value| {
        let (ea, eb) = (one(a), one(b));
        let f1 = tool_call_f1(&ea, &eb);
        let tc = tool_correctness(&ea, &eb, p);
        assert_eq!(f1, tc, "the F1 and deepeval agree");
        f1 == 1.0
    };
    // 2^53 + 1 is no double: it rounds to 2^53 = 9007199254740992.0, but
    // Python's 9007199254740993 == 9007199254740992.0 is False.
    assert!(!equal(
        json!(9_007_199_254_740_993_u64),
        json!(9_007_199_254_740_992.0_f64)
    ));
    assert!(equal(
        json!(9_007_199_254_740_992_u64),
        json!(9_007_199_254_740_992.0_f64)
    ));
    // A whole float equals its integer, a fraction does not; 0 == -0.0.
    assert!(equal(json!(3), json!(3.0)));
    assert!(equal(json!(-3), json!(-3.0)));
    assert!(!equal(json!(3), json!(3.5)));
    assert!(equal(json!(0), json!(-0.0)));
    // Integers beyond i64: i64::MAX and 2^63 both round to the double 2^63,
    // yet differ; 2^63 as u64 equals the double 2^63.
    assert!(!equal(
        json!(i64::MAX),
        json!(9_223_372_036_854_775_808_u64)
    ));
    assert!(equal(
        json!(9_223_372_036_854_775_808_u64),
        json!(9_223_372_036_854_775_808.0_f64)
    ));
    assert!(equal(json!(u64::MAX), json!(u64::MAX)));
    assert!(!equal(json!(-1), json!(u64::MAX)));
    // Floats as floats; 1e300 is no integer an i128 holds, and no JSON
    // integer equals it.
    assert!(equal(json!(0.1), json!(0.1)));
    assert!(!equal(json!(0.1), json!(0.30000000000000004)));
    assert!(!equal(json!(u64::MAX), json!(1e300)));
    // Booleans equal only booleans: JSON true is not 1, false not 0 (in
    // Python True == 1; deepeval and ragas' F1 would match them).
    assert!(!equal(json!(true), json!(1)));
    assert!(!equal(json!(false), json!(0)));
    assert!(!equal(json!(true), json!(1.0)));
    assert!(equal(json!(true), json!(true)));
}

#[test]
fn tool_call_f1_follows_ragas() {
    // ragas' docs example: both expected calls made: TP 2, FP 0, FN 0: 1.
    let r = [
        call("weather_check", json!({"location": "Paris"})),
        call("uv_index_lookup", json!({"location": "Paris"})),
    ];
    assert_eq!(tool_call_f1(&r, &r), 1.0);
    // ragas' docstring example: TP 1, FP 1, FN 0: P = 1/2, R = 1,
    // F1 = 2·(1/2)·1 / (3/2) = 2/3, rounded to 0.6667.
    let c = [
        call("get_weather", json!({"location": "Paris"})),
        call("get_uv_index", json!({"location": "Paris"})),
    ];
    assert_eq!(tool_call_f1(&c[..1], &c), 0.6667);
    // An extra call beside both expected ones: TP 2, FP 1: P = 2/3, R = 1,
    // F1 = (4/3) / (5/3) = 0.8.
    let mut extra = r.to_vec();
    extra.push(call("air_quality", json!({"location": "Paris"})));
    assert_eq!(tool_call_f1(&r, &extra), 0.8);
    // Expected [A, B, C], called [A, B, D, E]: TP 2, FP 2, FN 1: P = 1/2,
    // R = 2/3, F1 = (2/3) / (7/6) = 4/7 = 0.571428..., rounded 0.5714.
    assert_eq!(
        tool_call_f1(&named(&["A", "B", "C"]), &named(&["A", "B", "D", "E"])),
        0.5714
    );
    // Arguments must be equal: "Paris" is not "paris": TP 0: 0.
    let r1 = [call("w", json!({"loc": "Paris"}))];
    assert_eq!(
        tool_call_f1(&r1, &[call("w", json!({"loc": "paris"}))]),
        0.0
    );
    // Python equality: 1 == 1.0, 1 != "1".
    let r1 = [call("c", json!({"x": 1}))];
    assert_eq!(tool_call_f1(&r1, &[call("c", json!({"x": 1.0}))]), 1.0);
    assert_eq!(tool_call_f1(&r1, &[call("c", json!({"x": "1"}))]), 0.0);
    // Sets: a call repeated counts once: {A} vs {A}: 1.
    assert_eq!(tool_call_f1(&named(&["A"]), &named(&["A", "A"])), 1.0);
    // Nothing made, or nothing expected and nothing made: P = R = 0: 0.
    assert_eq!(tool_call_f1(&named(&["A"]), &[]), 0.0);
    assert_eq!(tool_call_f1(&[], &[]), 0.0);
    // Order is ignored.
    assert_eq!(tool_call_f1(&named(&["A", "B"]), &named(&["B", "A"])), 1.0);
}

#[test]
fn score_reads_the_sample_and_the_turns() {
    use eval_datasets::metric::MetricSpec;
    let spec = |s: &str| eval_datasets::metric::parse_specs(s).unwrap().remove(0);
    let response = Response::new("done").with_tool_calls([
        call("lookup", json!({"query": "refunds"})),
        call("lookup", json!({"query": "shipping"})).in_turn(1),
    ]);
    // letta per-turn ground truth: turn 1 called lookup (1), turn 2 did not
    // call calculator (0): (1 + 0) / 2.
    let mut s = Sample::new("").with_turns(["a", "b"]);
    s.expected = Some(Expected::PerTurn(vec![
        "lookup".into(),
        "calculator".into(),
    ]));
    let got = score(&spec("tool_called"), &s, &response, None).unwrap();
    assert_eq!(got, Ok(0.5));
    // One turn's metric: that turn's expected name and calls.
    let t2 = MetricSpec::new("tool_called", &[], None)
        .unwrap()
        .for_turn(1);
    assert_eq!(score(&t2, &s, &response, Some(1)).unwrap(), Ok(0.0));
    let t1 = MetricSpec::new("tool_called", &[], None)
        .unwrap()
        .for_turn(0);
    assert_eq!(score(&t1, &s, &response, Some(0)).unwrap(), Ok(1.0));
    // Expected tools: all calls, or one turn's.
    let s = Sample::new("q").with_expected_tools([call("lookup", json!({"query": "shipping"}))]);
    let f1 = spec("tool_call_f1");
    // all: TP 1, FP 1: 2/3 -> 0.6667; turn 2 only: TP 1: 1.
    assert_eq!(score(&f1, &s, &response, None).unwrap(), Ok(0.6667));
    assert_eq!(
        score(&f1.clone().for_turn(1), &s, &response, Some(1)).unwrap(),
        Ok(1.0)
    );
    let c = spec("tool_correctness(parameters = true)");
    // The best of two lookups, the second, fully: 1.
    assert_eq!(score(&c, &s, &response, None).unwrap(), Ok(1.0));
    // No expected tools: an error naming the field; other metrics: None.
    let e = score(&c, &Sample::new("q"), &response, None)
        .unwrap()
        .unwrap_err();
    assert!(e.to_string().contains("`expected_tools`"), "{e}");
    assert!(score(&spec("contains"), &s, &response, None).is_none());
    assert!(is_tool_metric_name("tool_correctness@turn2"));
    assert!(!is_tool_metric_name("contains"));
}

#[test]
fn the_reason_names_the_calls_missing_and_unexpected() {
    let spec = |s: &str| eval_datasets::metric::parse_specs(s).unwrap().remove(0);
    let response = Response::new("done").with_tool_calls([
        call("lookup", json!({"query": "refunds"})),
        call("calculator", json!({"expression": "1+1"})).in_turn(1),
    ]);
    let s = Sample::new("q").with_expected_tools([
        call("lookup", json!({"query": "shipping"})),
        call("weather", json!({"city": "Paris"})),
    ]);
    let c = spec("tool_correctness");
    assert_eq!(
        explain(&c, &s, &response, None).as_deref(),
        Some("not called: weather; not expected: calculator")
    );
    // Turn 1 only: the calculator call is of turn 2.
    assert_eq!(
        explain(&c, &s, &response, Some(0)).as_deref(),
        Some("not called: weather")
    );
    // Names match, arguments do not.
    let only_lookup = Sample::new("q").with_expected_tools([call("lookup", json!({"query": "x"}))]);
    assert_eq!(
        explain(
            &spec("tool_correctness(parameters = true)"),
            &only_lookup,
            &response,
            Some(0)
        )
        .as_deref(),
        Some("the expected tools were called, with other arguments or in another order")
    );
    // tool_called: the name expected, and what was called.
    let letta = Sample::new("q").with_expected("search");
    assert_eq!(
        explain(&spec("tool_called"), &letta, &response, None).as_deref(),
        Some("expected `search`; called: lookup, calculator")
    );
    assert_eq!(
        explain(&spec("tool_called"), &letta, &Response::new("x"), None).as_deref(),
        Some("expected `search`; no tool was called")
    );
    assert_eq!(explain(&spec("contains"), &letta, &response, None), None);
}
