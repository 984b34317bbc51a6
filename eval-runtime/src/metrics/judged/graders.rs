//! Graders of other tools: letta-evals' rubric grader and runevals' 1–5 ratings.

use eval_core::Sample;
use serde_json::Value;

use super::*;

pub(super) const RUBRIC_VERSION: u32 = 1;

/// letta-evals' **rubric grader**: the rubric (the sample's `rubric` field,
/// else the spec's `rubric` text or `rubric_file`) with `{var}` placeholders
/// filled from the sample's `rubric_vars`, then `input`, `submission` (the
/// answer) and `ground_truth`/`expected`; `{{` and `}}` are literal braces.
/// The judge answers a score in 0..1 and a rationale.
pub(super) async fn rubric(
    text: Option<&str>,
    file: Option<&str>,
    sample: &Sample,
    response: &Response,
    services: &Services,
    (usage, why): (&mut Usage, &mut Option<String>),
) -> Result<f64, MetricError> {
    let template = match (
        sample.extra.get("rubric").and_then(Value::as_str),
        text,
        file,
    ) {
        (Some(own), _, _) => own.to_string(),
        (None, Some(t), _) => t.to_string(),
        (None, None, Some(f)) => {
            // A plan reads rubric files when it is loaded; this is for a
            // spec scored directly, relative to the crate as documented.
            let base = crate::config::Config::global()
                .map(|c| c.base_dir())
                .unwrap_or_default();
            std::fs::read_to_string(base.join(f))
                .map_err(|e| format!("cannot read rubric_file `{f}`: {e}"))?
        }
        (None, None, None) => {
            return Err("`rubric` needs a rubric: the sample's `rubric` field, `rubric = \"...\"` or `rubric_file = \"...\"`".into());
        }
    };
    // As letta-evals does, the judge always sees the question, the expected
    // answer and the submission, whatever the rubric's placeholders.
    let mut prompt = fill_template(&template, sample, &response.output)?;
    prompt.push_str(&format!(
        "\n\n## Question\n{}\n",
        sample.input.display_text()
    ));
    if let Some(expected) = &sample.expected {
        prompt.push_str(&format!(
            "\n## Expected answer\n{}\n",
            expected.display_text()
        ));
    }
    prompt.push_str(&format!("\n## Submission\n{}\n", response.output));
    let judge = judge(services, "rubric")?;
    let reply = judge
        .ask_checked(
            "rubric",
            RUBRIC_VERSION,
            (
                "TASK rubric. Grade the submission by the rubric. Reply with JSON only: \
              {\"score\": <a number from 0 to 1>, \"rationale\": \"...\"}.",
                &prompt,
            ),
            usage,
            &|v| score_in(v, "score", 0.0, 1.0, false).map(|_| ()),
        )
        .await
        .map_err(MetricError::Service)?;
    *why = judge_reason(&reply);
    Ok(score_in(&reply, "score", 0.0, 1.0, false).map_err(|e| format!("the judge's {e}"))?)
}

/// Fills `{name}` placeholders; a name with no value is an error naming it.
pub fn fill_template(template: &str, sample: &Sample, submission: &str) -> Result<String, String> {
    let value = |name: &str| -> Option<String> {
        if let Some(v) = sample.rubric_vars.get(name) {
            return Some(match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
        }
        match name {
            "input" => Some(sample.input.display_text()),
            "submission" | "output" => Some(submission.to_string()),
            "ground_truth" | "expected" => sample.expected.as_ref().map(|e| e.display_text()),
            _ => None,
        }
    };
    let mut out = String::with_capacity(template.len() + submission.len());
    let mut rest = template;
    let mut missing: Vec<String> = Vec::new();
    while let Some(at) = rest.find(['{', '}']) {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
            continue;
        }
        if tail.starts_with('{')
            && let Some(end) = tail.find('}')
        {
            let name = &tail[1..end];
            if !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                match value(name) {
                    Some(v) => out.push_str(&v),
                    None => {
                        if !missing.iter().any(|m| m == name) {
                            missing.push(name.to_string());
                        }
                    }
                }
                rest = &tail[end + 1..];
                continue;
            }
        }
        out.push_str(&tail[..1]);
        rest = &tail[1..];
    }
    out.push_str(rest);
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(format!(
            "the rubric uses {} with no value: add {} to the sample's `rubric_vars`",
            missing
                .iter()
                .map(|m| format!("{{{m}}}"))
                .collect::<Vec<_>>()
                .join(", "),
            if missing.len() == 1 { "it" } else { "them" }
        ))
    }
}

pub(super) const RATING_VERSION: u32 = 1;

/// runevals' 1–5 ratings (Relevance, Coherence, Groundedness, Similarity):
/// the judge rates the answer 1 to 5; the raw rating is kept and the score
/// is `(rating - 1) / 4`, so 3 of 5 is 0.5.
pub(super) async fn rating(
    kind: eval_core::metric::Rating,
    sample: &Sample,
    response: &Response,
    services: &Services,
    usage: &mut Usage,
    why: &mut Option<String>,
) -> Result<f64, MetricError> {
    use eval_core::metric::Rating;
    let (name, question, material) = match kind {
        Rating::Relevance => (
            "relevance",
            "how well the response addresses the query: 1 not at all, 5 completely and directly",
            format!(
                "Query: {}\nResponse: {}",
                sample.input.last(),
                response.output
            ),
        ),
        Rating::Coherence => (
            "coherence",
            "how clear, well organised and logically consistent the response reads: 1 incoherent, 5 perfectly coherent",
            format!(
                "Query: {}\nResponse: {}",
                sample.input.last(),
                response.output
            ),
        ),
        Rating::Groundedness => {
            let context = retrieved(sample, response);
            if context.is_empty() {
                return Err("`groundedness` needs context: the agent returned none and the sample has no `context` field".into());
            }
            (
                "groundedness",
                "how fully the context supports every claim of the response: 1 unsupported, 5 fully grounded",
                format!(
                    "Context:\n{}\nResponse: {}",
                    context.join("\n"),
                    response.output
                ),
            )
        }
        Rating::Similarity => {
            let Some(expected) = sample.expected_text() else {
                return Err("`similarity` needs an expected answer".into());
            };
            (
                "similarity",
                "how similar in meaning the response is to the expected response: 1 unrelated, 5 equivalent",
                format!(
                    "Query: {}\nExpected: {expected}\nResponse: {}",
                    sample.input.last(),
                    response.output
                ),
            )
        }
        _ => return Err("this rating is not supported by this version".into()),
    };
    let judge = judge(services, name)?;
    let reply = judge
        .ask_checked(
            name,
            RATING_VERSION,
            (
                &format!(
                    "TASK rating/{name}. Rate {question}. Reply with JSON only: {{\"rating\": <an \
                 integer from 1 to 5>, \"reason\": \"...\"}}."
                ),
                &material,
            ),
            usage,
            &|v| score_in(v, "rating", 1.0, 5.0, true).map(|_| ()),
        )
        .await
        .map_err(MetricError::Service)?;
    *why = judge_reason(&reply);
    Ok(score_in(&reply, "rating", 1.0, 5.0, true).map_err(|e| format!("the judge's {e}"))?)
}
