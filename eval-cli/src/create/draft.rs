//! The draft of `evals create` on a terminal: what was answered so far
//! (the scope, the sources, the strategies, the edge-case examples) and,
//! once made, the pairs with their typed answers, written after each step
//! to `{out_dir}/.{domain}-eval-dataset.draft.jsonl` (atomically), kept
//! until the bundle is written, and read back by `--resume`.
//!
//! Its first line is `{"evals_create_draft": 1, "step": …, "answers": {…},
//! "pairs": n | null}`; the `n` lines after it are the pairs
//! (`query`, `ground_truth`, `contexts`, `source_docs`, `metadata`).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::ask::Ask;
use super::{Args, Pair};
use crate::Failure;

/// The draft's first line names it so.
const MARK: &str = "evals_create_draft";
/// The end of a draft's file name.
const SUFFIX: &str = "-eval-dataset.draft.jsonl";

/// The answers so far, and where they are kept.
#[derive(Debug, Default)]
pub(super) struct Draft {
    /// Where it is written; `None` until the domain is known, or when
    /// nothing is asked (no terminal: every answer is a flag already).
    pub path: Option<PathBuf>,
    /// The answers by name (`domain`, `types`, `size`, `typed`, …).
    pub answers: Map<String, Value>,
    /// The pairs, once made.
    pub pairs: Option<Vec<Pair>>,
    /// Whether it has been written (and not removed).
    pub written: bool,
}

impl Draft {
    /// The draft of `slug` in `out_dir`.
    pub(super) fn path_for(out_dir: &Path, slug: &str) -> PathBuf {
        out_dir.join(format!(".{slug}{SUFFIX}"))
    }

    /// The drafts in `out_dir`, by name.
    pub(super) fn find(out_dir: &Path) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = std::fs::read_dir(out_dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with('.') && n.ends_with(SUFFIX))
            })
            .collect();
        out.sort();
        out
    }

    /// Records `value` as the answer `name`.
    pub(super) fn set(&mut self, name: &str, value: impl Into<Value>) {
        self.answers.insert(name.into(), value.into());
    }

    /// Writes the draft (when it has a place), after `step`.
    pub(super) fn save(&mut self, step: &str) -> Result<(), Failure> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| Failure::config(format!("cannot create {}: {e}", dir.display())))?;
        }
        let mut text = json!({MARK: 1, "step": step, "answers": self.answers,
                              "pairs": self.pairs.as_ref().map(Vec::len)})
        .to_string();
        text.push('\n');
        for p in self.pairs.iter().flatten() {
            text.push_str(&to_json(p).to_string());
            text.push('\n');
        }
        super::bundle::write(path, &text)?;
        self.written = true;
        Ok(())
    }

    /// Reads the draft at `path`: its step, answers and pairs.
    pub(super) fn load(path: &Path) -> Result<(String, Draft), Failure> {
        let bad = |why: &str| {
            Failure::config(format!(
                "{}: not a draft of `evals create` ({why}); remove it or give another --out-dir",
                path.display()
            ))
        };
        let text = eval_datasets::files::read_text(path, eval_runtime::Config::max_dataset_bytes())
            .map_err(|e| Failure::config(format!("cannot read {}: {e}", path.display())))?;
        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
        let head: Value = lines
            .next()
            .and_then(|l| serde_json::from_str(l).ok())
            .ok_or_else(|| bad("no first line"))?;
        if head.get(MARK).and_then(Value::as_u64) != Some(1) {
            return Err(bad("its first line does not name it"));
        }
        let step = head["step"].as_str().unwrap_or("").to_string();
        let answers = head["answers"].as_object().cloned().unwrap_or_default();
        let pairs = match head["pairs"].as_u64() {
            None => None,
            Some(n) => {
                let pairs: Vec<Pair> = lines
                    .map(|l| {
                        serde_json::from_str::<Value>(l)
                            .ok()
                            .and_then(|v| from_json(&v))
                    })
                    .collect::<Option<_>>()
                    .ok_or_else(|| bad("a pair line is not a pair"))?;
                if pairs.len() as u64 != n {
                    return Err(bad("pairs are missing"));
                }
                Some(pairs)
            }
        };
        Ok((
            step,
            Draft {
                path: Some(path.to_path_buf()),
                answers,
                pairs,
                written: true,
            },
        ))
    }

    /// Removes the draft (the bundle is written).
    pub(super) fn remove(&mut self) {
        if let Some(path) = &self.path
            && self.written
        {
            let _ = std::fs::remove_file(path);
            self.written = false;
        }
    }

    /// A string answer.
    pub(super) fn text(&self, name: &str) -> Option<String> {
        self.answers
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_string)
    }
}

