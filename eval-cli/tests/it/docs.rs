//! The README's and the guide's (`docs/src/*.md`) examples are held to what
//! the code does, so the docs cannot rot:
//!
//! * every shell command of a `sh`/`bash`/`console` block (and every `run:`
//!   step of a `yaml` block) that calls `evals` names a real subcommand and
//!   only flags that subcommand's `--help` lists; those that are safe offline
//!   on the bundled example datasets (`lint`, `stats`, `guide`, `convert`,
//!   `init`) are run in a scratch copy of `examples/` and must succeed;
//! * every `cargo` command names packages, `--test`, `--example` and `--bin`
//!   targets and `--path` directories that exist (nextest's `binary(...)`
//!   filters too);
//! * every relative link leads to a file, and every `#anchor` to a heading;
//! * every chapter is in `SUMMARY.md` and in `docs/doctests.rs`, whose
//!   doctests compile the Rust blocks (`cargo test -p eval-guide --doc`);
//!   every code block says its language, and none is `ignore` without a
//!   reason.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root")
        .to_path_buf()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// README.md and every chapter, as (path shown, path, text).
fn docs() -> Vec<(String, PathBuf, String)> {
    let mut paths = vec![repo().join("README.md")];
    let mut chapters: Vec<PathBuf> = std::fs::read_dir(repo().join("docs/src"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    chapters.sort();
    paths.extend(chapters);
    paths
        .into_iter()
        .map(|p| {
            let shown = p.strip_prefix(repo()).unwrap().display().to_string();
            let text = with_yaml_included(&p, &read(&p));
            (shown, p, text)
        })
        .collect()
}

/// `text` (of the chapter at `path`) with each mdBook `{{#include F}}` line
/// of a YAML file `F` replaced by the file: a workflow kept as a real file
/// (`docs/src/ci/evals.yml`) has its `run:` steps checked as if written in.
fn with_yaml_included(path: &Path, text: &str) -> String {
    text.lines()
        .map(|line| {
            let file = line
                .trim()
                .strip_prefix("{{#include ")
                .and_then(|l| l.strip_suffix("}}"))
                .filter(|f| f.ends_with(".yml") || f.ends_with(".yaml"));
            match file {
                Some(f) => read(&path.parent().unwrap().join(f.trim()))
                    .trim_end()
                    .to_string(),
                None => line.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// A fenced code block: its info string, its first line's number, its lines.
struct Block {
    info: String,
    line: usize,
    lines: Vec<String>,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<(String, Block)> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        match &mut open {
            None => {
                if let Some(fence) = ["````", "```"].iter().find(|f| trimmed.starts_with(**f)) {
                    open = Some((
                        fence.to_string(),
                        Block {
                            info: trimmed[fence.len()..].trim().to_string(),
                            line: i + 1,
                            lines: Vec::new(),
                        },
                    ));
                }
            }
            Some((fence, block)) => {
                if trimmed.starts_with(fence.as_str()) && trimmed.trim_end() == fence {
                    out.push(open.take().unwrap().1);
                } else {
                    block.lines.push(line.to_string());
                }
            }
        }
    }
    assert!(open.is_none(), "a code block is never closed");
    out
}

/// Text outside code blocks (inline code spans removed), line by line.
fn prose(text: &str) -> Vec<String> {
    let mut fence: Option<&str> = None;
    let mut out = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        match fence {
            Some(f) if t.trim_end() == f => fence = None,
            Some(_) => {}
            None if t.starts_with("````") => fence = Some("````"),
            None if t.starts_with("```") => fence = Some("```"),
            None => out.push(without_code_spans(line)),
        }
    }
    out
}

fn without_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(i) = rest.find('`') {
        out.push_str(&rest[..i]);
        let ticks = rest[i..].chars().take_while(|c| *c == '`').count();
        let after = &rest[i + ticks..];
        let close = "`".repeat(ticks);
        match after.find(&close) {
            Some(j) => rest = &after[j + ticks..],
            None => {
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

// ---------------------------------------------------------------- shell --

#[derive(Debug, Clone)]
pub(crate) struct Tok {
    pub(crate) text: String,
    pub(crate) quoted: bool,
}

/// Splits a shell line into words (quotes and backslashes as the shell
/// reads them), dropping a `#` comment.
fn words(line: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                in_word = true;
                quoted = true;
                for d in chars.by_ref() {
                    if d == c {
                        break;
                    }
                    cur.push(d);
                }
            }
            '\\' => {
                in_word = true;
                if let Some(d) = chars.next() {
                    cur.push(d);
                }
            }
            '#' if !in_word => break,
            c if c.is_whitespace() => {
                if in_word {
                    out.push(Tok {
                        text: std::mem::take(&mut cur),
                        quoted,
                    });
                    in_word = false;
                    quoted = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(Tok { text: cur, quoted });
    }
    out
}

/// One command as written in the docs: where, and its words.
#[derive(Debug, Clone)]
pub(crate) struct Cmd {
    pub(crate) at: String,
    pub(crate) words: Vec<Tok>,
}

impl Cmd {
    fn shown(&self) -> String {
        self.words
            .iter()
            .map(|w| w.text.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The logical command lines of a block: `\` continuations joined, and (in
/// a synopsis) an indented line of `[--options]` or a comment joined to the
/// command above it. `console` blocks: only `$ ` lines are commands.
fn command_lines(block: &Block) -> Vec<(usize, String)> {
    let lang = block.info.split([',', ' ']).next().unwrap_or("");
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut continued = false;
    for (i, raw) in block.lines.iter().enumerate() {
        let n = block.line + 1 + i;
        let mut line = raw.trim_end().to_string();
        if lang == "yaml" {
            let t = line.trim_start().trim_start_matches("- ").trim_start();
            match t.strip_prefix("run:") {
                Some(cmd) => out.push((n, cmd.trim().to_string())),
                None => continue,
            }
            continue;
        }
        if lang == "console" && !continued {
            match line.strip_prefix("$ ") {
                Some(cmd) => line = cmd.to_string(),
                None => continue,
            }
        }
        let t = line.trim_start();
        let joins = continued
            || (!out.is_empty()
                && line.starts_with(char::is_whitespace)
                && (t.starts_with('[') || t.starts_with("--") || t.starts_with('#')));
        continued = line.ends_with('\\');
        let body = line.trim_end_matches('\\').to_string();
        if joins {
            let last = out.last_mut().unwrap();
            last.1.push(' ');
            last.1.push_str(&body);
        } else if !t.is_empty() && !t.starts_with('#') {
            out.push((n, body));
        }
    }
    out
}

/// The commands of a logical line: split at unquoted `|` (outside a
/// synopsis' `[...]`), `||`, `&&` and `;`; redirections and leading
/// `NAME=value` assignments dropped.
fn commands(at: &str, line: &str) -> Vec<Cmd> {
    let mut out = Vec::new();
    let mut cur: Vec<Tok> = Vec::new();
    let mut depth = 0i32;
    let mut skip_next = false;
    for w in words(line) {
        if skip_next {
            skip_next = false;
            continue;
        }
        if !w.quoted {
            depth += w.text.matches('[').count() as i32 - w.text.matches(']').count() as i32;
            let t = w.text.as_str();
            if (t == "|" && depth == 0) || t == "||" || t == "&&" || t == ";" {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            if [">", ">>", "<", "2>"].contains(&t) {
                skip_next = true;
                continue;
            }
            if t == "2>&1" {
                continue;
            }
        }
        cur.push(w);
    }
    out.push(cur);
    out.into_iter()
        .map(|mut words| {
            while words.first().is_some_and(|w| {
                !w.quoted
                    && w.text.split_once('=').is_some_and(|(k, _)| {
                        !k.is_empty() && k.chars().all(|c| c.is_ascii_uppercase() || c == '_')
                    })
            }) {
                words.remove(0);
            }
            Cmd {
                at: at.to_string(),
                words,
            }
        })
        .filter(|c| !c.words.is_empty())
        .collect()
}

/// Every shell command of the docs.
pub(crate) fn shell_commands() -> Vec<Cmd> {
    let mut out = Vec::new();
    for (shown, _, text) in docs() {
        for block in blocks(&text) {
            let lang = block.info.split([',', ' ']).next().unwrap_or("");
            if !["sh", "bash", "shell", "console", "yaml"].contains(&lang) {
                continue;
            }
            for (n, line) in command_lines(&block) {
                out.extend(commands(&format!("{shown}:{n}"), &line));
            }
        }
    }
    out
}

/// A word without the synopsis' brackets and repetition marks.
pub(crate) fn bare(word: &str) -> &str {
    word.trim_start_matches('[')
        .trim_end_matches("...")
        .trim_end_matches('…')
        .trim_end_matches(']')
        .trim_end_matches("...")
}

/// The flags a word names: `--flag`, `--flag=value`, `-o`.
fn flag_of(word: &Tok) -> Option<String> {
    if word.quoted {
        return None;
    }
    let w = bare(&word.text);
    if let Some(long) = w.strip_prefix("--") {
        let name: String = long
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        return (!name.is_empty()).then(|| format!("--{name}"));
    }
    let short = w.strip_prefix('-')?;
    (short.len() == 1 && short.chars().all(|c| c.is_ascii_alphabetic())).then(|| w.to_string())
}

/// `evals ARGS --help`, cached: its flags and its subcommands.
struct Help {
    flags: BTreeSet<String>,
    subcommands: BTreeSet<String>,
}

fn help(path: &[String]) -> Option<&'static Help> {
    static CACHE: Mutex<BTreeMap<Vec<String>, Option<&'static Help>>> = Mutex::new(BTreeMap::new());
    let mut cache = CACHE.lock().unwrap();
    if let Some(h) = cache.get(path) {
        return *h;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_evals"))
        .args(path)
        .arg("--help")
        .env("NO_COLOR", "1")
        .output()
        .expect("run evals --help");
    let found = out.status.success().then(|| {
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut flags = BTreeSet::new();
        let mut subcommands = BTreeSet::new();
        let mut in_commands = false;
        for line in text.lines() {
            if line.ends_with(':') && !line.starts_with(' ') {
                in_commands = line == "Commands:";
                continue;
            }
            let t = line.trim_start();
            if in_commands
                && line.starts_with("  ")
                && let Some(name) = t.split_whitespace().next()
            {
                subcommands.insert(name.to_string());
            }
            // Option lines: `  -o, --output <FILE>  ...` or `      --json  ...`:
            // the spec ends at the first run of two spaces.
            if t.starts_with('-') {
                let spec = t.split("  ").next().unwrap_or("");
                for w in spec.split([' ', ',']) {
                    if w.starts_with('-') && w.len() > 1 {
                        flags.insert(w.split(['=', '[']).next().unwrap().to_string());
                    }
                }
            }
        }
        &*Box::leak(Box::new(Help { flags, subcommands }))
    });
    cache.insert(path.to_vec(), found);
    found
}

/// What an `evals` command names: its subcommand path and its flags.
fn check_evals(cmd: &Cmd) -> Result<Vec<String>, String> {
    let args = &cmd.words[1..];
    let mut path: Vec<String> = Vec::new();
    let mut i = 0;
    loop {
        let Some(h) = help(&path) else {
            return Err(format!("`evals {} --help` fails", path.join(" ")));
        };
        if h.subcommands.is_empty() {
            break;
        }
        let Some(next) = args.get(i) else {
            return Err(format!("`evals {}` needs a subcommand", path.join(" ")));
        };
        if !h.subcommands.contains(&next.text) {
            return Err(format!(
                "`evals {}` has no subcommand `{}` (it has: {:?})",
                path.join(" "),
                next.text,
                h.subcommands
            ));
        }
        path.push(next.text.clone());
        i += 1;
    }
    let h = help(&path).unwrap();
    for w in &args[i..] {
        if w.text == "--" {
            break;
        }
        if let Some(flag) = flag_of(w)
            && !h.flags.contains(&flag)
        {
            return Err(format!(
                "`evals {}` has no flag `{flag}` (it has: {:?})",
                path.join(" "),
                h.flags
            ));
        }
    }
    Ok(path)
}

/// Packages of the workspace: name → directory.
fn packages() -> BTreeMap<String, PathBuf> {
    let root = read(&repo().join("Cargo.toml"));
    let members: Vec<String> = root
        .lines()
        .find(|l| l.trim_start().starts_with("members"))
        .expect("workspace members")
        .split('"')
        .skip(1)
        .step_by(2)
        .map(String::from)
        .collect();
    let mut out = BTreeMap::new();
    for dir in std::iter::once(repo()).chain(members.iter().map(|m| repo().join(m))) {
        let toml = read(&dir.join("Cargo.toml"));
        let name = toml
            .split("[package]")
            .nth(1)
            .and_then(|p| p.lines().find(|l| l.trim_start().starts_with("name")))
            .and_then(|l| l.split('"').nth(1))
            .unwrap_or_else(|| panic!("{}: no package name", dir.display()))
            .to_string();
        out.insert(name, dir);
    }
    out
}

/// A package's targets of one kind (`test`, `example`, `bin`): those its
/// Cargo.toml declares and those cargo finds by itself.
fn targets(dir: &Path, kind: &str) -> BTreeSet<String> {
    let toml = read(&dir.join("Cargo.toml"));
    let mut out = BTreeSet::new();
    let mut section = String::new();
    for line in toml.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            section = t.to_string();
        } else if section == format!("[[{kind}]]")
            && t.starts_with("name")
            && let Some(name) = t.split('"').nth(1)
        {
            out.insert(name.to_string());
        }
    }
    let (auto_dir, auto_key) = match kind {
        "test" => ("tests", "autotests = false"),
        "example" => ("examples", "autoexamples = false"),
        _ => ("src/bin", "autobins = false"),
    };
    if !toml.contains(auto_key)
        && let Ok(entries) = std::fs::read_dir(dir.join(auto_dir))
    {
        for e in entries {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|e| e == "rs") {
                out.insert(p.file_stem().unwrap().to_string_lossy().into_owned());
            } else if p.join("main.rs").is_file() {
                // A folder with a main.rs is one target (`tests/it/`).
                out.insert(p.file_name().unwrap().to_string_lossy().into_owned());
            }
        }
    }
    if kind == "bin" && dir.join("src/main.rs").exists() {
        out.extend(toml.split("[package]").nth(1).and_then(|p| {
            p.lines()
                .find(|l| l.trim_start().starts_with("name"))
                .and_then(|l| l.split('"').nth(1).map(String::from))
        }));
    }
    out
}

/// What a `cargo` command names exists: packages, targets, paths.
fn check_cargo(cmd: &Cmd) -> Result<(), String> {
    let packages = packages();
    let words: Vec<&str> = cmd.words.iter().map(|w| w.text.as_str()).collect();
    let sub = words.get(1).copied().unwrap_or("");
    let value = |flag: &str| -> Vec<&str> {
        words
            .windows(2)
            .take_while(|w| w[0] != "--")
            .filter(|w| w[0] == flag)
            .map(|w| w[1])
            .collect()
    };
    let mut dirs: Vec<(&String, &PathBuf)> = Vec::new();
    let mut named = value("-p");
    named.extend(value("--package"));
    for p in &named {
        match packages.get_key_value(*p) {
            Some(kv) => dirs.push(kv),
            None => return Err(format!("no package `{p}` in the workspace")),
        }
    }
    if dirs.is_empty() {
        // The root package, or (with --workspace / nextest) any.
        dirs = if words.contains(&"--workspace") || sub == "nextest" {
            packages.iter().collect()
        } else {
            packages.iter().filter(|(_, d)| **d == repo()).collect()
        };
    }
    for (kind, flag) in [
        ("test", "--test"),
        ("example", "--example"),
        ("bin", "--bin"),
    ] {
        for name in value(flag) {
            if !dirs.iter().any(|(_, d)| targets(d, kind).contains(name)) {
                return Err(format!(
                    "no {kind} target `{name}` (in {:?})",
                    dirs.iter().map(|(n, _)| n).collect::<Vec<_>>()
                ));
            }
        }
    }
    for path in value("--path") {
        if !repo().join(path).join("Cargo.toml").exists() {
            return Err(format!("--path {path}: no package there"));
        }
    }
    if sub == "nextest" {
        let all_tests: BTreeSet<String> =
            packages.values().flat_map(|d| targets(d, "test")).collect();
        for expr in value("-E") {
            for part in expr.split("binary(").skip(1) {
                let name = part.split(')').next().unwrap();
                if !all_tests.contains(name) {
                    return Err(format!("nextest filter names no test binary `{name}`"));
                }
            }
        }
    }
    Ok(())
}

#[test]
fn shell_examples_name_real_subcommands_flags_and_targets() {
    let commands = shell_commands();
    let mut problems = Vec::new();
    let (mut evals, mut cargo) = (0, 0);
    for cmd in &commands {
        let program = cmd.words[0].text.as_str();
        let result = match program {
            "evals" => {
                evals += 1;
                check_evals(cmd).map(|_| ())
            }
            "cargo" => {
                cargo += 1;
                check_cargo(cmd)
            }
            _ => Ok(()),
        };
        if let Err(e) = result {
            problems.push(format!("{}: `{}`: {e}", cmd.at, cmd.shown()));
        }
    }
    eprintln!(
        "checked {evals} `evals` and {cargo} `cargo` commands of {} shell commands in the docs",
        commands.len()
    );
    assert!(
        evals >= 20 && cargo >= 5,
        "the docs' commands were not found"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A scratch directory holding what the docs' commands read: `evals/` (the
/// example datasets), `examples/` (datasets, corpus, manifest, calibration
/// labels) and `in.jsonl` (the input `evals convert in.jsonl out.csv` names).
pub(crate) fn scratch(n: usize) -> PathBuf {
    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let p = e.unwrap().path();
            let dest = to.join(p.file_name().unwrap());
            if p.is_dir() {
                copy_dir(&p, &dest);
            } else {
                std::fs::copy(&p, &dest).unwrap();
            }
        }
    }
    let dir = std::env::temp_dir().join(format!("evals-docs-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let examples = repo().join("examples");
    copy_dir(&examples.join("evals"), &dir.join("evals"));
    for sub in [
        "evals",
        "corpus",
        "calibration",
        "create",
        "traces",
        "scorers",
    ] {
        copy_dir(&examples.join(sub), &dir.join("examples").join(sub));
    }
    std::fs::copy(examples.join("agent.yaml"), dir.join("examples/agent.yaml")).unwrap();
    std::fs::copy(examples.join("tools.json"), dir.join("examples/tools.json")).unwrap();
    std::fs::copy(examples.join("evals/rag.jsonl"), dir.join("in.jsonl")).unwrap();
    dir
}

/// The command with a synopsis' optional `[...]` parts dropped, when what
/// is left can run as written: no placeholder (`FILE`, `N`, `...`), no glob.
pub(crate) fn runnable(cmd: &Cmd) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    for w in &cmd.words[1..] {
        let opens = if w.quoted {
            0
        } else {
            w.text.matches('[').count() as i32
        };
        let closes = if w.quoted {
            0
        } else {
            w.text.matches(']').count() as i32
        };
        if depth == 0 && opens == 0 {
            let t = bare(&w.text);
            let placeholder = !w.quoted
                && (t.is_empty()
                    || t.contains('*')
                    || (t
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
                        && t.chars().any(|c| c.is_ascii_uppercase())));
            if placeholder {
                return None;
            }
            out.push(t.to_string());
        }
        depth += opens - closes;
    }
    Some(out)
}

#[test]
fn safe_examples_run_on_the_example_datasets() {
    // Subcommands that read datasets and write only beside them or to a
    // named output: safe in a scratch copy, offline. Each with the exit
    // codes that mean "it ran" (`lint` exits 1 when it finds errors).
    let safe: BTreeMap<&str, &[i32]> = [
        ("lint", &[0, 1][..]),
        ("stats", &[0][..]),
        ("guide", &[0][..]),
        ("convert", &[0][..]),
        ("init", &[0][..]),
    ]
    .into_iter()
    .collect();
    let mut ran = Vec::new();
    let mut problems = Vec::new();
    for cmd in shell_commands() {
        if cmd.words[0].text != "evals" {
            continue;
        }
        let Some(args) = runnable(&cmd) else { continue };
        let Some(ok) = args.first().and_then(|s| safe.get(s.as_str())) else {
            continue;
        };
        let dir = scratch(ran.len());
        // Inputs must exist (an example about a file the reader makes, such
        // as `evals lint evals/generated.jsonl`, is checked for its flags only).
        let inputs: Vec<&String> = match args[0].as_str() {
            "convert" => args[1..]
                .iter()
                .filter(|a| !a.starts_with('-'))
                .take(1)
                .collect(),
            _ => args[1..].iter().filter(|a| !a.starts_with('-')).collect(),
        };
        if inputs.iter().any(|p| !dir.join(p).exists()) {
            let _ = std::fs::remove_dir_all(&dir);
            continue;
        }
        let out = Command::new(env!("CARGO_BIN_EXE_evals"))
            .args(&args)
            .current_dir(&dir)
            .env("NO_COLOR", "1")
            .env("EVAL_CACHE", "off")
            .env_remove("EVAL_AGENT_URL")
            .env_remove("EVAL_JUDGE_URL")
            .env_remove("EVAL_EMBED_URL")
            .output()
            .expect("run evals");
        let code = out.status.code().unwrap_or(-1);
        if !ok.contains(&code) {
            problems.push(format!(
                "{}: `evals {}` exited {code}:\n{}{}",
                cmd.at,
                args.join(" "),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        if args[0] == "convert" {
            let output = args[1..].iter().filter(|a| !a.starts_with('-')).nth(1);
            if let Some(output) = output
                && !dir.join(output).exists()
            {
                problems.push(format!(
                    "{}: `evals {}` wrote no {output}",
                    cmd.at,
                    args.join(" ")
                ));
            }
        }
        ran.push(format!("{}: evals {}", cmd.at, args.join(" ")));
        let _ = std::fs::remove_dir_all(&dir);
    }
    eprintln!(
        "ran {} example command(s):\n  {}",
        ran.len(),
        ran.join("\n  ")
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    for sub in ["lint", "stats", "guide", "convert"] {
        assert!(
            ran.iter().any(|r| r.contains(&format!("evals {sub}"))),
            "no runnable `evals {sub}` example was found in the docs: {ran:?}"
        );
    }
}

// ---------------------------------------------------------------- links --

/// A heading's anchor, as GitHub and mdBook make it.
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a file's headings (outside code blocks).
fn heading_anchors(text: &str) -> BTreeSet<String> {
    let mut fence: Option<&str> = None;
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let t = line.trim_start();
        match fence {
            Some(f) if t.trim_end() == f => fence = None,
            Some(_) => {}
            None if t.starts_with("````") => fence = Some("````"),
            None if t.starts_with("```") => fence = Some("```"),
            None => {
                let h = line.trim_start_matches('#');
                if line.starts_with('#') && h.starts_with(' ') {
                    out.insert(slug(&h.trim().replace('`', "")));
                }
            }
        }
    }
    out
}

/// `[text](target)` links of the prose.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in prose(text) {
        let mut rest = line.as_str();
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let Some(end) = after.find(')') else { break };
            out.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    out
}

#[test]
fn links_lead_to_files_and_headings() {
    let mut problems = Vec::new();
    let mut count = 0;
    for (shown, path, text) in docs() {
        for link in links(&text) {
            if link.starts_with("http://")
                || link.starts_with("https://")
                || link.starts_with("mailto:")
            {
                continue;
            }
            count += 1;
            let (file, anchor) = link.split_once('#').unwrap_or((&link, ""));
            let target = if file.is_empty() {
                path.clone()
            } else {
                path.parent().unwrap().join(file)
            };
            if !target.exists() {
                problems.push(format!(
                    "{shown}: link `{link}`: no file {}",
                    target.display()
                ));
                continue;
            }
            if !anchor.is_empty() && !heading_anchors(&read(&target)).contains(anchor) {
                problems.push(format!(
                    "{shown}: link `{link}`: no heading with that anchor"
                ));
            }
        }
    }
    eprintln!("checked {count} links");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_chapter_is_in_the_summary_and_compiled_as_doctests() {
    let summary = read(&repo().join("docs/src/SUMMARY.md"));
    let doctests = read(&repo().join("docs/doctests.rs"));
    assert!(
        doctests.contains("include_str!(\"../README.md\")"),
        "docs/doctests.rs must include the README"
    );
    for (shown, path, _) in docs() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !shown.starts_with("docs/src/") || name == "SUMMARY.md" {
            continue;
        }
        assert!(
            summary.contains(&format!("]({name})")),
            "{shown} is not in docs/src/SUMMARY.md"
        );
        assert!(
            doctests.contains(&format!("include_str!(\"src/{name}\")")),
            "{shown} is not in docs/doctests.rs, so its Rust blocks are not compiled"
        );
    }
}

#[test]
fn code_blocks_say_their_language_and_none_is_ignored_without_a_reason() {
    let mut problems = Vec::new();
    let mut rust = 0;
    for (shown, _, text) in docs() {
        let lines: Vec<&str> = text.lines().collect();
        for block in blocks(&text) {
            if block.info.is_empty() {
                problems.push(format!(
                    "{shown}:{}: a code block without a language (rustdoc would compile it as Rust): say `text`, `sh`, ...",
                    block.line
                ));
            }
            let attrs: Vec<&str> = block.info.split([',', ' ']).collect();
            if attrs[0] == "rust" {
                rust += 1;
                let before = block.line.checked_sub(2).map(|i| lines[i]).unwrap_or("");
                if attrs.contains(&"ignore") && !before.starts_with("<!-- ignore:") {
                    problems.push(format!(
                        "{shown}:{}: an `ignore`d Rust block needs the reason on the line before it (`<!-- ignore: why -->`)",
                        block.line
                    ));
                }
            }
        }
    }
    eprintln!("{rust} Rust blocks (compiled by `cargo test -p eval-guide --doc`)");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
