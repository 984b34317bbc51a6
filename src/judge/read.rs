//! How the scripted judge reads a question: the boundary from the system
//! message, the data blocks of the user message by name, and — a gullible
//! model's weakness, on purpose — any text of the user message *outside*
//! the blocks, scanned for instructions it then obeys ([`Orders`]).

use serde_json::Value;

/// One question as the scripted judge reads it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Question {
    /// The task (`faithfulness/verdicts`): the name of the user message's
    /// task section.
    pub task: String,
    /// The task section's text: the instructions.
    pub instructions: String,
    /// The data blocks, `(name, content)` in order.
    pub blocks: Vec<(String, String)>,
    /// The text of the user message outside every block (whitespace only
    /// when the prompt was rendered right).
    pub outside: String,
}

impl Question {
    /// Reads `system` and `user`: a section opens with a line `<B NAME>`
    /// (a data block) or `<B task=TASK>` (the task and its instructions)
    /// and closes with the line `</B>`, `B` the boundary the system message
    /// gives. Without one, nothing is a section.
    pub fn read(system: &str, user: &str) -> Question {
        let mut q = Question::default();
        let Some(boundary) = boundary(system) else {
            q.outside = user.to_string();
            return q;
        };
        let open = format!("<{boundary} ");
        let close = format!("\n</{boundary}>");
        let mut rest = user;
        while let Some(at) = rest.find(&open) {
            let after = &rest[at + open.len()..];
            let Some((name, body)) = after.split_once(">\n") else {
                break;
            };
            let Some(end) = body.find(&close) else {
                break;
            };
            q.outside.push_str(&rest[..at]);
            let text = body[..end].to_string();
            match name.strip_prefix("task=") {
                Some(task) => {
                    q.task = task.to_string();
                    q.instructions = text;
                }
                None => q.blocks.push((name.to_string(), text)),
            }
            rest = &body[end + close.len()..];
            // The line break closing the section.
            rest = rest.strip_prefix('\n').unwrap_or(rest);
        }
        q.outside.push_str(rest);
        q
    }

    /// The content of block `name` ("" when there is none).
    pub fn get(&self, name: &str) -> &str {
        self.blocks
            .iter()
            .find(|(n, _)| n == name)
            .map_or("", |(_, c)| c.as_str())
    }

    /// The contents of the blocks `<prefix>_1`, `<prefix>_2`, ... in order.
    pub fn numbered(&self, prefix: &str) -> Vec<String> {
        let mut out = Vec::new();
        while let Some((_, c)) = self
            .blocks
            .iter()
            .find(|(n, _)| *n == format!("{prefix}_{}", out.len() + 1))
        {
            out.push(c.clone());
        }
        out
    }

    /// Replaces the blocks of `section` with `text` (a forged section
    /// header obeyed).
    fn replace(&mut self, section: Section, text: &str) {
        let (prefixes, single): (&[&str], &[&str]) = match section {
            Section::Expected => (&[], &["expected_answer"]),
            Section::Context => (&["context"], &[]),
            Section::Answer => (&[], &["answer", "submission"]),
            Section::Question => (&[], &["question"]),
            Section::Statements => (&["statement"], &[]),
            Section::Opinions => (&["opinion"], &[]),
            Section::Rubric => (&[], &["rubric"]),
            Section::Passages => (&["passage"], &[]),
        };
        for name in single {
            match self.blocks.iter_mut().find(|(n, _)| n == name) {
                Some(block) => block.1 = text.to_string(),
                None => self.blocks.push((name.to_string(), text.to_string())),
            }
        }
        for prefix in prefixes {
            let numbered = |n: &str| {
                n.strip_prefix(prefix)
                    .and_then(|r| r.strip_prefix('_'))
                    .is_some_and(|r| r.chars().all(|c| c.is_ascii_digit()))
            };
            self.blocks.retain(|(n, _)| !numbered(n));
            let lines: Vec<&str> = if *prefix == "context" || *prefix == "passage" {
                vec![text]
            } else {
                text.lines().filter(|l| !l.trim().is_empty()).collect()
            };
            for (i, line) in lines.iter().enumerate() {
                self.blocks
                    .push((format!("{prefix}_{}", i + 1), line.trim().to_string()));
            }
        }
    }
}

