//! The metrics of the answer's text: `exact_match`, `contains`, `regex`,
//! `partial_match` (SQuAD token F1) and `citations` (see the table in the
//! [module above](super)).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::model::MetricError;
use eval_datasets::metric::{CitationFormat, MAX_REGEX_BYTES, MetricSpec, TextMetric};

/// Scores one output against one expected answer. `Err` is a one-line reason
/// the metric could not be computed (e.g. an invalid regex).
pub(crate) fn score(
    spec: &MetricSpec,
    kind: &TextMetric,
    output: &str,
    expected: Option<&str>,
) -> Result<f64, MetricError> {
    let given = expected;
    let expected = || -> Result<&str, MetricError> {
        match expected.map(str::trim) {
            None => Err(format!("`{}` needs an expected answer", spec.name).into()),
            // An empty answer is contained in, and matched by, everything.
            Some("") => Err(format!(
                "`{}` cannot score against an empty expected answer",
                spec.name
            )
            .into()),
            Some(e) => Ok(e),
        }
    };
    Ok(match kind {
        TextMetric::ExactMatch { case_sensitive } => {
            let (out, exp) = (output.trim(), expected()?);
            bool_score(if *case_sensitive {
                out == exp
            } else {
                out.to_lowercase() == exp.to_lowercase()
            })
        }
        TextMetric::Contains { case_sensitive } => {
            let exp = expected()?;
            bool_score(if *case_sensitive {
                output.contains(exp)
            } else {
                output.to_lowercase().contains(&exp.to_lowercase())
            })
        }
        TextMetric::Regex {
            pattern,
            case_sensitive,
        } => {
            let (source, pattern) = match pattern {
                Some(p) => ("the `pattern` option", p.as_str()),
                None => ("the expected answer", expected()?),
            };
            if pattern.len() > MAX_REGEX_BYTES {
                return Err(MetricError::RegexTooLong {
                    what: source,
                    len: pattern.len(),
                    limit: MAX_REGEX_BYTES,
                });
            }
            let re = compiled(pattern, *case_sensitive).map_err(|e| {
                format!(
                    "{source} is not a valid regex: {}",
                    crate::model::one_line(&e.to_string(), 200)
                )
            })?;
            bool_score(re.is_match(output))
        }
        TextMetric::PartialMatch => token_f1(output, expected()?),
        TextMetric::Citations { format } => citations(output, *format) as f64,
        // `is_json`, `json_schema`, `json_pointer`.
        TextMetric::Json(_) => return super::json::score(spec, output, given),
    })
}

/// Regexes compiled so far, by case sensitivity and pattern: a `pattern`
/// option (or an expected answer scored again) is compiled once, not per
/// sample. At most [`CACHED_REGEXES`] are kept (the cache starts over when
/// full), each within the compiled-size limit.
type RegexCache = HashMap<(bool, String), Arc<regex::Regex>>;

/// Most regexes kept compiled at once.
const CACHED_REGEXES: usize = 16;

/// `pattern` compiled (at most 4 MiB compiled), from the cache when it was
/// compiled before.
fn compiled(pattern: &str, case_sensitive: bool) -> Result<Arc<regex::Regex>, regex::Error> {
    static CACHE: OnceLock<Mutex<RegexCache>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    let key = (case_sensitive, pattern.to_string());
    if let Some(re) = cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
        return Ok(re);
    }
    let re = Arc::new(
        regex::RegexBuilder::new(pattern)
            .case_insensitive(!case_sensitive)
            .size_limit(1 << 22)
            .build()?,
    );
    if let Ok(mut c) = cache.lock() {
        if c.len() >= CACHED_REGEXES {
            c.clear();
        }
        c.insert(key, re.clone());
    }
    Ok(re)
}

