//! What the session shows: an answer with its context, tool calls, latency
//! and tokens; the scores; the sample as it stands.
//!
//! Every text that came from outside (the agent's answer, context, tool
//! calls and model, the judge's reasons, errors, the sample's turns and
//! tags) is shown through [`eval_datasets::terminal`]: a control character
//! or a bidirectional override is shown escaped, never acted on; a
//! multi-line text keeps its line breaks.

use std::fmt::Write;

use eval_datasets::terminal::{escaped, escaped_lines};
use eval_runtime::__cli::{Paint, Probed};
use eval_runtime::Response;
use serde_json::{Map, Value};

use super::Draft;

/// Characters of a context chunk or a shown text kept on screen.
pub const SHOWN_CHARS: usize = 300;

/// The agent's answer (whole), its context, tool calls, latency and usage,
/// or why there is none.
pub fn answer(probed: &Probed, paint: Paint) -> String {
    let r = &probed.report;
    let mut s = String::new();
    if let Some(e) = &r.error
        && probed.response.is_none()
    {
        let _ = writeln!(
            s,
            "{}",
            paint.error(&format!("no answer: {}", lines(&e.to_string())))
        );
        return s;
    }
    let mut facts = vec![format!("{:.2} s", r.latency.as_secs_f64())];
    if let Some(t) = r.ttft {
        facts.push(format!("first token {:.2} s", t.as_secs_f64()));
    }
    if r.agent.tokens() > 0 {
        facts.push(format!(
            "{} tokens in, {} out",
            r.agent.prompt_tokens, r.agent.completion_tokens
        ));
    }
    if let Some(m) = &r.model {
        facts.push(format!("model {}", escaped(m)));
    }
    let _ = writeln!(s, "{} ({})", paint.heading("answer"), facts.join(", "));
    let response = probed.response.as_ref();
    if let Some(turns) = response.map(|r| &r.turn_outputs).filter(|t| t.len() > 1) {
        for (i, t) in turns.iter().enumerate() {
            let _ = writeln!(s, "  [turn {}] {}", i + 1, lines(t));
        }
    } else {
        let _ = writeln!(s, "  {}", lines(r.output.as_deref().unwrap_or("")));
    }
    if !r.context.is_empty() {
        let _ = writeln!(s, "{} ({})", paint.heading("context"), r.context.len());
        for (i, c) in r.context.iter().enumerate() {
            let _ = writeln!(s, "  [{}] {}", i + 1, lines(&cut(c, SHOWN_CHARS)));
        }
    }
    if !r.tool_calls.is_empty() {
        let _ = writeln!(s, "{}", paint.heading("tool calls"));
        for call in &r.tool_calls {
            let _ = writeln!(s, "  {} (turn {})", escaped(&call.display()), call.turn + 1);
        }
    }
    s
}

/// The scores of the metrics scored, the metrics waiting for a field, and
/// why none could be scored.
pub fn scores(probed: &Probed, paint: Paint) -> String {
    let r = &probed.report;
    let mut s = String::new();
    if probed.response.is_none() {
        return s;
    }
    if r.metrics.is_empty() && probed.waiting.is_empty() && probed.problems.is_empty() {
        if let Some(e) = &r.error {
            let _ = writeln!(
                s,
                "{}",
                paint.error(&format!("not scored: {}", lines(&e.to_string())))
            );
        } else {
            let _ = writeln!(s, "{}", paint.dim("scores: no metric"));
        }
        return s;
    }
    let _ = writeln!(s, "{}", paint.heading("scores"));
    let width = r
        .metrics
        .iter()
        .map(|m| escaped(&m.name).chars().count())
        .chain(
            probed
                .waiting
                .iter()
                .map(|w| escaped(&w.metric).chars().count()),
        )
        .max()
        .unwrap_or(0);
    for m in &r.metrics {
        let line = match (m.score, &m.error) {
            (Some(score), _) => {
                let verdict = if m.passed {
                    paint.pass("pass")
                } else {
                    paint.fail("FAIL")
                };
                format!(
                    "  {:width$}  {score:.3}  {} {:.3}  {verdict}",
                    escaped(&m.name),
                    m.op,
                    m.threshold
                )
            }
            (None, Some(e)) => format!(
                "  {:width$}  {}",
                escaped(&m.name),
                paint.error(&format!("error: {}", lines(&e.to_string())))
            ),
            (None, None) => format!(
                "  {:width$}  {}",
                escaped(&m.name),
                paint.error("not scored")
            ),
        };
        let _ = writeln!(s, "{line}");
        if let Some(reason) = &m.reason {
            let _ = writeln!(
                s,
                "  {:width$}  {}",
                "",
                paint.dim(&lines(&cut(reason, SHOWN_CHARS)))
            );
        }
    }
    for w in &probed.waiting {
        let _ = writeln!(
            s,
            "  {:width$}  {}",
            escaped(&w.metric),
            paint.note(&format!(
                "waiting for `{}` ({})",
                escaped(&w.field),
                hint(&w.field)
            ))
        );
    }
    for p in &probed.problems {
        let _ = writeln!(s, "  {}", paint.error(&format!("not scored: {}", lines(p))));
    }
    if let Some(e) = &r.error
        && !r.metrics.is_empty()
    {
        let _ = writeln!(s, "  {}", paint.error(&lines(&e.to_string())));
    }
    if r.usage.calls > 0 {
        let _ = writeln!(
            s,
            "{}",
            paint.dim(&format!(
                "judge: {} call(s), {} tokens in, {} out",
                r.usage.calls, r.usage.prompt_tokens, r.usage.completion_tokens
            ))
        );
    }
    if let Some(cost) = r.cost_usd {
        let _ = writeln!(s, "{}", paint.dim(&format!("cost: ${cost:.6}")));
    }
    s
}

