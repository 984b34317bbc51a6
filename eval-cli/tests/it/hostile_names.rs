//! Every subcommand of `evals` over hostile names (issue 37, item 4): file
//! and folder names, sample ids, tags, labels, expected answers, an
//! agent's answer, a judge's reply and LangSmith's reply that carry a
//! screen clear (`ESC [2J`), a title change (OSC `ESC ]0;pwn BEL`), a
//! one-byte C1 CSI (U+009B), a right-to-left override (U+202E) and a line
//! separator (U+2028). Nothing any subcommand prints (stdout, stderr) or
//! writes as a report (JUnit, Markdown, the step summary, HTML) holds one
//! of them raw — only the layout's line breaks and tabs — and the names
//! are shown escaped (`\u{1b}[2J`), as `eval_datasets::terminal` says.
//!
//! [`COVERED`] lists the subcommands run here; a subcommand `evals --help`
//! lists and this test does not run fails it.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{code, demo_url, evals_with, repo, scratch, text};
use eval_datasets::terminal::needs_escape;

/// What the hostile names carry.
const H: &str = "\u{1b}[2J\u{1b}]0;pwn\u{7}\u{9b}31m\u{202e}\u{2028}";
/// Parts of it as shown escaped: what must appear where a name is shown.
const SHOWN: [&str; 3] = ["\\u{1b}[2J", "\\u{9b}31m", "\\u{202e}"];

/// Every subcommand (and `report`'s) this test runs.
const COVERED: &[&str] = &[
    "evaluate",
    "interactive",
    "init",
    "create",
    "lint",
    "stats",
    "guide",
    "generate",
    "convert",
    "upgrade",
    "calibrate",
    "report merge",
    "report summary",
    "report diff",
    "report accept",
    "report html",
];

/// A LangSmith API key of the length real ones have (masked when echoed).
const KEY: &str = "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";

/// The raw characters of `text` that the rule escapes, but the layout's
/// line breaks and tabs, each with what surrounds it.
fn raw(text: &str) -> Vec<String> {
    text.char_indices()
        .filter(|(_, c)| needs_escape(*c) && *c != '\n' && *c != '\t')
        .map(|(i, c)| {
            let from = text.floor_char_boundary(i.saturating_sub(60));
            format!("{c:?} after {:?}", &text[from..i])
        })
        .collect()
}

/// What the checks found (asserted empty at the end, so one run lists
/// every leak, not only the first).
static FOUND: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

fn found(problem: String) {
    FOUND.lock().unwrap().push(problem);
}

/// Notes raw escapes, a panic or the key in either stream of `out`;
/// returns them.
fn clean(what: &str, out: &Output) -> (String, String) {
    let (stdout, stderr) = text(out);
    for (stream, body) in [("stdout", &stdout), ("stderr", &stderr)] {
        let raw = raw(body);
        if !raw.is_empty() {
            found(format!(
                "`evals {what}` wrote raw escapes to {stream}: {raw:?}"
            ));
        }
        assert!(!body.contains("panicked"), "`evals {what}`: {body}");
        if body.contains(KEY) {
            found(format!("`evals {what}` printed the key on {stream}"));
        }
    }
    (stdout, stderr)
}

/// Notes raw escapes in the report at `path`; returns it.
fn clean_file(path: &Path) -> String {
    let body = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display().to_string().escape_debug()));
    let raw = raw(&body);
    if !raw.is_empty() {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        found(format!(
            "{} holds raw escapes: {raw:?}",
            name.escape_debug()
        ));
    }
    body
}

/// Notes `what` when `ok` is false (a name not shown escaped).
fn check(ok: bool, what: impl FnOnce() -> String) {
    if !ok {
        found(what());
    }
}

/// Whether `text` shows the hostile name escaped.
fn shows_escaped(text: &str) -> bool {
    SHOWN.iter().all(|s| text.contains(s))
}

/// Whether the HTML page holds the hostile name, as JSON escapes in its
/// data (its script shows them as `\u{202e}`) and escaped in its title.
fn html_holds_escaped(page: &str) -> bool {
    ["\\u001b[2J", "\\u009b31m", "\\u202e"]
        .iter()
        .all(|s| page.contains(s))
}

/// `evals ARGS` in `dir` with `env`, checked clean.
fn run(dir: &Path, what: &str, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let out = evals_with(dir, args, env);
    let (stdout, stderr) = clean(what, &out);
    (code(&out), stdout, stderr)
}

