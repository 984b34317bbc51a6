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

/// The file of the judge's boundary key, in the cache directory.
const BOUNDARY_KEY_FILE: &str = "judge-boundary.key";

/// A key file's 32 bytes, written as 64 hexadecimal digits (anything else
/// is no key).
fn read_key(path: &std::path::Path) -> Option<[u8; 32]> {
    let bytes = eval_datasets::files::read_checked(path, 128).ok()?;
    let text = std::str::from_utf8(&bytes).ok()?.trim();
    if text.len() != 64 {
        return None;
    }
    let mut key = [0u8; 32];
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(key)
}

/// Creates `path` (it must not exist), readable by its owner only, holding `bytes`.
fn write_private(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

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
        config.cache.then(|| Cache::at(config))
    }

    /// The cache's place, whether answers are cached or not (the judge's
    /// boundary key is kept there either way).
    pub(crate) fn at(config: &Config) -> Cache {
        let dir = config
            .cache_dir
            .clone()
            .unwrap_or_else(|| crate::config::results_dir(config).join("cache"));
        Cache::new(dir)
    }

    /// The key the judge's boundaries are computed with (see
    /// [`BoundaryKey`](super::BoundaryKey)): 32 random bytes in
    /// `judge-boundary.key` (as hexadecimal digits), written once,
    /// owner-only (`0600`), and never
    /// replaced (a second writer finds the first one's); `None` when the
    /// directory cannot be made or the file cannot be read or written.
    pub(crate) fn boundary_key(&self) -> Option<[u8; 32]> {
        if !self.make_private() {
            return None;
        }
        let path = self.dir.join(BOUNDARY_KEY_FILE);
        if let Some(key) = read_key(&path) {
            return Some(key);
        }
        if path.exists() {
            // Kept as it is (someone may have copied it there on purpose),
            // but said: without it prompts differ from run to run.
            crate::notice::note(&format!(
                "the judge's boundary key {} cannot be read (it should hold 64 hexadecimal digits): using a key for this process only, so judge prompts will differ from other runs'; delete the file to have a new one made",
                crate::model::one_line(&path.display().to_string(), 200)
            ));
            return None;
        }
        let mut bytes = [0u8; 32];
        getrandom::getrandom(&mut bytes).ok()?;
        // Written whole to a file of its own, then linked into place: the
        // link fails if another process got there first, and its key wins.
        // The temporary name is drawn apart from the key.
        let mut name = [0u8; 8];
        getrandom::getrandom(&mut name).ok()?;
        let temp = self.dir.join(format!(
            ".{BOUNDARY_KEY_FILE}.{}.{:016x}",
            std::process::id(),
            u64::from_le_bytes(name)
        ));
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let written = write_private(&temp, format!("{hex}\n").as_bytes());
        if written.is_ok() {
            let _ = std::fs::hard_link(&temp, &path);
        }
        let _ = std::fs::remove_file(&temp);
        read_key(&path)
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
