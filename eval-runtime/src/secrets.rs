//! Credentials, and keeping them out of everything shown or written.
//!
//! Every key enters the process as a [`Secret`] (read by [`Config`](crate::Config)
//! or given to a builder), and every [`Secret`] is remembered here. Text that
//! is shown or written — summary lines, failure reports, error messages,
//! results files, the judge cache — goes through [`mask`] first, which
//! replaces, for each key of at least [`MIN_MASKED`] characters:
//!
//! * the key itself, and its URL-encoded form (`%2B` for `+`, in upper or
//!   lower case hex);
//! * any [`WINDOW`] or more consecutive characters of a key longer than
//!   [`WINDOW`]: an echo cut off at either end is masked too;
//! * the whole key written with any of its characters percent-encoded
//!   (`sk%2Dproj…`, `%73%6b-…`: any character, upper or lower case hex) or
//!   with whitespace between its characters (`s k - p r o j …`, or chunks:
//!   `sk-proj abcd efgh`), or both. These forms are found in the text read
//!   with every `%XX` decoded and every whitespace character dropped, and
//!   only the whole key counts there (a run of [`WINDOW`] characters spread
//!   over words could be ordinary prose), so innocent text is not masked.
//!
//! A shorter key is still never printed by `Debug`, but it is not looked for
//! in text (it would mask ordinary words).

use std::borrow::Cow;
use std::sync::{Arc, Mutex, RwLock};

use aho_corasick::AhoCorasick;

/// Keys shorter than this are not looked for in text.
pub(crate) const MIN_MASKED: usize = 8;
/// Runs of this many characters of a longer key are masked wherever they appear.
pub(crate) const WINDOW: usize = 12;
/// What a masked run becomes.
pub(crate) const MASK: &str = "<redacted>";

/// A credential: never shown by `Debug`, never written anywhere.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Arc<str>);

impl Secret {
    /// Wraps a key (and remembers it, so that every output this crate writes hides it).
    pub fn new(key: impl Into<String>) -> Self {
        let key: Arc<str> = key.into().into();
        remember(&key);
        Secret(key)
    }

    /// A value never shown by `Debug` but not searched for in what this
    /// crate writes: a custom header's value that is no credential
    /// (`Accept: application/json`, a tenant name), which masking every
    /// text would cut out of agents' answers, cassettes and cached judge
    /// answers.
    pub(crate) fn unlisted(value: impl Into<String>) -> Self {
        Secret(value.into().into())
    }

    /// The key itself, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(MASK)
    }
}

/// The keys known so far, and the automata that find them.
struct Known {
    keys: Vec<Arc<str>>,
    finder: Option<Arc<AhoCorasick>>,
    /// Whole keys (whitespace removed), looked for in text read with `%XX`
    /// decoded and whitespace dropped.
    spread: Option<Arc<AhoCorasick>>,
}

fn known() -> &'static RwLock<Known> {
    static KNOWN: std::sync::OnceLock<RwLock<Known>> = std::sync::OnceLock::new();
    KNOWN.get_or_init(|| {
        RwLock::new(Known {
            keys: Vec::new(),
            finder: None,
            spread: None,
        })
    })
}

fn remember(key: &Arc<str>) {
    if key.chars().count() < MIN_MASKED {
        return;
    }
    // One writer at a time rebuilds; readers keep the previous automaton.
    static BUILD: Mutex<()> = Mutex::new(());
    let _building = BUILD.lock().unwrap_or_else(|p| p.into_inner());
    let mut keys = {
        let current = known().read().unwrap_or_else(|p| p.into_inner());
        if current.keys.iter().any(|k| k == key) {
            return;
        }
        current.keys.clone()
    };
    keys.push(key.clone());
    let patterns: Vec<String> = keys.iter().flat_map(|k| patterns(k)).collect();
    let finder = AhoCorasick::new(&patterns).ok().map(Arc::new);
    let whole: Vec<Vec<u8>> = keys.iter().map(|k| squeezed(k)).collect();
    let spread = AhoCorasick::new(&whole).ok().map(Arc::new);
    let mut current = known().write().unwrap_or_else(|p| p.into_inner());
    *current = Known {
        keys,
        finder,
        spread,
    };
}

/// `key`'s bytes without whitespace.
fn squeezed(key: &str) -> Vec<u8> {
    key.bytes().filter(|b| !b.is_ascii_whitespace()).collect()
}