/// A loopback HTTP server: each request's line and body go to `answer`,
/// which gives the status and JSON body sent back.
fn serve(answer: impl Fn(&str, &str) -> (u16, String) + Send + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut seen = Vec::new();
            let mut buf = [0u8; 8192];
            let (head, body) = loop {
                let Ok(n @ 1..) = stream.read(&mut buf) else {
                    break (String::new(), String::new());
                };
                seen.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&seen).into_owned();
                if let Some(end) = text.find("\r\n\r\n") {
                    let len: usize = text[..end]
                        .lines()
                        .find_map(|l| {
                            let (k, v) = l.split_once(':')?;
                            k.eq_ignore_ascii_case("content-length")
                                .then(|| v.trim().parse().ok())?
                        })
                        .unwrap_or(0);
                    if seen.len() >= end + 4 + len {
                        break (text[..end].to_string(), text[end + 4..].to_string());
                    }
                }
            };
            let line = head.lines().next().unwrap_or_default().to_string();
            let (status, reply) = answer(&line, &body);
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                reply.len()
            );
        }
    });
    url
}

/// An agent speaking OpenAI's chat completions (the shape of OpenAI's API
/// reference: `choices[0].message.content`, `model`) whose answer and
/// model name carry [`H`].
fn hostile_agent() -> String {
    serve(|_, _| {
        let body = serde_json::json!({
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": format!("model{H}"),
            "choices": [{"index": 0, "finish_reason": "stop", "message": {
                "role": "assistant",
                "content": format!("Paris{H} is the answer\nsecond line {H}"),
            }}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8},
        });
        (200, body.to_string())
    })
}

/// LangSmith's dataset API as langsmith 0.1.147 (the Python SDK) calls it:
/// `POST /api/v1/datasets` answers a `Dataset` (`id: UUID`, `name`,
/// `description`, `data_type`, `created_at`, ...); `POST
/// /api/v1/examples/bulk` the examples. A hostile server answers
/// `dataset_id` as the dataset's id instead of a UUID.
fn langsmith(dataset_id: String) -> String {
    serve(move |line, _| {
        if line.contains("/api/v1/datasets") {
            let body = serde_json::json!({
                "id": dataset_id, "name": "x", "description": null, "data_type": "kv",
                "created_at": "2026-11-28T00:00:00.000000+00:00", "modified_at": null,
                "example_count": 0, "session_count": 0,
            });
            (200, body.to_string())
        } else {
            (200, "[]".to_string())
        }
    })
}

/// The hostile folder: a dataset, labels, a corpus, queries.
struct Folder {
    dir: PathBuf,
    dataset: String,
    labels: String,
    corpus: String,
    queries: String,
}

fn folder(name: &str) -> Folder {
    let dir = scratch(name);
    let dataset = format!("ev{H}il.jsonl");
    let rows = [
        serde_json::json!({"id": format!("cap{H}"), "input": "What is the capital of France?",
            "expected": format!("Paris{H}Lyon"), "tags": [format!("tag{H}")],
            "metadata": {"label": format!("label{H}"), "category": format!("cat{H}")}}),
        serde_json::json!({"id": format!("math{H}"), "input": "What is 2 + 2?",
            "expected": "4", "tags": [format!("tag{H}")],
            "metadata": {"label": format!("label{H}")}}),
    ];
    let lines: String = rows.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(dir.join(&dataset), lines).unwrap();
    // Labels for calibrate: one the scripted judge agrees with, one not.
    let context = "Retrieval-augmented generation (RAG) first retrieves documents relevant to a question and then gives them to a language model as context.";
    let output = "Retrieval-augmented generation retrieves documents relevant to a question and gives them to a language model as context.";
    let labels = format!("lab{H}els.jsonl");
    let rows = [
        serde_json::json!({"id": format!("agree{H}"), "input": "What is RAG?", "context": [context], "output": output, "label": "pass"}),
        serde_json::json!({"id": format!("disagree{H}"), "input": "What is RAG?", "context": [context], "output": output, "label": "fail"}),
        serde_json::json!({"id": format!("off{H}"), "input": "What is RAG?", "context": [context], "output": "Paris is a city in France with many old museums.", "label": "fail"}),
    ];
    let lines: String = rows.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(dir.join(&labels), lines).unwrap();
    let corpus = format!("corp{H}us");
    std::fs::create_dir_all(dir.join(&corpus)).unwrap();
    for (n, e) in std::fs::read_dir(repo().join("examples/corpus"))
        .unwrap()
        .enumerate()
    {
        let p = e.unwrap().path();
        std::fs::copy(&p, dir.join(&corpus).join(format!("doc{n}{H}.md"))).unwrap();
    }
    let queries = format!("quer{H}ies.txt");
    std::fs::write(
        dir.join(&queries),
        format!("What is retrieval-augmented generation{H}?\nHow do I reset my password{H}?\n"),
    )
    .unwrap();
    Folder {
        dir,
        dataset,
        labels,
        corpus,
        queries,
    }
}

