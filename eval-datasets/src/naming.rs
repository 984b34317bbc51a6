//! Test names for samples.
//!
//! A sample's name is `<key>`, or `<key>__<tag>[__<tag>]*__` when it has
//! tags — a valid Rust identifier:
//!
//! * **key**: the sample's explicit `id` if it has one, else its input (all
//!   turns), turned into `snake_case` ASCII: transliterated (`deunicode`:
//!   `什么是 RAG?` → `shen_me_shi_rag`), lower-cased, every run of other
//!   characters becomes one `_`. Keys longer than 48 characters are cut at a
//!   word boundary and get `_` + 6 hex digits of a hash of the full text, so
//!   long prompts that share a beginning stay apart. A key starting with a
//!   digit gets a leading `_`; a Rust keyword gets a trailing `_`; an empty
//!   key (input of only punctuation) becomes `sample_<hash>`.
//! * **tags**: each tag the same way (cut at 32 characters), each between
//!   `__` and `__`. A key never holds `__` and a tag never starts or ends
//!   with `_`, so `__advanced__` occurs in a name exactly when the sample is
//!   tagged `advanced`: `cargo test -- __advanced__` selects a tag, while
//!   `cargo test -- advanced` stays libtest's substring filter (it also
//!   selects `advanced-ish` tags and inputs starting "advanced").
//!
//! A name depends only on its own sample, so adding, removing or reordering
//! other samples does not change it — with one exception: when two samples
//! would get the same name, both get `_<hash>` after the key, a hash of the
//! raw id for samples with ids (`a-b` and `a_b`), else of their content
//! (input, expected answer, context); samples whose content is identical are
//! then numbered `_2`, `_3`… in file order.

use crate::sample::Sample;

pub use crate::hash::short_hash;

const MAX_KEY: usize = 48;
const MAX_TAG: usize = 32;

/// Names for `samples`, in the same order; unique within the slice.
pub fn test_names(samples: &[Sample]) -> Vec<String> {
    let mut names: Vec<String> = samples.iter().map(base_name).collect();
    for (i, name) in renames(names.len(), &|i| names[i].as_str(), &mut |i| {
        samples[i].clone()
    }) {
        names[i] = name;
    }
    names
}

/// A sample's name before collision handling: `<key>[__<tag>]*[__]`.
pub fn base_name(sample: &Sample) -> String {
    format!("{}{}", sample_key(sample), tag_suffix(sample))
}

/// What makes `len` names unique, by the rules above, as (sample, new name)
/// pairs: `name(i)` is sample `i`'s [`base_name`], and `sample(i)` gives the
/// sample, asked only for those whose names collide (a caller holding
/// names but not samples reads those few again).
pub fn renames<'a>(
    len: usize,
    name: &dyn Fn(usize) -> &'a str,
    sample: &mut dyn FnMut(usize) -> Sample,
) -> Vec<(usize, String)> {
    // Samples whose names collide get a hash of their content after the key.
    let mut renamed: std::collections::BTreeMap<usize, String> = colliding(len, name)
        .into_iter()
        .map(|i| {
            let s = sample(i);
            let hash = short_hash(&content_text(&s));
            (
                i,
                format!("{}{hash}{}", key_joint(&sample_key(&s)), tag_suffix(&s)),
            )
        })
        .collect();
    if renamed.is_empty() {
        return Vec::new();
    }
    // Identical content: number the repeats in file order.
    let current = |i: usize| renamed.get(&i).map_or_else(|| name(i), String::as_str);
    let mut repeats = colliding(len, &current);
    repeats.sort_unstable();
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut numbered = Vec::new();
    for i in repeats {
        let now = current(i).to_string();
        let n = seen.entry(now.clone()).or_default();
        *n += 1;
        if *n > 1 {
            let (key, tags) = now.split_at(key_end(&now));
            numbered.push((i, format!("{}{n}{tags}", key_joint(key))));
        }
    }
    renamed.extend(numbered);
    renamed.into_iter().collect()
}

/// `key` ready for a suffix: a `_` after it, unless it ends with one
/// already (a keyword's), so that no key holds `__`.
fn key_joint(key: &str) -> String {
    if key.ends_with('_') {
        key.to_string()
    } else {
        format!("{key}_")
    }
}

/// Where a name's key ends: at its first `__` followed by a letter or
/// digit (a tag's start; a keyword key's own `_` may come before it).
fn key_end(name: &str) -> usize {
    let bytes = name.as_bytes();
    (0..bytes.len().saturating_sub(2))
        .find(|&i| bytes[i] == b'_' && bytes[i + 1] == b'_' && bytes[i + 2].is_ascii_alphanumeric())
        .unwrap_or(name.len())
}