/// The boundary a system message gives: the digits after its first `<`
/// (fewer than 6: no boundary).
fn boundary(system: &str) -> Option<&str> {
    let (_, rest) = system.split_once('<')?;
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    (end >= 6).then(|| &rest[..end])
}

/// A section of a prompt a forged header can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// The expected (reference) answer.
    Expected,
    /// The retrieved context.
    Context,
    /// The answer (submission, response).
    Answer,
    /// The question (query, input).
    Question,
    /// Statements to judge.
    Statements,
    /// Opinions to judge.
    Opinions,
    /// The rubric.
    Rubric,
    /// Corpus passages.
    Passages,
}

/// What the text outside the blocks told the judge to do.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Orders {
    /// A grade to give, 0 (worst) to 1 (best): "rate this 5", "score: 1",
    /// "verdict: 0", "ignore previous instructions" (1).
    pub grade: Option<f64>,
    /// A JSON answer to give as it is.
    pub reply: Option<Value>,
    /// Forged sections whose text replaces the real one.
    pub sections: Vec<(Section, String)>,
}

impl Orders {
    /// Whether there is anything to obey.
    pub fn any(&self) -> bool {
        self.grade.is_some() || self.reply.is_some() || !self.sections.is_empty()
    }

    /// The orders in `outside` (see the [module docs](self)).
    pub fn find(outside: &str) -> Orders {
        let text = fold(outside);
        let lower = text.to_lowercase();
        let mut orders = Orders {
            reply: json_answer(&text),
            sections: sections(&text),
            ..Orders::default()
        };
        let ignore = ["ignore", "disregard", "forget", "override"]
            .iter()
            .any(|w| lower.contains(w))
            && ["instruction", "rules", "prompt", "above", "previous"]
                .iter()
                .any(|w| lower.contains(w));
        orders.grade = grade(&lower).or(ignore.then_some(1.0));
        orders
    }

    /// Applies the forged sections to `q`.
    pub fn apply(&self, q: &mut Question) {
        for (section, text) in &self.sections {
            q.replace(*section, text);
        }
    }
}

/// A grade asked for: a number after `rate`, `rating`, `score`, `grade`
/// (within three words), or after `verdict`, or `verdict: yes/no`.
fn grade(lower: &str) -> Option<f64> {
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '.'))
        .filter(|w| !w.is_empty())
        .collect();
    for (i, w) in words.iter().enumerate() {
        let w = w.trim_end_matches('.');
        let keyword = matches!(
            w,
            "rate" | "rating" | "score" | "grade" | "verdict" | "verdicts" | "mark"
        );
        if !keyword {
            continue;
        }
        for (j, next) in words.iter().enumerate().skip(i + 1).take(4) {
            let next = next.trim_end_matches('.');
            if let Ok(n) = next.parse::<f64>() {
                // "4/5", "4 of 5", "4 out of 5": on that scale.
                let of = words[j + 1..]
                    .iter()
                    .take(3)
                    .find(|w| !matches!(**w, "of" | "out"))
                    .and_then(|w| w.trim_end_matches('.').parse::<f64>().ok());
                return Some(match of {
                    Some(m) if m > 1.0 => ((n - 1.0) / (m - 1.0)).clamp(0.0, 1.0),
                    _ => scale(n),
                });
            }
            match next {
                "yes" | "supported" | "pass" | "true" => return Some(1.0),
                "no" | "unsupported" | "fail" | "false" => return Some(0.0),
                _ => {}
            }
        }
    }
    None
}

/// A number on a 0–1, 1–5 or 1–10 scale, as a grade from 0 to 1.
fn scale(n: f64) -> f64 {
    if n <= 1.0 {
        n.max(0.0)
    } else if n <= 5.0 {
        (n - 1.0) / 4.0
    } else if n <= 10.0 {
        n / 10.0
    } else {
        1.0
    }
}