/// The subcommands `evals --help` and `evals report --help` list.
fn listed() -> Vec<String> {
    let commands = |args: &[&str]| -> Vec<String> {
        let out = Command::new(env!("CARGO_BIN_EXE_evals"))
            .args(args)
            .output()
            .unwrap();
        let help = String::from_utf8_lossy(&out.stdout).into_owned();
        help.lines()
            .skip_while(|l| !l.starts_with("Commands:"))
            .skip(1)
            .take_while(|l| l.starts_with("  "))
            .filter_map(|l| l.split_whitespace().next().map(str::to_string))
            .filter(|c| c != "help")
            .collect()
    };
    let mut all = Vec::new();
    for c in commands(&["--help"]) {
        if c == "report" {
            all.extend(
                commands(&["report", "--help"])
                    .into_iter()
                    .map(|r| format!("report {r}")),
            );
        } else {
            all.push(c);
        }
    }
    all
}

#[test]
fn every_subcommand_is_covered_by_the_hostile_names_test() {
    let mut listed = listed();
    let mut covered: Vec<String> = COVERED.iter().map(|c| c.to_string()).collect();
    listed.sort();
    covered.sort();
    assert!(listed.len() >= 10, "{listed:?}");
    assert_eq!(
        listed, covered,
        "a subcommand is not run over hostile names here: add it to COVERED and to the test"
    );
}