/// Why a text metric scored `score` against `answers` expected answers
/// (more than one: an `ideal` list, any of which is accepted), in words, for
/// a metric on the wrong side of its threshold: `the expected text is not
/// found in the answer`. `None` for a structured-output metric (its own
/// explanation says more).
pub(crate) fn explain(kind: &TextMetric, score: f64, answers: usize) -> Option<String> {
    let yes = score >= 1.0;
    let expected = if answers > 1 {
        format!("any of the {answers} accepted answers")
    } else {
        "the expected text".to_string()
    };
    let case = |sensitive: bool| if sensitive { " (case-sensitive)" } else { "" };
    Some(match kind {
        TextMetric::ExactMatch { case_sensitive } => format!(
            "the answer {} {expected}{}",
            if yes { "is" } else { "is not" },
            case(*case_sensitive)
        ),
        TextMetric::Contains { case_sensitive } => format!(
            "{expected} {} in the answer{}",
            if yes { "is found" } else { "is not found" },
            case(*case_sensitive)
        ),
        TextMetric::Regex {
            pattern,
            case_sensitive,
        } => format!(
            "the answer {} {}{}",
            if yes { "matches" } else { "does not match" },
            if pattern.is_some() {
                "the `pattern` option"
            } else {
                "the expected answer as a regex"
            },
            case(*case_sensitive)
        ),
        TextMetric::PartialMatch => format!(
            "the answer shares {:.0}% of its words with the expected answer (token F1 {score:.3})",
            score * 100.0
        ),
        TextMetric::Citations { .. } => format!("the answer cites {score} distinct source(s)"),
        TextMetric::Json(_) => return None,
    })
}

fn bool_score(b: bool) -> f64 {
    if b { 1.0 } else { 0.0 }
}

/// runevals' Citations: the number of distinct citation markers of
/// `format` in the answer, counted once per number. The formats the runevals
/// schema names: `oai_unicode` — OpenAI's `【1】`, `【1†source】`,
/// `【1:2†source】`; `bracket` — `[1]`; `markdown` — footnotes `[^1]` (and
/// `[^1^]`); `mixed` — any of them.
pub(crate) fn citations(output: &str, format: CitationFormat) -> usize {
    use std::sync::OnceLock;
    static PATTERNS: [OnceLock<regex::Regex>; 4] = [const { OnceLock::new() }; 4];
    let (slot, pattern) = match format {
        CitationFormat::OaiUnicode => (0, r"【(\d{1,4})(?::\d{1,4})?(?:†[^】]*)?】"),
        CitationFormat::Bracket => (1, r"\[(\d{1,4})\]"),
        CitationFormat::Markdown => (2, r"\[\^(\d{1,4})\^?\]"),
        CitationFormat::Mixed => (
            3,
            r"\[\^?(\d{1,4})\^?\]|【(\d{1,4})(?::\d{1,4})?(?:†[^】]*)?】",
        ),
    };
    let re = PATTERNS[slot].get_or_init(|| regex::Regex::new(pattern).expect("a valid pattern"));
    let mut seen: Vec<&str> = re
        .captures_iter(output)
        .filter_map(|c| c.get(1).or_else(|| c.get(2)))
        .map(|m| m.as_str())
        .collect();
    seen.sort_unstable();
    seen.dedup();
    seen.len()
}

