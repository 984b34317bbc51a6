//! runevals' file discovery (seed 003) and `evals init`.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};

use crate::Failure;

/// Names looked for, in order, in `.` and then in `./evals/`.
pub const CANDIDATES: &[&str] = &["prompts.json", "evals.json", "tests.json"];

/// The first of [`CANDIDATES`] in `dir`, then in `dir/evals`; when there
/// is none and a person is at a terminal, seed 003's offer: "Create a
/// starter evals file with sample prompts? (Y/n)" — yes writes
/// `evals/evals.json` (as `evals init`) and the run goes on with it.
pub fn find_or_offer(dir: &Path) -> Result<PathBuf, Failure> {
    let missing = match find(dir) {
        Ok(path) => return Ok(path),
        Err(missing) => missing,
    };
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return Err(missing);
    }
    err!(
        "⚠️  No prompts file found in current directory or ./evals/\n\nCreate a starter evals file with sample prompts? (Y/n): "
    );
    let mut answer = String::new();
    if std::io::stdin().read_line(&mut answer).is_err() {
        return Err(missing);
    }
    if !matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "" | "y" | "yes"
    ) {
        return Err(Failure::config(
            "no evals file: none was created (`evals init` writes the starter when you want it)",
        ));
    }
    let path = dir.join("evals").join("evals.json");
    write_starter(&path)?;
    errln!(
        "created {}",
        path.strip_prefix("./").unwrap_or(&path).display()
    );
    Ok(path
        .strip_prefix("./")
        .map(Path::to_path_buf)
        .unwrap_or(path))
}

/// The first of [`CANDIDATES`] in `dir`, then in `dir/evals`.
pub fn find(dir: &Path) -> Result<PathBuf, Failure> {
    for base in [dir.to_path_buf(), dir.join("evals")] {
        for name in CANDIDATES {
            let path = base.join(name);
            if path.is_file() {
                return Ok(path
                    .strip_prefix("./")
                    .map(Path::to_path_buf)
                    .unwrap_or(path));
            }
        }
    }
    Err(Failure::config(
        "no file given and none of prompts.json, evals.json, tests.json in . or ./evals/: \
         pass a manifest or dataset, use --prompts, or run `evals init` for a starter evals/evals.json",
    ))
}

/// Flags of `evals init`.
#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// Where to write the starter file.
    #[arg(default_value = "evals/evals.json")]
    pub path: PathBuf,
}

/// The starter document: runevals' versioned format, scored offline with
/// PartialMatch so it runs before a judge is configured. Its questions are
/// ones the bundled demo agent answers, so a first run against it passes
/// (`cargo run --example demo_agent`, then `evals evaluate --url ...`).
pub const STARTER: &str = r#"{
  "schemaVersion": "1.6.0",
  "metadata": {
    "name": "starter",
    "description": "Starter evals: replace the prompts and expected responses with your agent's. With an LLM judge configured (EVAL_JUDGE_URL), add \"Relevance\": {} or \"Coherence\": {} to default_evaluators."
  },
  "default_evaluators": {
    "PartialMatch": { "threshold": 0.3 }
  },
  "items": [
    {
      "prompt": "What is retrieval-augmented generation?",
      "expected_response": "Retrieval-augmented generation retrieves relevant documents and gives them to a language model as context."
    },
    {
      "prompt": "What is the capital of France?",
      "expected_response": "Paris is the capital of France."
    },
    {
      "turns": [
        { "prompt": "How does vector search find relevant chunks?", "expected_response": "It returns the nearest neighbors by cosine similarity." },
        { "prompt": "What does a reranker do?", "expected_response": "A reranker rescores the retrieved candidates so the most relevant come first." }
      ]
    }
  ]
}
"#;

pub fn init(args: InitArgs) -> Result<u8, Failure> {
    let path = &args.path;
    write_starter(path)?;
    outln!(
        "wrote {}; run it with: evals evaluate --url http://127.0.0.1:8080",
        path.display()
    );
    Ok(0)
}

/// Writes the starter to `path` (its directory created), atomically, never
/// over anything: the name is claimed with an exclusive create first, so
/// of runs at once one writes it and the others are told it exists.
fn write_starter(path: &Path) -> Result<(), Failure> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure::config(format!("cannot create {}: {e}", dir.display())))?;
    }
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
    {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(Failure::config(format!(
                "{} already exists; not overwriting it",
                path.display()
            )));
        }
        Err(e) => {
            return Err(Failure::config(format!(
                "cannot write {}: {e}",
                path.display()
            )));
        }
    }
    eval_datasets::files::write_atomically(path, STARTER.as_bytes()).map_err(|e| {
        let _ = std::fs::remove_file(path);
        Failure::config(format!("cannot write {}: {e}", path.display()))
    })
}