#[test]
fn every_subcommand_shows_hostile_names_escaped() {
    let f = folder("hostile-names");
    let dir = &f.dir;
    let judge = eval_examples::judge::spawn(eval_examples::judge::JudgeConfig::default()).unwrap();
    let judge_url = format!("{}/v1", judge.url());
    let judged: &[(&str, &str)] = &[
        ("EVAL_JUDGE_URL", &judge_url),
        ("EVAL_JUDGE_MODEL", "scripted"),
        ("NO_COLOR", "1"),
    ];
    let mut ran: Vec<&str> = Vec::new();

    // evaluate: the demo agent, the hostile file by its literal name (it
    // holds `[`: an existing file is that file, never a pattern).
    let step = dir.join("step.md");
    let step_env = [("GITHUB_STEP_SUMMARY", step.to_str().unwrap())];
    let (c, stdout, stderr) = run(
        dir,
        "evaluate",
        &[
            "evaluate",
            &format!("ev{H}il.jsonl"),
            "--url",
            demo_url(),
            "--metrics",
            "contains",
            "--output",
            "run.json",
            "--junit",
            "run.xml",
        ],
        &step_env,
    );
    assert_eq!(c, 1, "{stdout}{stderr}");
    check(shows_escaped(&stdout), || stdout.clone());
    for report in ["run.xml", "step.md"] {
        let body = clean_file(&dir.join(report));
        check(shows_escaped(&body), || format!("{report}: {body}"));
    }
    check(
        html_holds_escaped(&clean_file(&dir.join("run.html"))),
        || "run.html".into(),
    );
    // A hostile agent's answer and model: in the summary, JUnit, HTML.
    let agent = format!("{}/v1/chat/completions", hostile_agent());
    let (c, stdout, stderr) = run(
        dir,
        "evaluate",
        &[
            "evaluate",
            &format!("ev{H}il.jsonl"),
            "--url",
            &agent,
            "--metrics",
            "exact_match",
            "--output",
            "agent.json",
            "--junit",
            "agent.xml",
            "--model",
            "m",
        ],
        &[],
    );
    assert_eq!(c, 1, "{stdout}{stderr}");
    let junit = clean_file(&dir.join("agent.xml"));
    check(junit.contains("Paris\\u{1b}[2J"), || junit.clone());
    check(
        html_holds_escaped(&clean_file(&dir.join("agent.html"))),
        || "agent.html".into(),
    );
    // The bad-glob error names the pattern escaped.
    let pattern = format!("x{H}[");
    let (c, _, stderr) = run(
        dir,
        "evaluate",
        &[
            "evaluate",
            &pattern,
            "--url",
            demo_url(),
            "--metrics",
            "contains",
        ],
        &[],
    );
    assert_eq!(c, 2, "{stderr}");
    check(stderr.contains("\\u{1b}[2J"), || stderr.clone());
    ran.push("evaluate");

    // report: summary (text, Markdown), diff (text, Markdown, JSON), merge, accept.
    let (_, stdout, _) = run(
        dir,
        "report summary",
        &["report", "summary", "run.json"],
        &[],
    );
    check(shows_escaped(&stdout), || stdout.clone());
    let (_, stdout, _) = run(
        dir,
        "report summary",
        &[
            "report",
            "summary",
            "run.json",
            "agent.json",
            "--format",
            "markdown",
        ],
        &step_env,
    );
    check(shows_escaped(&stdout), || stdout.clone());
    clean_file(&step);
    ran.push("report summary");
    for format in ["text", "markdown", "json"] {
        let (c, stdout, stderr) = run(
            dir,
            "report diff",
            &[
                "report",
                "diff",
                "run.json",
                "agent.json",
                "--format",
                format,
            ],
            &[],
        );
        assert!(c <= 1, "{stdout}{stderr}");
        if format == "json" {
            serde_json::from_str::<serde_json::Value>(&stdout).expect("still JSON");
        }
    }
    ran.push("report diff");
    let merged = format!("mer{H}ged.json");
    let (c, stdout, stderr) = run(
        dir,
        "report merge",
        &["report", "merge", &merged, "run.json", "--json"],
        &[],
    );
    assert_eq!(c, 1, "{stdout}{stderr}");
    let value: serde_json::Value = serde_json::from_str(&stdout).expect("JSON on stdout");
    assert!(
        value["samples"].to_string().contains("cap\\u001b"),
        "{value}"
    );
    check(stdout.contains("\\u202e"), || {
        "merge --json: JSON escapes".into()
    });
    let merged_html = dir.join(format!("mer{H}ged.html"));
    if merged_html.exists() {
        clean_file(&merged_html);
    }
    ran.push("report merge");
    let baseline = format!("base{H}line.json");
    let (c, stdout, stderr) = run(
        dir,
        "report accept",
        &["report", "accept", "run.json", &baseline],
        &[],
    );
    assert!(c <= 1, "{stdout}{stderr}");
    ran.push("report accept");
    let page = format!("pa{H}ge.html");
    let (c, stdout, stderr) = run(
        dir,
        "report html",
        &[
            "report",
            "html",
            "agent.json",
            "run.json",
            "--baseline",
            "run.json",
            "-o",
            &page,
        ],
        &[],
    );
    assert_eq!(c, 0, "{stdout}{stderr}");
    check(shows_escaped(&stdout), || stdout.clone());
    let body = clean_file(&dir.join(&page));
    check(html_holds_escaped(&body), || "the page".into());
    // The page's script shows every control it inserts as text escaped.
    check(body.contains("function shown(text)"), || {
        "the page escapes what it shows".into()
    });
    ran.push("report html");

    // lint, stats (text and JSON), guide, convert, upgrade.
    let (c, stdout, _) = run(dir, "lint", &["lint", &f.dataset], &[]);
    assert!(matches!(c, 0 | 1), "{stdout}");
    check(shows_escaped(&stdout), || stdout.clone());
    let (_, stdout, _) = run(dir, "lint", &["lint", ".", "--json"], &[]);
    serde_json::from_str::<serde_json::Value>(&stdout).expect("lint --json is JSON");
    ran.push("lint");
    let (_, stdout, _) = run(dir, "stats", &["stats", &f.dataset], &[]);
    check(shows_escaped(&stdout), || stdout.clone());
    let (_, stdout, _) = run(dir, "stats", &["stats", &f.dataset, "--json"], &[]);
    serde_json::from_str::<serde_json::Value>(&stdout).expect("stats --json is JSON");
    let (_, stdout, _) = run(dir, "stats", &["stats", &f.dataset, "--write"], &[]);
    check(shows_escaped(&stdout), || stdout.clone());
    ran.push("stats");
    let (c, stdout, stderr) = run(dir, "guide", &["guide", &f.dataset, "-o", "-"], &[]);
    assert_eq!(c, 0, "{stdout}{stderr}");
    let (_, stdout, _) = run(dir, "guide", &["guide", &f.dataset], &[]);
    check(shows_escaped(&stdout), || stdout.clone());
    // The files they write beside the dataset are reports too.
    clean_file(&dir.join(format!("ev{H}il-annotation-guide.md")));
    let stats = clean_file(&dir.join(format!("ev{H}il-stats.json")));
    serde_json::from_str::<serde_json::Value>(&stats).expect("the stats file is JSON");
    ran.push("guide");
    let runevals = format!("run{H}evals.json");
    let (c, stdout, stderr) = run(dir, "convert", &["convert", &f.dataset, &runevals], &[]);
    assert_eq!(c, 0, "{stdout}{stderr}");
    check(shows_escaped(&stdout), || stdout.clone());
    ran.push("convert");
    let legacy = format!("leg{H}acy.json");
    std::fs::write(
        dir.join(&legacy),
        serde_json::json!([{"testId": format!("t{H}"), "prompt": format!("Hi{H}"), "expected_response": format!("Hello{H}")}])
            .to_string(),
    )
    .unwrap();
    let (c, stdout, stderr) = run(dir, "upgrade", &["upgrade", &legacy], &[]);
    assert_eq!(c, 0, "{stdout}{stderr}");
    check(shows_escaped(&format!("{stdout}{stderr}")), || {
        format!("{stdout}{stderr}")
    });
    ran.push("upgrade");

    // calibrate, with the scripted judge: ids and the file name escaped.
    let (c, stdout, stderr) = run(
        dir,
        "calibrate",
        &[
            "calibrate",
            &f.labels,
            "--metric",
            "faithfulness >= 0.8",
            "--output",
            "cal.json",
        ],
        judged,
    );
    assert_eq!(c, 0, "{stdout}{stderr}");
    check(stdout.contains("disagree\\u{1b}[2J"), || stdout.clone());
    check(shows_escaped(&stdout), || stdout.clone());
    let (_, stdout, _) = run(
        dir,
        "calibrate",
        &[
            "calibrate",
            &f.labels,
            "--metric",
            "faithfulness >= 0.8",
            "--output",
            "cal.json",
            "--json",
        ],
        judged,
    );
    serde_json::from_str::<serde_json::Value>(&stdout).expect("calibrate --json is JSON");
    ran.push("calibrate");

    // generate, from the hostile corpus into a hostile file name.
    let generated = format!("gen{H}.jsonl");
    let (c, stdout, stderr) = run(
        dir,
        "generate",
        &["generate", &f.corpus, "-o", &generated, "--count", "10"],
        judged,
    );
    assert_eq!(c, 0, "{stdout}{stderr}");
    check(shows_escaped(&format!("{stdout}{stderr}")), || {
        format!("{stdout}{stderr}")
    });
    ran.push("generate");

    // init, into a hostile folder.
    let init = format!("in{H}it/evals.json");
    let (c, stdout, stderr) = run(dir, "init", &["init", &init], &[]);
    assert_eq!(c, 0, "{stdout}{stderr}");
    check(shows_escaped(&stdout), || stdout.clone());
    ran.push("init");

    // create, by flags: LangSmith answering a hostile id (refused, shown
    // escaped, the key masked), then the key itself as the id (masked).
    let create = |endpoint: &str, out_dir: &str| {
        let args = [
            "create",
            "--domain",
            &format!("Docs{H}"),
            "--types",
            "mixed",
            "--size",
            "10",
            "--queries",
            &f.queries,
            "--corpus",
            &f.corpus,
            "--strategy",
            "llm",
            "--organisation",
            "single",
            "--edge-cases",
            "unanswerable",
            "--yes",
            // Validation errors stop an upload (issue 38); here it is the point.
            "--force-upload",
            "--out-dir",
            out_dir,
        ];
        let env = [
            ("EVAL_JUDGE_URL", judge_url.as_str()),
            ("EVAL_JUDGE_MODEL", "scripted"),
            ("LANGSMITH_API_KEY", KEY),
            ("LANGSMITH_ENDPOINT", endpoint),
        ];
        run(dir, "create", &args, &env)
    };
    let hostile = langsmith(format!("\u{1b}]0;pwn\u{7}\u{1b}[2J{KEY}"));
    let (c, stdout, stderr) = create(&hostile, &format!("out{H}1"));
    check(c == 1 && stderr.contains("LANGSMITH_UPLOAD_FAILED"), || {
        format!("a hostile dataset id is refused: {stdout}{stderr}")
    });
    check(stderr.contains("\\u{1b}]0;pwn\\u{7}"), || stderr.clone());
    let echo = langsmith(KEY.to_string());
    let (_, stdout, stderr) = create(&echo, &format!("out{H}2"));
    assert!(stdout.contains("/api/v1/datasets/"), "{stdout}{stderr}");
    check(shows_escaped(&stdout), || stdout.clone());
    let ok = langsmith("6f0c1b9e-2a3d-4c5b-8e7f-0a1b2c3d4e5f".to_string());
    let (c, stdout, stderr) = create(&ok, &format!("out{H}3"));
    assert!(c <= 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("/api/v1/datasets/6f0c1b9e-2a3d-4c5b-8e7f-0a1b2c3d4e5f"),
        "{stdout}"
    );
    ran.push("create");

    // interactive, through a pipe: a hostile prompt, expected answer,
    // tags and dataset file name.
    let lines =
        format!("What is the capital of France?{H}\n:expect Paris{H}\n:tag t{H}\n:show\n:append\n");
    let file = format!("inter{H}active.jsonl");
    let mut child = Command::new(env!("CARGO_BIN_EXE_evals"))
        .args(["interactive", "--url", demo_url(), "--metrics", "contains"])
        .args(["--dataset", &file, "--tag", &format!("tg{H}")])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("EVAL_CACHE", "off")
        .env_remove("EVAL_AGENT_URL")
        .env_remove("EVAL_JUDGE_URL")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(lines.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = clean("interactive", &out);
    assert_eq!(code(&out), 0, "{stdout}{stderr}");
    check(shows_escaped(&stdout), || stdout.clone());
    ran.push("interactive");

    let found = std::mem::take(&mut *FOUND.lock().unwrap());
    assert!(found.is_empty(), "{}", found.join("\n\n"));
    ran.sort_unstable();
    ran.dedup();
    let mut covered = COVERED.to_vec();
    covered.sort_unstable();
    assert_eq!(ran, covered, "COVERED lists what this test runs");
}

/// The HTML page of a run over hostile names and a hostile agent, drawn
/// in headless Chromium with every sample's detail open: the text a person
/// sees (and the title) holds no raw control, bidi control or separator,
/// and shows them escaped. Skipped loudly without Chromium, unless
/// `EVAL_CI=1`.
#[test]
fn the_html_page_shows_hostile_names_escaped_in_a_browser() {
    let Some(exe) = crate::chrome::find() else {
        assert!(
            !std::env::var("EVAL_CI").is_ok_and(|v| v == "1"),
            "EVAL_CI=1 requires Chromium (apt-get install chromium)"
        );
        let _ = writeln!(
            std::io::stderr(),
            "\nSKIPPED: no Chromium found: the hostile names were NOT checked in a browser\n"
        );
        return;
    };
    let f = folder("hostile-names-browser");
    let dir = &f.dir;
    let agent = format!("{}/v1/chat/completions", hostile_agent());
    let page = format!("pa{H}ge.html");
    let out = evals_with(
        dir,
        &[
            "evaluate",
            "ev*il.jsonl",
            "--url",
            &agent,
            "--model",
            "m",
            "--metrics",
            "exact_match",
            "--output",
            "agent.json",
            "--no-html",
        ],
        &[],
    );
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    let out = evals_with(dir, &["report", "html", "agent.json", "-o", &page], &[]);
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    let mut chrome = crate::chrome::Chrome::launch(&exe, &dir.join("profile"));
    let mut tab = chrome.new_page();
    tab.open(
        &crate::chrome::file_url(&dir.join(&page)),
        std::time::Duration::from_secs(60),
    );
    let opened = tab.eval(
        "(() => { const rows = [...document.querySelectorAll('table#samples tr.sample')]; \
         rows.forEach(r => r.click()); return rows.length; })()",
    );
    assert_eq!(opened, 2, "both samples are listed");
    let shown = tab.eval("document.title + '\\n' + document.body.innerText");
    let shown = shown.as_str().expect("the page's text");
    let raw = raw(shown);
    assert!(raw.is_empty(), "the page shows raw: {raw:?}");
    assert!(shows_escaped(shown), "{shown}");
    assert!(
        shown.contains("Paris\\u{1b}[2J"),
        "the agent's answer: {shown}"
    );
}