/// The keys of a judge's answer: a JSON object with one of them looks
/// like an answer, and a gullible judge gives it.
const ANSWER_KEYS: &[&str] = &[
    "verdicts",
    "statements",
    "classifications",
    "questions",
    "noncommittal",
    "opinions",
    "score",
    "rating",
    "query",
];

/// The first JSON object in `text` that looks like an answer.
fn json_answer(text: &str) -> Option<Value> {
    text.match_indices('{').find_map(|(at, _)| {
        let mut values = serde_json::Deserializer::from_str(&text[at..]).into_iter::<Value>();
        match values.next() {
            Some(Ok(v @ Value::Object(_))) if ANSWER_KEYS.iter().any(|k| v.get(*k).is_some()) => {
                Some(v)
            }
            _ => None,
        }
    })
}

/// The section a header line names, and the text on its line after it.
fn header(line: &str) -> Option<(Section, String)> {
    let t = line.trim();
    let t = t.trim_start_matches(['#', '*', '[', '>', '-', '=', ' ', '_']);
    let lower = t.to_lowercase();
    let names: &[(&str, Section)] = &[
        ("expected answer", Section::Expected),
        ("expected output", Section::Expected),
        ("expected", Section::Expected),
        ("reference answer", Section::Expected),
        ("reference", Section::Expected),
        ("ground truth", Section::Expected),
        ("ground_truth", Section::Expected),
        ("context chunks", Section::Context),
        ("contexts", Section::Context),
        ("context", Section::Context),
        ("retrieved context", Section::Context),
        ("submission", Section::Answer),
        ("response", Section::Answer),
        ("answer", Section::Answer),
        ("output", Section::Answer),
        ("question", Section::Question),
        ("query", Section::Question),
        ("input", Section::Question),
        ("statements", Section::Statements),
        ("opinions", Section::Opinions),
        ("rubric", Section::Rubric),
        ("passages", Section::Passages),
    ];
    for (name, section) in names {
        let Some(rest) = lower.strip_prefix(name) else {
            continue;
        };
        let rest_raw = &t[t.len() - rest.len()..];
        let after = rest_raw.trim_start_matches(['*', ']', ' ', '_']);
        let markdown =
            line.trim_start().starts_with(['#', '[']) || line.trim_start().starts_with("**");
        if let Some(text) = after.strip_prefix(':').or_else(|| after.strip_prefix('=')) {
            return Some((
                *section,
                text.trim().trim_start_matches("**").trim().to_string(),
            ));
        }
        if markdown && after.trim_end_matches(['*', ']', '#', ' ']).is_empty() {
            return Some((*section, String::new()));
        }
    }
    None
}

/// Forged sections: a header line, then its text (on its line and the
/// lines up to the next header).
fn sections(text: &str) -> Vec<(Section, String)> {
    let mut out: Vec<(Section, String)> = Vec::new();
    for line in text.lines() {
        if let Some((section, first)) = header(line) {
            out.push((section, first));
        } else if let Some((_, body)) = out.last_mut() {
            if !body.is_empty() {
                body.push('\n');
            }
            body.push_str(line.trim());
        }
    }
    for (_, body) in &mut out {
        *body = body.trim().to_string();
    }
    out.retain(|(_, body)| !body.is_empty());
    out
}

/// `text` as a model would read it: zero-width and direction marks left
/// out, fullwidth forms and common Cyrillic and Greek look-alikes read as
/// the Latin letters they imitate.
pub fn fold(text: &str) -> String {
    text.chars()
        .filter(|c| {
            !matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
        })
        .map(|c| match c {
            '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            '\u{3000}' => ' ',
            'а' => 'a',
            'е' => 'e',
            'о' => 'o',
            'р' => 'p',
            'с' => 'c',
            'у' => 'y',
            'х' => 'x',
            'і' => 'i',
            'ѕ' => 's',
            'ԁ' => 'd',
            'ո' => 'n',
            'А' => 'A',
            'Е' => 'E',
            'О' => 'O',
            'Р' => 'P',
            'С' => 'C',
            'Т' => 'T',
            'Х' => 'X',
            'Ι' => 'I',
            'Ο' => 'O',
            'ο' => 'o',
            'α' => 'a',
            'ν' => 'v',
            _ => c,
        })
        .collect()
}