/// Indices of names that occur more than once (sorting, not hashing, keeps
/// this lean for very large datasets).
fn colliding<'a>(len: usize, name: &dyn Fn(usize) -> &'a str) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    order.sort_unstable_by(|a, b| name(*a).cmp(name(*b)));
    let mut out = Vec::new();
    for run in order.chunk_by(|a, b| name(*a) == name(*b)) {
        if run.len() > 1 {
            out.extend_from_slice(run);
        }
    }
    out
}

/// The key part of a sample's name (before collision handling).
pub fn sample_key(sample: &Sample) -> String {
    // issue38:runevals: a conversation is named by its `name` (runevals'
    // conversation items), not by its turns joined.
    let conversation_name = match (&sample.input, sample.extra.get("name")) {
        (crate::Input::Turns(_), Some(serde_json::Value::String(n))) if !n.trim().is_empty() => {
            Some(n.clone())
        }
        _ => None,
    };
    let text = if sample.explicit_id {
        sample.id.clone()
    } else if let Some(name) = conversation_name {
        name
    } else {
        sample.input.turns().join(" ")
    };
    let key = slug(&text, MAX_KEY);
    if key.is_empty() {
        return format!("sample_{}", short_hash(&text));
    }
    key
}

/// The tag part of a sample's name (`__tag__tag__`, empty without tags):
/// every tag between `__` and `__`, so `__tag__` selects it exactly.
pub fn tag_suffix(sample: &Sample) -> String {
    let mut out = String::new();
    for tag in &sample.tags {
        // Inside a name a tag is not an identifier on its own: no leading `_`
        // for digits, no trailing `_` for keywords.
        let mut s = snake(tag, MAX_TAG);
        if s.is_empty() {
            s = format!("tag_{}", short_hash(tag));
        }
        out.push_str("__");
        out.push_str(&s);
    }
    if !out.is_empty() {
        out.push_str("__");
    }
    out
}

fn content_text(sample: &Sample) -> String {
    if sample.explicit_id {
        return sample.id.clone();
    }
    let mut text = sample.input.turns().join("\u{1f}");
    text.push('\u{1e}');
    if let Some(e) = &sample.expected {
        text.push_str(&e.display_text());
    }
    text.push('\u{1e}');
    text.push_str(&sample.context.join("\u{1f}"));
    text
}

/// `text` as a snake_case ASCII identifier of at most `max` characters (plus a
/// hash suffix when cut). Empty when `text` has no letter or digit.
pub fn slug(text: &str, max: usize) -> String {
    let mut s = snake(text, max);
    if s.is_empty() {
        return s;
    }
    if s.as_bytes()[0].is_ascii_digit() {
        s.insert(0, '_');
    }
    if KEYWORDS.contains(&s.as_str()) {
        s.push('_');
    }
    s
}

/// Transliterated, lower-cased, `_`-separated ASCII, cut with a hash suffix.
fn snake(text: &str, max: usize) -> String {
    let ascii = deunicode::deunicode(text);
    let mut s = String::with_capacity(ascii.len().min(max * 2));
    let mut pending_sep = false;
    for c in ascii.chars() {
        if c.is_ascii_alphanumeric() {
            if pending_sep && !s.is_empty() {
                s.push('_');
            }
            pending_sep = false;
            s.push(c.to_ascii_lowercase());
        } else {
            pending_sep = true;
        }
    }
    if s.len() > max {
        let cut = match s[..=max].rfind('_') {
            Some(at) if at >= max / 2 => at,
            _ => max,
        };
        let hash = short_hash(text);
        s.truncate(cut);
        s.push('_');
        s.push_str(&hash);
    }
    s
}