/// What to look for of one key: itself, its URL-encoded forms, its windows.
fn patterns(key: &str) -> Vec<String> {
    let mut out = vec![key.to_string()];
    let encoded = percent_encoding::utf8_percent_encode(key, UNRESERVED).to_string();
    if encoded != key {
        out.push(encoded.clone());
        out.push(lower_hex_escapes(&encoded));
    }
    let chars: Vec<char> = key.chars().collect();
    if chars.len() > WINDOW {
        out.extend(chars.windows(WINDOW).map(|w| w.iter().collect::<String>()));
    }
    out
}

/// Everything but RFC 3986's unreserved characters is encoded.
const UNRESERVED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// `%2B` → `%2b`.
fn lower_hex_escapes(encoded: &str) -> String {
    let mut out = String::with_capacity(encoded.len());
    let mut rest = encoded;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let hex_end = tail.len().min(3);
        out.push_str(&tail[..hex_end].to_ascii_lowercase());
        rest = &tail[hex_end..];
    }
    out.push_str(rest);
    out
}

/// `text` with every known key (whole, URL-encoded, or a run of [`WINDOW`]
/// characters of it) replaced by `<redacted>`. Borrowed when nothing matched.
pub(crate) fn mask(text: &str) -> Cow<'_, str> {
    let (finder, spread) = {
        let known = known().read().unwrap_or_else(|p| p.into_inner());
        (known.finder.clone(), known.spread.clone())
    };
    let Some(finder) = finder else {
        return Cow::Borrowed(text);
    };
    // Overlapping runs (reported in order of their end) merge into one span.
    let mut found: Vec<(usize, usize)> = finder
        .find_overlapping_iter(text)
        .map(|m| (m.start(), m.end()))
        .collect();
    if let Some(spread) = spread {
        found.extend(spread_out(&spread, text));
    }
    if found.is_empty() {
        return Cow::Borrowed(text);
    }
    found.sort_unstable();
    let mut spans: Vec<(usize, usize)> = Vec::with_capacity(found.len());
    for (start, end) in found {
        match spans.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => spans.push((start, end)),
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in spans {
        out.push_str(&text[at..start]);
        out.push_str(MASK);
        at = end;
    }
    out.push_str(&text[at..]);
    Cow::Owned(out)
}

/// Where whole keys are in `text` percent-encoded or spread out by
/// whitespace: `text` is read with every `%XX` decoded and whitespace
/// dropped, `spread` finds keys there, and each match is mapped back to the
/// span of `text` it came from. Nothing is read when `text` has neither.
fn spread_out(spread: &AhoCorasick, text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    if !bytes.iter().any(|b| *b == b'%' || b.is_ascii_whitespace()) {
        return Vec::new();
    }
    // The decoded bytes, and where the offset between them and `text`
    // changes: `(decoded index, text index)` at each escape and after each
    // run of whitespace (a few per word, not one per byte).
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut anchors: Vec<(usize, usize)> = vec![(0, 0)];
    let mut at = 0;
    while at < bytes.len() {
        let b = bytes[at];
        if b.is_ascii_whitespace() {
            at += 1;
            anchors.push((decoded.len(), at));
            continue;
        }
        if let Some(byte) = escape_at(bytes, at) {
            anchors.push((decoded.len(), at));
            decoded.push(byte);
            at += 3;
            anchors.push((decoded.len(), at));
            continue;
        }
        decoded.push(b);
        at += 1;
    }
    if decoded.len() == bytes.len() {
        // Nothing decoded or dropped: the plain finder saw all of it.
        return Vec::new();
    }
    // Where decoded byte `i` starts in `text`.
    let origin = |i: usize| {
        let k = anchors.partition_point(|(d, _)| *d <= i) - 1;
        let (d, t) = anchors[k];
        t + (i - d)
    };
    spread
        .find_overlapping_iter(&decoded)
        .map(|m| {
            let last = origin(m.end() - 1);
            let len = if escape_at(bytes, last).is_some() {
                3
            } else {
                1
            };
            (origin(m.start()), last + len)
        })
        // A key's bytes start and end whole characters; never cut one.
        .filter(|(start, end)| text.is_char_boundary(*start) && text.is_char_boundary(*end))
        .collect()
}

/// The byte a `%XX` escape at `at` stands for (hex digits in either case).
fn escape_at(bytes: &[u8], at: usize) -> Option<u8> {
    if bytes.get(at) != Some(&b'%') {
        return None;
    }
    hex_byte(bytes.get(at + 1..at + 3))
}

