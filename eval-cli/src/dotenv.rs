//! Seed 003's `.env.local` (agent configuration) and `.env.local.user`
//! (secrets, not committed) in the working directory: `KEY=VALUE` lines
//! that fill the settings the environment does not set. The real
//! environment wins; `.env.local.user` wins over `.env.local`. Values are
//! never printed, only the names read.
//!
//! Said plainly, never skipped in silence: a file that is a symbolic link
//! to nothing (a dangling link) is an error naming the file and where it
//! points, as an unreadable one is (the settings it was meant to hold
//! would otherwise be missing without a word); a name that is not a
//! setting is a warning naming it, with the setting it is one typo away
//! from (`EVAL_CONCURENCY` → `EVAL_CONCURRENCY`); names of no setting and
//! near none, that are not `EVAL_*` (the agent's own, say), are listed in
//! one note as ignored.

use std::path::Path;

use eval_datasets::terminal::escaped;
use eval_runtime::Config;

use crate::Failure;

/// The files read, in order (a later one's value wins).
pub const FILES: [&str; 2] = [".env.local", ".env.local.user"];

/// The most bytes a settings file may hold: 1 MiB.
const MAX_BYTES: u64 = 1 << 20;

/// The process's settings: the environment, then `dir`'s `.env.local.user`
/// and `.env.local` for what it leaves unset. Says which names each file
/// gave, and which it gave that are not settings.
pub fn settings(dir: &Path) -> Result<&'static Config, Failure> {
    let (pairs, messages) = read(dir, |k| std::env::var_os(k).is_some())?;
    for m in messages {
        errln!("{m}");
    }
    Config::global_with(&pairs).map_err(|e| Failure::config(e.to_string()))
}

/// `(name, value)` pairs, in the order read.
type Pairs = Vec<(String, String)>;

/// The `(name, value)` pairs of `dir`'s files, and the lines to say about
/// them; `in_env` says whether the environment sets a name (it wins).
fn read(dir: &Path, in_env: impl Fn(&str) -> bool) -> Result<(Pairs, Vec<String>), Failure> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut said = Vec::new();
    for name in FILES {
        let path = dir.join(name);
        // Read as every file is (a regular file, size-capped), then parsed.
        let text = match eval_datasets::files::read_text(&path, MAX_BYTES) {
            Ok(text) => text,
            Err(eval_datasets::files::ReadError::Io(e))
                if e.kind() == std::io::ErrorKind::NotFound =>
            {
                match std::fs::read_link(&path) {
                    // A link to nothing: not "no file".
                    Ok(target) => {
                        return Err(Failure::config(format!(
                            "{name} is a symbolic link to `{}`, which does not exist: point it at the settings file or remove it",
                            escaped(&target.to_string_lossy())
                        )));
                    }
                    Err(_) => continue,
                }
            }
            Err(e) => return Err(Failure::config(format!("{name}: cannot read it: {e}"))),
        };
        let entries = dotenvy::from_read_iter(text.as_bytes());
        let (mut used, mut unknown, mut ignored) = (Vec::new(), Vec::new(), Vec::new());
        for (i, entry) in entries.enumerate() {
            let (key, value) = entry.map_err(|e| {
                Failure::config(format!(
                    "{name}: entry {} is not a KEY=VALUE line: {}",
                    i + 1,
                    safe(&e)
                ))
            })?;
            let shown = escaped(&key).into_owned();
            if Config::setting_names().any(|s| s == key) {
                if !in_env(&key) {
                    used.push(shown);
                }
            } else {
                let near = eval_datasets::suggest::closest(&key, Config::setting_names());
                if key.starts_with("EVAL_") || near.is_some() {
                    unknown.push(format!(
                        "warning: {name}: {shown} is not a setting of evals, ignored{}",
                        eval_datasets::suggest::did_you_mean(near)
                    ));
                } else {
                    ignored.push(shown);
                }
            }
            pairs.push((key, value));
        }
        if !used.is_empty() {
            said.push(format!(
                "note: {name}: {} (the environment wins)",
                used.join(", ")
            ));
        }
        said.extend(unknown);
        if !ignored.is_empty() {
            said.push(format!(
                "note: {name}: not settings of evals, ignored: {}",
                ignored.join(", ")
            ));
        }
    }
    Ok((pairs, said))
}

/// A dotenv error without the line's text (which may hold a secret).
fn safe(e: &dotenvy::Error) -> String {
    match e {
        dotenvy::Error::LineParse(_, at) => format!("cannot parse it (at character {at})"),
        dotenvy::Error::Io(io) => io.to_string(),
        dotenvy::Error::EnvVar(v) => v.to_string(),
        _ => "cannot parse it".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("evals-dotenv-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// The reproducer: a dangling `.env.local` link was as if
    /// there were no file.
    #[cfg(unix)]
    #[test]
    fn a_dangling_link_is_an_error_naming_the_file_and_its_target() {
        for name in FILES {
            let dir = scratch(&format!("dangling{name}"));
            std::os::unix::fs::symlink("secrets/\u{1b}[2Jgone.env", dir.join(name)).unwrap();
            let e = read(&dir, |_| false).unwrap_err();
            assert_eq!(e.code, 2);
            assert!(
                e.message
                    .starts_with(&format!("{name} is a symbolic link to `secrets/")),
                "{}",
                e.message
            );
            assert!(e.message.contains("does not exist"), "{}", e.message);
            assert!(!e.message.contains('\u{1b}'), "escaped: {}", e.message);
            std::fs::remove_dir_all(&dir).unwrap();
        }
        // A link to a file is read as the file.
        let dir = scratch("link-ok");
        std::fs::write(dir.join("real.env"), "EVAL_CONCURRENCY=3\n").unwrap();
        std::os::unix::fs::symlink("real.env", dir.join(".env.local")).unwrap();
        let (pairs, said) = read(&dir, |_| false).unwrap();
        assert_eq!(pairs, [("EVAL_CONCURRENCY".into(), "3".into())]);
        assert_eq!(
            said,
            ["note: .env.local: EVAL_CONCURRENCY (the environment wins)"]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The reproducer: an unknown `EVAL_*` name was listed as read.
    #[test]
    fn a_name_that_is_not_a_setting_is_said_with_the_one_it_is_near() {
        let dir = scratch("unknown");
        std::fs::write(
            dir.join(".env.local"),
            "EVAL_CONCURENCY=4\nEVAL_AGENT_URL=http://127.0.0.1:1\nEVAL_WHATEVER=1\nOPENAI_API_KEYS=sk-x\nDATABASE_URL=postgres://x\nLANGSMITH_API_KEY=ls\n",
        )
        .unwrap();
        let (pairs, said) = read(&dir, |k| k == "LANGSMITH_API_KEY").unwrap();
        assert_eq!(pairs.len(), 6);
        assert_eq!(
            said,
            [
                "note: .env.local: EVAL_AGENT_URL (the environment wins)",
                "warning: .env.local: EVAL_CONCURENCY is not a setting of evals, ignored (did you mean `EVAL_CONCURRENCY`?)",
                "warning: .env.local: EVAL_WHATEVER is not a setting of evals, ignored",
                "warning: .env.local: OPENAI_API_KEYS is not a setting of evals, ignored (did you mean `OPENAI_API_KEY`?)",
                "note: .env.local: not settings of evals, ignored: DATABASE_URL",
            ]
        );
        assert!(!said.concat().contains("sk-x"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn no_file_is_nothing_to_say() {
        let dir = scratch("none");
        assert_eq!(read(&dir, |_| false).unwrap(), (Vec::new(), Vec::new()));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