/// Strict and reserved keywords of every edition, plus `_`-like specials.
const KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "static", "struct", "super", "trait", "true", "try", "type", "typeof",
    "union", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sample::Sample;

    fn is_ident(s: &str) -> bool {
        let mut chars = s.chars();
        matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
            && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
            && s != "_"
            && !KEYWORDS.contains(&s)
    }

    #[test]
    fn slugs_are_identifiers() {
        for text in [
            "What is RAG?",
            "2 + 2",
            "type",
            "什么是 RAG?",
            "🦀🚀",
            "  --  ",
            "Ünïcödé façade",
            &"x".repeat(5000),
            &"word ".repeat(1000),
        ] {
            let s = slug(text, MAX_KEY);
            assert!(s.is_empty() || is_ident(&s), "{text:?} -> {s:?}");
            assert!(s.len() <= MAX_KEY + 8, "{s}");
        }
        assert_eq!(slug("What is RAG?", 48), "what_is_rag");
        assert_eq!(slug("2 + 2", 48), "_2_2");
        assert_eq!(slug("type", 48), "type_");
        assert_eq!(slug("什么是 RAG?", 48), "shen_me_shi_rag");
    }

    #[test]
    fn names_do_not_depend_on_other_samples() {
        let a = Sample::new("What is RAG?").with_tags(["basics"]);
        let b = Sample::new("How does vector search work?").with_tags(["rag", "advanced"]);
        let c = Sample::new("Another one");
        let one = test_names(&[a.clone(), b.clone()]);
        let two = test_names(&[c, b.clone(), a.clone()]);
        assert_eq!(
            one,
            vec![
                "what_is_rag__basics__",
                "how_does_vector_search_work__rag__advanced__"
            ]
        );
        assert_eq!(two[1], one[1]);
        assert_eq!(two[2], one[0]);
    }

    #[test]
    fn collisions_are_disambiguated_deterministically() {
        let a = Sample::new("What is RAG?").with_expected("x");
        let b = Sample::new("what is rag").with_expected("y");
        let c = Sample::new("What is RAG?").with_expected("x");
        let names = test_names(&[a.clone(), b.clone(), c.clone()]);
        assert_eq!(names.len(), 3);
        assert_ne!(names[0], names[1]);
        assert_ne!(names[0], names[2]);
        assert!(names[2].ends_with("_2"), "{names:?}");
        assert_eq!(names, test_names(&[a, b, c]));
        for n in &names {
            assert!(is_ident(n), "{n}");
        }
    }

    #[test]
    fn ids_that_slug_alike_are_told_apart_by_the_id_alone() {
        let mut a = Sample::new("one");
        a.id = "a-b".into();
        a.explicit_id = true;
        let mut b = Sample::new("two");
        b.id = "a_b".into();
        b.explicit_id = true;
        let names = test_names(&[a.clone(), b.clone()]);
        assert_eq!(names[0], format!("a_b_{}", short_hash("a-b")));
        assert_eq!(names[1], format!("a_b_{}", short_hash("a_b")));
        // Editing the content of an id'd sample does not rename it.
        a.input = crate::Input::Text("changed".into());
        assert_eq!(test_names(&[a, b])[0], names[0]);
        // Tags are not identifiers on their own: no `_` added for keywords or digits.
        let t = Sample::new("q").with_tags(["self", "2024", "Super"]);
        assert_eq!(test_names(&[t]), vec!["q__self__2024__super__"]);
    }

    /// The `__tag__` segments of a name (what `cargo test -- __tag__` finds).
    fn tag_segments(name: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut from = 0;
        while let Some(at) = name[from..].find("__") {
            let start = from + at + 2;
            let rest = &name[start..];
            match rest.find("__") {
                Some(end) if end > 0 && !rest[..end].starts_with('_') => {
                    out.push(rest[..end].to_string());
                    from = start + end;
                }
                _ => from = start,
            }
        }
        out
    }

    #[test]
    fn a_tag_is_selected_exactly_by_its_segment() {
        // Inputs, ids and tags that a substring filter `advanced` would mix up.
        let mut samples = vec![
            Sample::new("advanced question").with_tags(["basics"]),
            Sample::new("What is RAG?").with_tags(["advanced-ish"]),
            Sample::new("q").with_tags(["advanced"]),
            Sample::new("__advanced__ in the text"),
            Sample::new("type")
                .with_tags(["advanced"])
                .with_expected("a"),
            Sample::new("type")
                .with_tags(["advanced"])
                .with_expected("b"),
            Sample::new("type")
                .with_tags(["advanced"])
                .with_expected("b"),
            Sample::new("2024").with_tags(["2024", "Self"]),
            Sample::new("x").with_tags(["__", "advanced__x"]),
        ];
        let mut id = Sample::new("one").with_tags(["basics"]);
        id.id = "advanced__basics".into();
        id.explicit_id = true;
        samples.push(id);
        let names = test_names(&samples);
        for (s, n) in samples.iter().zip(&names) {
            let want: Vec<String> = s
                .tags
                .iter()
                .map(|t| match snake(t, MAX_TAG) {
                    e if e.is_empty() => format!("tag_{}", short_hash(t)),
                    e => e,
                })
                .collect();
            assert_eq!(tag_segments(n), want, "{n}");
            assert!(is_ident(n), "{n}");
            let key = &n[..key_end(n)];
            assert!(!key.contains("__"), "{n}");
        }
        let advanced: Vec<&String> = names
            .iter()
            .filter(|n| n.contains("__advanced__"))
            .collect();
        assert_eq!(advanced.len(), 4, "{names:?}");
        assert_eq!(names[2], "q__advanced__");
        assert!(
            names[4].starts_with("type_") && !names[4].starts_with("type__"),
            "{names:?}"
        );
        assert!(names[6].ends_with("_2__advanced__"), "{names:?}");
        assert_eq!(names[9], "advanced_basics__basics__");
    }

    #[test]
    fn long_inputs_with_same_start_differ() {
        let base = "a very long prompt that goes on and on and on and on ".repeat(3);
        let a = Sample::new(format!("{base} ending one"));
        let b = Sample::new(format!("{base} ending two"));
        let names = test_names(&[a, b]);
        assert_ne!(names[0], names[1]);
        assert!(names[0].len() < 60);
    }
}