/// The byte two hex digits (either case) stand for.
fn hex_byte(digits: Option<&[u8]>) -> Option<u8> {
    let digits = std::str::from_utf8(digits?).ok()?;
    if !digits.bytes().all(|d| d.is_ascii_hexdigit()) {
        return None;
    }
    u8::from_str_radix(digits, 16).ok()
}

/// Every string in `value` (keys of objects too) masked in place.
pub(crate) fn mask_json(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::String(s) => {
            if let Cow::Owned(masked) = mask(s) {
                *s = masked;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(mask_json),
        Value::Object(map) => {
            if map.keys().any(|k| matches!(mask(k), Cow::Owned(_))) {
                let old = std::mem::take(map);
                for (k, mut v) in old {
                    mask_json(&mut v);
                    map.insert(mask(&k).into_owned(), v);
                }
            } else {
                map.values_mut().for_each(mask_json);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_encoded_and_cut_off_echoes_are_masked() {
        let key = "sk-proj-Abc+def/GHI=jkl_mno.PQR-stu~vwx";
        let _secret = Secret::new(key);
        assert_eq!(mask(&format!("key={key}!")), "key=<redacted>!");
        let encoded = "sk-proj-Abc%2Bdef%2FGHI%3Djkl_mno.PQR-stu~vwx";
        assert_eq!(mask(&format!("?k={encoded}")), "?k=<redacted>");
        let lower = "sk-proj-Abc%2bdef%2fGHI%3djkl_mno.PQR-stu~vwx";
        assert_eq!(mask(&format!("?k={lower}")), "?k=<redacted>");
        // Cut at the end, at the start, or in the middle: 12 characters or more.
        assert_eq!(mask("echo: sk-proj-Abc+de…"), "echo: <redacted>…");
        assert_eq!(mask("…/GHI=jkl_mno.PQR end"), "…<redacted> end");
        assert_eq!(
            mask("sk-proj-Abc"),
            "sk-proj-Abc",
            "11 characters are not enough"
        );
        assert!(matches!(mask("nothing here"), Cow::Borrowed(_)));
        let mut v = serde_json::json!({"reason": format!("the key is {key}"), "n": [key], key: 1});
        mask_json(&mut v);
        assert!(!v.to_string().contains("jkl_mno"), "{v}");
        assert_eq!(v["reason"], "the key is <redacted>");
    }

    #[test]
    fn short_keys_are_not_looked_for() {
        let _secret = Secret::new("abc");
        assert_eq!(mask("abc abc"), "abc abc");
        assert_eq!(format!("{:?}", Secret::new("abc")), "<redacted>");
    }

    #[test]
    fn percent_encoded_and_spread_out_keys_are_masked() {
        let key = "sk-live-Percent9Spread7Key";
        let _secret = Secret::new(key);
        // `-` encoded, upper or lower hex; every character encoded.
        for echoed in [
            "sk%2Dlive%2DPercent9Spread7Key",
            "sk%2dlive%2dPercent9Spread7Key",
            "%73%6B%2D%6c%69%76%65%2DPercent9Spread7Key",
        ] {
            assert_eq!(
                mask(&format!("url ?k={echoed}&x=1")),
                "url ?k=<redacted>&x=1",
                "{echoed}"
            );
        }
        // Every character apart, chunks, line breaks and tabs, and both forms at once.
        let spaced: String = key.chars().map(|c| format!("{c} ")).collect();
        assert_eq!(
            mask(&format!("said: {}.", spaced.trim_end())),
            "said: <redacted>."
        );
        assert_eq!(
            mask("key sk-live- Perc ent9Spr ead7Key here"),
            "key <redacted> here"
        );
        assert_eq!(mask("sk-live-Perc\n\tent9Spread7Key"), "<redacted>");
        assert_eq!(mask("sk%2Dlive - Percent9Spread7 Key!"), "<redacted>!");
        // Innocent text is left alone: words sharing a key's start, a
        // spread-out part of the key, text with escapes of other things.
        for innocent in [
            "sk - live is what the docs call it",
            "s k - l i v e - P e r c e n t",
            "Percent9 Spread7 is a shorter run",
            "100%2D sure, 50% off, %zz and % 2D",
        ] {
            assert!(matches!(mask(innocent), Cow::Borrowed(_)), "{innocent}");
        }
        // Text around multi-byte characters is kept whole.
        assert_eq!(mask("é sk-live-Percent9 Spread7Key é"), "é <redacted> é");
    }
}