/// How the sample gets `field`.
fn hint(field: &str) -> &'static str {
    match field {
        f if f.starts_with("expected_tools") => ":accept an answer with tool calls",
        f if f.starts_with("expected") => ":accept or :expect TEXT",
        _ => "a dataset field this session does not write",
    }
}

/// The sample as it stands.
pub fn draft(d: &Draft, paint: Paint) -> String {
    let mut s = String::new();
    if d.turns.is_empty() {
        return "(no sample yet: type a prompt)\n".into();
    }
    for (i, t) in d.turns.iter().enumerate() {
        let state = if i < d.sent { "" } else { " (not sent)" };
        let _ = writeln!(
            s,
            "{} {}{}: {}",
            paint.heading("turn"),
            i + 1,
            state,
            lines(t)
        );
    }
    match &d.expected {
        Some(e) => {
            let _ = writeln!(s, "{}: {}", paint.heading("expected"), lines(e));
        }
        None => {
            let _ = writeln!(
                s,
                "{}: (none; :accept or :expect TEXT)",
                paint.heading("expected")
            );
        }
    }
    if let Some(tools) = &d.expected_tools {
        let calls: Vec<String> = tools
            .iter()
            .map(|t| escaped(&t.display()).into_owned())
            .collect();
        let _ = writeln!(
            s,
            "{}: {}",
            paint.heading("expected tools"),
            calls.join(", ")
        );
    }
    let tags = if d.tags.is_empty() {
        "(none)".to_string()
    } else {
        escaped(&d.tags.join(", ")).into_owned()
    };
    let _ = writeln!(s, "{}: {tags}", paint.heading("tags"));
    if let Some((r, _)) = &d.answer {
        let _ = writeln!(
            s,
            "{}: {}",
            paint.heading("answer"),
            lines(&cut(&r.output, SHOWN_CHARS))
        );
    }
    let _ = writeln!(
        s,
        "{}",
        paint.dim(if d.dirty {
            "not appended yet"
        } else {
            "appended"
        })
    );
    s
}

/// Where an appended sample came from (seed 002's `metadata`): written by
/// a person, when, and the model that answered.
pub fn provenance(response: Option<&Response>) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("annotator".into(), Value::from("human"));
    m.insert("source".into(), Value::from("evals interactive"));
    m.insert(
        "created_at".into(),
        Value::from(iso_stamp(&eval_datasets::files::utc_stamp(
            std::time::SystemTime::now(),
        ))),
    );
    if let Some(model) = response.and_then(|r| r.model.as_deref()) {
        m.insert("agent_model".into(), Value::from(model));
    }
    m
}

/// `20261122T101500Z` as `2026-11-22T10:15:00Z`.
fn iso_stamp(stamp: &str) -> String {
    let b = stamp.as_bytes();
    if b.len() != 16 || !stamp.is_ascii() {
        return stamp.to_string();
    }
    format!(
        "{}-{}-{}T{}:{}:{}Z",
        &stamp[0..4],
        &stamp[4..6],
        &stamp[6..8],
        &stamp[9..11],
        &stamp[11..13],
        &stamp[13..15]
    )
}

/// At most `max` characters of `text`, `…` marking a cut.
pub fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// `text` (from outside) as shown: each line escaped
/// ([`escaped_lines`]), later lines indented under the first.
pub fn lines(text: &str) -> String {
    escaped_lines(text).replace('\n', "\n  ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_and_cuts() {
        assert_eq!(iso_stamp("20261122T101500Z"), "2026-11-22T10:15:00Z");
        assert_eq!(iso_stamp("odd"), "odd");
        assert_eq!(cut("ééé", 2), "éé…");
        assert_eq!(cut("ab", 2), "ab");
    }

    #[test]
    fn outside_text_is_shown_escaped_line_by_line() {
        assert_eq!(
            lines("\u{1b}[31mred\r\n\u{9b}0m\u{202e}txt"),
            "\\u{1b}[31mred\n  \\u{9b}0m\\u{202e}txt"
        );
    }
}