/// Token-overlap F1 as defined by the official SQuAD v1.1 evaluation script
/// (Rajpurkar et al., 2016, `evaluate-v1.1.py`, `normalize_answer` and
/// `f1_score`; v2.0's `compute_f1` is the same):
///
/// 1. normalise both texts as `white_space_fix(remove_articles(remove_punc(lower(s))))`:
///    lower-case; remove punctuation; replace the articles matched by
///    `\b(a|an|the)\b` (Python `re`, whose word characters are Unicode
///    letters, digits and `_`) with a space; split on whitespace as
///    Python's `str.split()` does (its `str.isspace` set: Unicode
///    White_Space plus the separators `\x1c`–`\x1f`, so U+3000 and U+0085
///    separate words);
/// 2. if either token list is empty, F1 is 1 when both are empty, else 0;
/// 3. `common` = size of the multiset intersection; 0 common tokens gives 0;
/// 4. precision = common / |output|, recall = common / |expected|,
///    F1 = 2·P·R / (P + R).
///
/// "Remove punctuation" removes exactly: SQuAD's set, Python's
/// `string.punctuation` (the 32 ASCII characters ``!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~``,
/// the ASCII symbols `$`, `+`, `<`, `=`, `>`, `^`, `` ` ``, `|`, `~`
/// included), and beyond ASCII every character of Unicode's punctuation
/// categories, General_Category Pc, Pd, Ps, Pe, Pi, Pf or Po (the Unicode
/// version of the `unicode-properties` crate; e.g. `、` `。`, `・` U+30FB,
/// `゠` U+30A0, `،` U+060C, `।` U+0964, `;` U+037E, `׃` U+05C3, `«` `»`
/// `¿` `“` `”` `—`). Nothing else: symbols beyond ASCII (`€` `©` `＋`
/// `～`), letters, marks and numbers stay — the iteration mark `々` (Lm),
/// `〆` (Lo), `〇` and the Hangzhou numerals U+3021–U+3029 (Nl), the tone
/// marks U+302A–U+302D (Mn). On ASCII text this is SQuAD's normalisation;
/// beyond it, SQuAD's script would keep `“`, `—` or `、`.
///
/// And after SQuAD's steps, each CJK ideograph, kana or hangul syllable is
/// its own token (as the MLQA evaluation does for Chinese).
pub(crate) fn token_f1(output: &str, expected: &str) -> f64 {
    let pred = normalize_tokens(output);
    let gold = normalize_tokens(expected);
    if pred.is_empty() || gold.is_empty() {
        return bool_score(pred == gold);
    }
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for t in &gold {
        *counts.entry(t.as_str()).or_default() += 1;
    }
    let mut common = 0usize;
    for t in &pred {
        if let Some(c) = counts.get_mut(t.as_str())
            && *c > 0
        {
            *c -= 1;
            common += 1;
        }
    }
    if common == 0 {
        return 0.0;
    }
    let precision = common as f64 / pred.len() as f64;
    let recall = common as f64 / gold.len() as f64;
    2.0 * precision * recall / (precision + recall)
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F)
}

/// What [`token_f1`] removes: ASCII punctuation (Python's
/// `string.punctuation`, SQuAD's set), and any character whose Unicode
/// General_Category is punctuation (Pc, Pd, Ps, Pe, Pi, Pf, Po).
fn is_punctuation(c: char) -> bool {
    use unicode_properties::{GeneralCategoryGroup, UnicodeGeneralCategory};
    c.is_ascii_punctuation()
        || (!c.is_ascii() && c.general_category_group() == GeneralCategoryGroup::Punctuation)
}

/// Python's `str.isspace`: what `str.split()` splits on.
fn is_python_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// SQuAD's `remove_articles`: every `a`, `an`, `the` that is a whole word
/// (a maximal run of Python `re` word characters: letters, digits, `_`)
/// becomes a space.
fn remove_articles(text: &str) -> String {
    static WORD: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let Some(word) = WORD
        .get_or_init(|| regex::Regex::new(r"[\p{L}\p{N}_]+").ok())
        .as_ref()
    else {
        return text.to_string();
    };
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for m in word.find_iter(text) {
        if matches!(m.as_str(), "a" | "an" | "the") {
            out.push_str(&text[last..m.start()]);
            out.push(' ');
            last = m.end();
        }
    }
    out.push_str(&text[last..]);
    out
}