/// Offers (on a terminal) or takes (`--resume`) the draft of an earlier
/// run: its answers fill the flags not given, its pairs are taken as made.
pub(super) fn resume(args: &mut Args, ask: &Ask, draft: &mut Draft) -> Result<(), Failure> {
    let candidates = match &args.domain {
        Some(d) => {
            let p = Draft::path_for(&args.out_dir, &super::slug_of(d).map_err(Failure::config)?);
            if p.is_file() { vec![p] } else { Vec::new() }
        }
        None => Draft::find(&args.out_dir),
    };
    let chosen = if args.resume {
        match candidates.as_slice() {
            [] => {
                return Err(Failure::config(format!(
                    "--resume: no draft (`.{{domain}}-eval-dataset.draft.jsonl`) in {}",
                    args.out_dir.display()
                )));
            }
            [one] => one.clone(),
            _ => {
                return Err(Failure::config(format!(
                    "--resume: {} drafts in {}: name the one with --domain",
                    candidates.len(),
                    args.out_dir.display()
                )));
            }
        }
    } else if ask.terminal {
        let mut pick = None;
        for c in candidates {
            let Ok((step, _)) = Draft::load(&c) else {
                continue;
            };
            if ask.confirm(&format!(
                "A draft of an earlier `evals create` is at {} (saved after {step}).\nResume from it? (yes/no; no: this run replaces it): ",
                c.display()
            ))? {
                pick = Some(c);
                break;
            }
        }
        match pick {
            Some(p) => p,
            None => return Ok(()),
        }
    } else {
        return Ok(());
    };
    let (step, loaded) = Draft::load(&chosen)?;
    errln!("resuming from {} (saved after {step})", chosen.display());
    let text = |name: &str| loaded.text(name);
    let path = |name: &str| loaded.text(name).map(PathBuf::from);
    args.domain = args.domain.take().or(text("domain"));
    args.types = args.types.take().or(text("types"));
    args.size = args
        .size
        .or(loaded.answers.get("size").and_then(Value::as_u64));
    args.queries = args.queries.take().or(path("queries"));
    args.traces = args.traces.take().or(path("traces"));
    args.corpus = args.corpus.take().or(path("corpus"));
    args.generation_model = args.generation_model.take().or(text("generation_model"));
    args.per_document = args
        .per_document
        .or(loaded.answers.get("per_document").and_then(Value::as_u64));
    args.strategy = args.strategy.take().or(text("strategy"));
    args.organisation = args.organisation.take().or(text("organisation"));
    args.edge_cases = args.edge_cases.take().or(text("edge_cases"));
    *draft = loaded;
    Ok(())
}

fn to_json(p: &Pair) -> Value {
    json!({"query": p.query, "ground_truth": p.ground_truth, "contexts": p.contexts,
           "source_docs": p.source_docs, "metadata": p.metadata})
}

fn from_json(v: &Value) -> Option<Pair> {
    let strings = |k: &str| -> Option<Vec<String>> {
        v.get(k)?
            .as_array()?
            .iter()
            .map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    Some(Pair {
        query: v.get("query")?.as_str()?.to_string(),
        ground_truth: v
            .get("ground_truth")
            .and_then(Value::as_str)
            .map(str::to_string),
        contexts: strings("contexts")?,
        source_docs: strings("source_docs")?,
        metadata: v.get("metadata")?.as_object()?.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_draft_reads_back_as_written() {
        let dir = std::env::temp_dir().join(format!("i38-draft-{}", std::process::id()));
        let path = Draft::path_for(&dir, "support");
        let mut d = Draft {
            path: Some(path.clone()),
            ..Draft::default()
        };
        d.set("domain", "support");
        d.pairs = Some(vec![Pair {
            query: "Why?".into(),
            ground_truth: Some("Because.".into()),
            contexts: vec!["c".into()],
            source_docs: vec![],
            metadata: Map::new(),
        }]);
        d.save("step 3").unwrap();
        assert_eq!(Draft::find(&dir), vec![path.clone()]);
        let (step, back) = Draft::load(&path).unwrap();
        assert_eq!(step, "step 3");
        assert_eq!(back.text("domain").as_deref(), Some("support"));
        let pairs = back.pairs.unwrap();
        assert_eq!(pairs[0].ground_truth.as_deref(), Some("Because."));
        d.remove();
        assert!(!path.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
