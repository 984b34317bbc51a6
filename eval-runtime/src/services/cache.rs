//! On-disk cache of judge and embedding answers.
//!
//! An entry's key is the SHA-256 of everything that shapes the answer: the
//! endpoint, the model, the request's parameters and, for the judge, the
//! logical prompt (task, prompt version, instructions, data blocks; never
//! the random boundary it is sent with), so editing a metric's prompt (and
//! bumping its version) or changing model never reuses a stale answer. `EVAL_CACHE=off` disables the cache;
//! `EVAL_CACHE_DIR` moves it (default `cache/` in the results directory:
//! `target/evals/cache/` under cargo, else `~/.cache/evals/cache/`); its
//! directory is made owner-only (`0700`). An entry that
//! does not parse is ignored and overwritten, never fatal.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use crate::config::Config;

use serde_json::Value;

/// A directory of cached answers, readable by its owner only.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
    private: Arc<OnceLock<bool>>,
}

impl Cache {
    /// A cache in `dir` (created owner-only, `0700`, when first written).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Cache {
            dir: dir.into(),
            private: Arc::default(),
        }
    }

    /// Creates the directory (owner-only) and makes it owner-only when it
    /// exists: answers may quote the samples, which are nobody else's.
    fn make_private(&self) -> bool {
        *self.private.get_or_init(|| {
            let mut builder = std::fs::DirBuilder::new();
            builder.recursive(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
                builder.mode(0o700);
                if builder.create(&self.dir).is_err() {
                    return false;
                }
                let _ = std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700));
                true
            }
            #[cfg(not(unix))]
            {
                builder.create(&self.dir).is_ok()
            }
        })
    }

    /// The cache `config` asks for: `None` when `EVAL_CACHE=off`; in
    /// `EVAL_CACHE_DIR`, else `cache/` in the results directory.
    pub fn from_config(config: &Config) -> Option<Cache> {
        if !config.cache {
            return None;
        }
        let dir = config
            .cache_dir
            .clone()
            .unwrap_or_else(|| crate::config::results_dir(config).join("cache"));
        Some(Cache::new(dir))
    }

    /// The key of a request: SHA-256 over its parts, hex.
    pub fn key(parts: &[&str]) -> String {
        crate::model::parts_hash(parts)
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir
            .join(&key[..2.min(key.len())])
            .join(format!("{key}.json"))
    }

    /// The cached value, if present and readable.
    pub fn get(&self, key: &str) -> Option<Value> {
        let bytes = eval_datasets::files::read_checked(
            &self.path(key),
            eval_datasets::files::DEFAULT_MAX_DATASET_BYTES,
        )
        .ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Stores `value` (atomically; a failure only costs a later call).
    pub fn put(&self, key: &str, value: &Value) {
        if !self.make_private() {
            return;
        }
        let path = self.path(key);
        let Some(dir) = path.parent() else { return };
        if std::fs::create_dir_all(dir).is_err() {
            return;
        }
        // A judge that echoes a key does not get it written to disk.
        let mut value = value.clone();
        crate::secrets::mask_json(&mut value);
        if let Ok(bytes) = serde_json::to_vec(&value) {
            let _ = eval_datasets::files::write_atomically(&path, &bytes);
        }
    }
}