fn normalize_tokens(text: &str) -> Vec<String> {
    let no_punc: String = text
        .to_lowercase()
        .chars()
        .filter(|c| !is_punctuation(*c))
        .collect();
    let mut tokens = Vec::new();
    for word in remove_articles(&no_punc)
        .split(is_python_space)
        .filter(|w| !w.is_empty())
    {
        let mut rest = String::new();
        for c in word.chars() {
            if is_cjk(c) {
                if !rest.is_empty() {
                    tokens.push(std::mem::take(&mut rest));
                }
                tokens.push(c.to_string());
            } else {
                rest.push(c);
            }
        }
        if !rest.is_empty() {
            tokens.push(rest);
        }
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;
    use eval_datasets::metric::{MAX_REGEX_BYTES, MetricKind, MetricSpec, OptionValue};

    /// [`super::score`] of a text metric's spec.
    fn score(spec: &MetricSpec, output: &str, expected: Option<&str>) -> Result<f64, MetricError> {
        let MetricKind::Text(kind) = &spec.kind else {
            panic!("`{}` is not a text metric", spec.name)
        };
        super::score(spec, kind, output, expected)
    }

    fn spec(name: &str) -> MetricSpec {
        MetricSpec::new(name, &[], None).unwrap()
    }

    #[test]
    fn token_f1_matches_hand_computed_squad_values() {
        // pred tokens: [paris, is, capital, of, france] (the removed)
        // gold tokens: [paris]  -> common 1, P = 1/5, R = 1, F1 = 2*(0.2*1)/(1.2) = 1/3
        let f = token_f1("Paris is the capital of France.", "Paris");
        assert!((f - 1.0 / 3.0).abs() < 1e-12, "{f}");
        // identical after normalisation
        assert_eq!(token_f1("The Eiffel Tower!", "eiffel tower"), 1.0);
        // pred [a? no] -> [cat, sat, on, mat] vs gold [cat, sat] : common 2, P=0.5, R=1 -> 2/3
        let f = token_f1("A cat sat on a mat", "the cat sat");
        assert!((f - 2.0 / 3.0).abs() < 1e-12, "{f}");
        // repeated tokens count as a multiset: pred [rag, rag, rag], gold [rag]: common 1, P=1/3, R=1 -> 0.5
        assert!((token_f1("rag rag rag", "rag") - 0.5).abs() < 1e-12);
        assert_eq!(token_f1("nothing shared", "else"), 0.0);
        assert_eq!(token_f1("...", "the"), 1.0);
        assert_eq!(token_f1("", "x"), 0.0);
        // CJK: 巴 黎 vs 巴 黎 是 首 都 -> common 2, P=1, R=2/5 -> 2*0.4/1.4
        let f = token_f1("巴黎", "巴黎是首都");
        assert!((f - 0.8 / 1.4).abs() < 1e-12, "{f}");
    }

    #[test]
    fn token_f1_normalises_as_squad_does() {
        // U+3000 (ideographic space) separates words as Python's str.split()
        // does; it is not punctuation: [iphone, 15, pro] on both sides.
        assert_eq!(token_f1("iPhone\u{3000}15 Pro", "iPhone 15 Pro"), 1.0);
        // \x1c-\x1f and \x85 are whitespace to str.split() too.
        assert_eq!(token_f1("x\x1cy\x1dz\x1e w\x1fv", "x y z w v"), 1.0);
        assert_eq!(token_f1("x\u{85}y", "x y"), 1.0);
        // Articles go by `\b(a|an|the)\b` after punctuation is removed: a
        // symbol is no word character, so `the€` loses its article
        // ([€, price] both sides) ...
        assert_eq!(token_f1("the€ price", "€ price"), 1.0);
        assert_eq!(token_f1("©the deal", "© deal"), 1.0);
        // ... a digit or letter is one, so `the₂` and `thé` keep theirs:
        // [the₂] vs [₂]: nothing shared; [thé, end] vs [end]: P = 1/2, R = 1, F1 = 2/3.
        assert_eq!(token_f1("the₂", "₂"), 0.0);
        let f = token_f1("thé end", "end");
        assert!((f - 2.0 / 3.0).abs() < 1e-12, "{f}");
        // `_` is punctuation (removed first): `the_end` is one word, `theend`.
        assert_eq!(token_f1("the_end", "end"), 0.0);
        // CJK characters become tokens after SQuAD's steps: `the巴黎` has no
        // word boundary, so [the, 巴, 黎] vs [巴, 黎]: P = 2/3, R = 1, F1 = 0.8.
        let f = token_f1("the巴黎", "巴黎");
        assert!((f - 0.8).abs() < 1e-12, "{f}");
        // Other CJK punctuation is still removed: 、 and 。.
        assert_eq!(token_f1("巴黎、首都。", "巴黎首都"), 1.0);
    }

    #[test]
    fn token_f1_removes_unicode_punctuation_and_keeps_letters_and_numbers() {
        // U+30FB KATAKANA MIDDLE DOT (Po) and U+30A0 KATAKANA-HIRAGANA
        // DOUBLE HYPHEN (Pd) are removed: [東, 京, 大, 阪] both sides.
        assert_eq!(token_f1("東京・大阪", "東京 大阪"), 1.0);
        assert_eq!(token_f1("東京゠大阪", "東京大阪"), 1.0);
        // U+3005 IDEOGRAPHIC ITERATION MARK is a letter (Lm), kept: [人, 々]
        // vs [人]: P = 1/2, R = 1, F1 = 2/3.
        let f = token_f1("人々", "人");
        assert!((f - 2.0 / 3.0).abs() < 1e-12, "{f}");
        // 〆 (U+3006, Lo), 〇 (U+3007, Nl), 〡 (U+3021, Nl) and the tone mark
        // U+302A (Mn) are kept too: [〆, 切] vs [切]: 2/3; [〇〡] vs nothing
        // left: 0.
        let f = token_f1("〆切", "切");
        assert!((f - 2.0 / 3.0).abs() < 1e-12, "{f}");
        assert_eq!(token_f1("〇〡", "。"), 0.0);
        assert_eq!(token_f1("x\u{302A}", "x"), 0.0);
        // U+060C ARABIC COMMA (Po): [مرحبا, عالم] both sides.
        assert_eq!(token_f1("مرحبا، عالم", "مرحبا عالم"), 1.0);
        // U+0964 DEVANAGARI DANDA, U+037E GREEK QUESTION MARK, U+05C3
        // HEBREW PUNCTUATION SOF PASUQ (all Po).
        assert_eq!(token_f1("नमस्ते।", "नमस्ते"), 1.0);
        assert_eq!(token_f1("Τι κάνεις\u{37E}", "τι κάνεις"), 1.0);
        assert_eq!(token_f1("שלום\u{5C3}", "שלום"), 1.0);
        // Quotation marks and dashes of any script (Pi, Pf, Pd).
        assert_eq!(token_f1("«Paris» — “yes”", "paris yes"), 1.0);
        // ASCII symbols go as SQuAD's string.punctuation has them ...
        assert_eq!(token_f1("$100 + <tax> = ~5^2 | `x`", "100 tax 52 x"), 1.0);
        // ... symbols beyond ASCII stay (€ is Sc): [€5] vs [5]: 0.
        assert_eq!(token_f1("€5", "5"), 0.0);
    }

    #[test]
    fn a_huge_regex_is_refused_by_its_length_before_compiling() {
        // A 3 MB expected answer used as a regex: refused on its length
        // (compiling it would allocate gigabytes before the size limit),
        // quickly, in one line that names the limit.
        let huge = "a(b|c)".repeat(500_000);
        let started = std::time::Instant::now();
        let e = score(&spec("regex"), "abc", Some(&huge)).unwrap_err();
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        assert_eq!(
            e.to_string(),
            "the expected answer is 3000000 bytes long, over the 16384-byte limit of a regex; use a shorter pattern (or `contains` for a literal answer)"
        );
        // At the limit, a literal still compiles (case-insensitively, within
        // the compiled-size limit) and scores.
        let long = "x".repeat(MAX_REGEX_BYTES);
        assert_eq!(score(&spec("regex"), "no", Some(&long)), Ok(0.0));
    }

    #[test]
    fn a_regex_is_compiled_once_per_pattern() {
        let one = compiled("once (per)? pattern", false).unwrap();
        let two = compiled("once (per)? pattern", false).unwrap();
        assert!(
            std::sync::Arc::ptr_eq(&one, &two),
            "the cache gives the same regex"
        );
        let other = compiled("once (per)? pattern", true).unwrap();
        assert!(
            !std::sync::Arc::ptr_eq(&one, &other),
            "case is part of the key"
        );
    }

    #[test]
    fn string_metrics() {
        assert_eq!(
            score(&spec("exact_match"), "  Paris ", Some("paris")),
            Ok(1.0)
        );
        assert_eq!(
            score(&spec("string_match"), "Paris.", Some("Paris")),
            Ok(0.0)
        );
        let cs = MetricSpec::new(
            "exact_match",
            &[("case_sensitive", OptionValue::Bool(true))],
            None,
        )
        .unwrap();
        assert_eq!(score(&cs, "paris", Some("Paris")), Ok(0.0));
        assert_eq!(
            score(&spec("contains"), "It is PARIS.", Some(" paris ")),
            Ok(1.0)
        );
        assert_eq!(score(&spec("contains"), "Lyon", Some("paris")), Ok(0.0));
        assert_eq!(
            score(
                &spec("regex"),
                "quantity change of 15",
                Some(r"change of \d+")
            ),
            Ok(1.0)
        );
        assert_eq!(score(&spec("regex"), "none", Some(r"\d+")), Ok(0.0));
        let e = score(&spec("regex"), "x", Some("(")).unwrap_err();
        assert!(e.to_string().contains("not a valid regex"), "{e}");
        // Each format counts its own markers, distinct numbers once; the
        // same answer, four ways.
        let answer = "See [1] and [2], also [1] and [^3] and 【4†doc】 and 【5:2†kb】 and 【4】.";
        for (format, want) in [
            (CitationFormat::Mixed, 5),
            (CitationFormat::Bracket, 2),
            (CitationFormat::Markdown, 1),
            (CitationFormat::OaiUnicode, 2),
        ] {
            assert_eq!(citations(answer, format), want, "{format:?}");
        }
        // As runevals names them, through a spec.
        let oai = MetricSpec::new(
            "citations",
            &[(
                "format",
                eval_datasets::metric::OptionValue::Str("oai_unicode".into()),
            )],
            None,
        )
        .unwrap();
        assert_eq!(score(&oai, "[1] [2]", None), Ok(0.0));
        assert_eq!(score(&oai, "【1†a】【2†b】", None), Ok(2.0));
        let bad = MetricSpec::new(
            "citations",
            &[(
                "format",
                eval_datasets::metric::OptionValue::Str("inline".into()),
            )],
            None,
        )
        .unwrap_err();
        assert!(
            bad.to_string()
                .contains("`format = \"inline\"` of `citations`: expected oai_unicode"),
            "{bad}"
        );
        assert_eq!(score(&spec("citations"), "no sources", None), Ok(0.0));
        let e = score(&spec("contains"), "x", None).unwrap_err();
        assert!(matches!(e, MetricError::Unscorable(_)), "{e}");
        assert!(e.to_string().contains("needs an expected answer"), "{e}");
    }

    #[test]
    fn a_failed_text_metric_says_why_in_words() {
        let kind = |name: &str| match spec(name).kind {
            eval_datasets::metric::MetricKind::Text(k) => k,
            _ => unreachable!("{name} is a text metric"),
        };
        assert_eq!(
            explain(&kind("contains"), 0.0, 1).as_deref(),
            Some("the expected text is not found in the answer")
        );
        // `contains <= 0` fails when the text is there: said as it is.
        assert_eq!(
            explain(&kind("contains"), 1.0, 3).as_deref(),
            Some("any of the 3 accepted answers is found in the answer")
        );
        assert_eq!(
            explain(&kind("exact_match"), 0.0, 1).as_deref(),
            Some("the answer is not the expected text")
        );
        assert_eq!(
            explain(&kind("regex"), 0.0, 1).as_deref(),
            Some("the answer does not match the expected answer as a regex")
        );
        assert_eq!(
            explain(&kind("partial_match"), 0.25, 1).as_deref(),
            Some("the answer shares 25% of its words with the expected answer (token F1 0.250)")
        );
        assert_eq!(explain(&kind("is_json"), 0.0, 1), None);
    }
}
