//! Seed 003's `.env.local` (agent configuration) and `.env.local.user`
//! (secrets, not committed) in the working directory: `KEY=VALUE` lines
//! that fill the settings (`EVAL_*`) the environment does not set. The
//! real environment wins; `.env.local.user` wins over `.env.local`. Values
//! are never printed, only the names read.

use std::path::Path;

use eval_runtime::Config;

use crate::Failure;

/// The files read, in order (a later one's value wins).
pub const FILES: [&str; 2] = [".env.local", ".env.local.user"];

/// The most bytes a settings file may hold: 1 MiB.
const MAX_BYTES: u64 = 1 << 20;

/// The process's settings: the environment, then `dir`'s `.env.local.user`
/// and `.env.local` for what it leaves unset. Says which names each file
/// gave.
pub fn settings(dir: &Path) -> Result<&'static Config, Failure> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for name in FILES {
        let path = dir.join(name);
        // Read as every file is (a regular file, size-capped), then parsed.
        let text = match eval_datasets::files::read_text(&path, MAX_BYTES) {
            Ok(text) => text,
            Err(eval_datasets::files::ReadError::Io(e))
                if e.kind() == std::io::ErrorKind::NotFound =>
            {
                continue;
            }
            Err(e) => return Err(Failure::config(format!("{name}: cannot read it: {e}"))),
        };
        let entries = dotenvy::from_read_iter(text.as_bytes());
        let mut read = Vec::new();
        for (i, entry) in entries.enumerate() {
            let (key, value) = entry.map_err(|e| {
                Failure::config(format!(
                    "{name}: entry {} is not a KEY=VALUE line: {}",
                    i + 1,
                    safe(&e)
                ))
            })?;
            if std::env::var_os(&key).is_none() {
                read.push(key.clone());
            }
            pairs.push((key, value));
        }
        let used: Vec<&String> = read.iter().filter(|k| k.starts_with("EVAL_")).collect();
        if !used.is_empty() {
            let names: Vec<&str> = used.iter().map(|k| k.as_str()).collect();
            errln!("note: {name}: {} (the environment wins)", names.join(", "));
        }
    }
    Config::global_with(&pairs).map_err(|e| Failure::config(e.to_string()))
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
