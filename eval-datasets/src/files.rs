//! Files on disk. Writing safely: atomically (a temporary file beside the
//! target, synced, then renamed over it), and a timestamped backup before a
//! file is rewritten. Reading a dataset checked ([`read_checked`]: a regular
//! file within a size limit), and the one containment rule for paths given
//! in files and attributes ([`contained`]).

mod contain;
mod read;
mod special;

pub use contain::{ContainmentError, contained};
pub(crate) use contain::{absolute, normalize};
pub use read::{
    DEFAULT_MAX_DATASET_BYTES, PROMPT_MAX_BYTES, ReadError, check_regular, open_checked,
    read_checked, read_text,
};

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Writes `bytes` to `path` atomically: readers see the old file or the new
/// one, never a half-written one.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomically_with(path, |w| w.write_all(bytes))
}

/// Writes `path` with what `write` writes (buffered) — the one writer of
/// every file we write:
///
/// * a regular file (or none yet) is written atomically: readers see the
///   old file or the new one, never a half-written one. The data goes to a
///   temporary file beside it (same directory, so the rename cannot cross
///   file systems), created exclusively (an existing file or symlink of
///   that name is never followed) under a name unique to this process and
///   call, so threads and processes writing the same target at once do not
///   write into each other's file. It is synced, then renamed over the
///   target. On any error the temporary file is removed and the target is
///   left as it was;
/// * a symlink to a regular file: the file it leads to is written so (the
///   link stays a link). A dangling symlink is refused;
/// * a character device or a FIFO (`/dev/stdout`, `/dev/null`, a pipe) is
///   written through, never replaced: opened for writing without creating
///   or truncating anything, checked again once open, written to the end
///   (a FIFO without a reader is refused rather than waited on);
/// * anything else (a directory, a socket, a block device) is refused.
pub fn write_atomically_with<F>(path: &Path, write: F) -> std::io::Result<()>
where
    F: FnOnce(&mut dyn Write) -> std::io::Result<()>,
{
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => atomically(path, write),
        Err(e) => Err(e),
        Ok(m) if m.is_file() => atomically(path, write),
        Ok(_) => {
            let target = match std::fs::metadata(path) {
                Ok(t) => t,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(refused(path, "a symlink to nothing"));
                }
                Err(e) => return Err(e),
            };
            if target.is_file() {
                // Through a symlink: the file it leads to, replaced atomically.
                return atomically(&std::fs::canonicalize(path)?, write);
            }
            match special::writable_kind(&target.file_type()) {
                Some(kind) => special::write_through(path, kind, write),
                None => Err(refused(path, read::kind(&target.file_type()))),
            }
        }
    }
}

/// Appends `bytes` to `path` in one write, creating a regular file when
/// there is none — for files meant to grow (a CI step summary). A device
/// or FIFO is written through as [`write_atomically_with`] does (a FIFO
/// nothing reads refused, not waited on); a directory or socket refused.
pub fn append(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => match special::writable_kind(&m.file_type()) {
            Some(kind) => special::write_through(path, kind, |w| w.write_all(bytes)),
            None => Err(refused(path, read::kind(&m.file_type()))),
        },
        Ok(_) => append_regular(path, bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => append_regular(path, bytes),
        Err(e) => Err(e),
    }
}

/// Opens `path` to read it and append to it, creating it when there is
/// none: a regular file of at most `limit` bytes, checked before it is
/// opened and once it is (it may have been swapped in between) — for a
/// file appended to under a lock (a dataset growing one sample at a time).
pub fn open_appending(path: &Path, limit: u64) -> std::io::Result<std::fs::File> {
    match std::fs::metadata(path) {
        Ok(meta) => check_regular(&meta, limit).map(|_| ())?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)?;
    check_regular(&file.metadata()?, limit)?;
    Ok(file)
}

/// Takes the exclusive lock of the lock file `path` (created empty when
/// there is none, a regular file otherwise refused), waiting while another
/// process holds it; the lock is let go when the file returned is dropped.
pub fn lock(path: &Path) -> std::io::Result<std::fs::File> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(refused(path, "not a regular file"));
    }
    file.lock()?;
    Ok(file)
}

fn append_regular(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    // Swapped for something else between the check and the open.
    if !file.metadata()?.is_file() {
        return Err(refused(path, "not a regular file any more"));
    }
    file.write_all(bytes)
}

/// An error refusing to write `path`, which is `what`.
fn refused(path: &Path, what: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!(
            "{}: not written: it is {what}, not a regular file (a file is only written whole, a device or FIFO through)",
            path.display()
        ),
    )
}

/// Writes the regular file (or new file) `path` atomically.
fn atomically<F>(path: &Path, write: F) -> std::io::Result<()>
where
    F: FnOnce(&mut dyn Write) -> std::io::Result<()>,
{
    let tmp = temp_path(path);
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|file| {
            let mut out = std::io::BufWriter::new(file);
            write(&mut out)?;
            let file = out
                .into_inner()
                .map_err(std::io::IntoInnerError::into_error)?;
            file.sync_all()
        });
    if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    sync_dir(path);
    sweep_stale_temps(path);
    Ok(())
}

/// Removes the temporary files a killed process left beside `path` (once
/// per directory and process): `.<name>.tmp.<pid>.<n>` of a process that is
/// gone (where `/proc` tells), or older than an hour (elsewhere).
fn sweep_stale_temps(path: &Path) {
    use std::collections::HashSet;
    use std::sync::Mutex;
    static SWEPT: Mutex<Option<HashSet<PathBuf>>> = Mutex::new(None);
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    {
        let mut swept = SWEPT.lock().unwrap_or_else(|p| p.into_inner());
        if !swept.get_or_insert_with(HashSet::new).insert(dir.clone()) {
            return;
        }
    }
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    let me = std::process::id();
    let proc_fs = Path::new("/proc/self").exists();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(temp_owner) else {
            continue;
        };
        let stale = if pid == me {
            false
        } else if proc_fs {
            !Path::new("/proc").join(pid.to_string()).exists()
        } else {
            entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age.as_secs() > 3600)
        };
        if stale {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The pid in a temporary file's name `.<name>.tmp.<pid>.<n>`.
fn temp_owner(file_name: &str) -> Option<u32> {
    let rest = file_name.strip_prefix('.')?;
    let at = rest.rfind(".tmp.")?;
    let (pid, n) = rest[at + 5..].split_once('.')?;
    n.parse::<u64>().ok()?;
    pid.parse().ok()
}

/// `.<name>.tmp.<pid>.<n>` beside `path`, `n` counting the calls of this process.
fn temp_path(path: &Path) -> PathBuf {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let n = CALLS.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(".{name}.tmp.{}.{n}", std::process::id()))
}

/// Best effort: makes the rename itself durable (Unix; elsewhere a no-op).
fn sync_dir(path: &Path) {
    #[cfg(unix)]
    {
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

/// Copies `path` to `<path>.<UTC timestamp>.bak` (e.g.
/// `evals.json.20261122T101500Z.bak`; `...Z-1.bak`, `...Z-2.bak` when that
/// name is taken) and returns the backup's path. The name is claimed with
/// an exclusive create before anything is written, so backups made at once
/// by threads or processes (within the same second) each get their own
/// file; an existing backup is never overwritten. The copy is written
/// atomically over the claimed (empty) file.
pub fn backup(path: &Path) -> std::io::Result<PathBuf> {
    /// Names tried with one timestamp before giving up.
    const MAX_SAME_SECOND: usize = 10_000;
    let bytes = read_checked(path, DEFAULT_MAX_DATASET_BYTES)?;
    let stamp = utc_stamp(SystemTime::now());
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for n in 0..MAX_SAME_SECOND {
        let target = if n == 0 {
            path.with_file_name(format!("{name}.{stamp}.bak"))
        } else {
            path.with_file_name(format!("{name}.{stamp}-{n}.bak"))
        };
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&target)
        {
            Ok(_) => {
                if let Err(e) = write_atomically(&target, &bytes) {
                    let _ = std::fs::remove_file(&target);
                    return Err(e);
                }
                return Ok(target);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        format!("{MAX_SAME_SECOND} backups of {name} within {stamp} already exist"),
    ))
}

/// What [`write_replacing`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Replaced {
    /// There was no file: it was written.
    Created,
    /// The file already held these bytes: nothing was written.
    Unchanged,
    /// The file differed: it was backed up ([`backup`]) to this path, then
    /// rewritten.
    Replaced {
        /// Where the previous content was kept.
        backup: PathBuf,
    },
}

/// Writes `bytes` to `path` atomically, keeping what was there: a file that
/// already holds these bytes is left alone (no write, no backup), one that
/// differs is first backed up.
pub fn write_replacing(path: &Path, bytes: &[u8]) -> std::io::Result<Replaced> {
    let done = match read_checked(path, DEFAULT_MAX_DATASET_BYTES) {
        Ok(old) if old == bytes => return Ok(Replaced::Unchanged),
        Ok(_) => Replaced::Replaced {
            backup: backup(path)?,
        },
        Err(ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => Replaced::Created,
        Err(e) => return Err(e.into()),
    };
    write_atomically(path, bytes)?;
    Ok(done)
}

/// `YYYYMMDDTHHMMSSZ` for `time` (UTC), by jiff's calendar; a time before
/// 1970 is stamped as 1970-01-01 (as before), one beyond jiff's range (the
/// year 9999) as its end.
pub fn utc_stamp(time: SystemTime) -> String {
    let at = match time.duration_since(UNIX_EPOCH) {
        Ok(_) => jiff::Timestamp::try_from(time).unwrap_or(jiff::Timestamp::MAX),
        Err(_) => jiff::Timestamp::UNIX_EPOCH,
    };
    at.strftime("%Y%m%dT%H%M%SZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_files_of_dead_processes_are_swept() {
        let dir = std::env::temp_dir().join(format!("eval-files-sweep-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // pid 4194305 is above Linux's pid_max: never a live process.
        let dead = dir.join(".evals.json.tmp.4194305.7");
        let mine = dir.join(format!(".evals.json.tmp.{}.999", std::process::id()));
        let other = dir.join("notes.tmp.4194305.7");
        for f in [&dead, &mine, &other] {
            std::fs::write(f, b"half").unwrap();
        }
        write_atomically(&dir.join("evals.json"), b"{}").unwrap();
        if Path::new("/proc/self").exists() {
            assert!(!dead.exists(), "a dead process's file is removed");
        }
        assert!(mine.exists(), "this process's own files are its business");
        assert!(other.exists(), "only our own naming is touched");
        assert_eq!(temp_owner(".a.b.tmp.12.3"), Some(12));
        assert_eq!(temp_owner(".a.tmp.x.3"), None);
        assert_eq!(temp_owner("a.tmp.12"), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
    use std::time::Duration;

    #[test]
    fn stamps_are_utc_calendar_times() {
        assert_eq!(utc_stamp(UNIX_EPOCH), "19700101T000000Z");
        // 2000-02-29 12:34:56 UTC (a leap day) = 951827696.
        assert_eq!(
            utc_stamp(UNIX_EPOCH + Duration::from_secs(951_827_696)),
            "20000229T123456Z"
        );
        // Before 1970: the epoch, as before.
        assert_eq!(
            utc_stamp(UNIX_EPOCH - Duration::from_secs(86_400)),
            "19700101T000000Z"
        );
        // 2026-11-22 00:00:00 UTC = 1795305600.
        assert_eq!(
            utc_stamp(UNIX_EPOCH + Duration::from_secs(1_795_305_600)),
            "20261122T000000Z"
        );
    }

    #[test]
    fn write_replacing_backs_up_only_a_file_that_differs() {
        let dir = std::env::temp_dir().join(format!("eval-files-replace-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("d-stats.json");
        let baks = || {
            std::fs::read_dir(&dir)
                .unwrap()
                .filter(|e| {
                    e.as_ref()
                        .unwrap()
                        .file_name()
                        .to_string_lossy()
                        .ends_with(".bak")
                })
                .count()
        };
        assert_eq!(write_replacing(&path, b"one").unwrap(), Replaced::Created);
        assert_eq!(write_replacing(&path, b"one").unwrap(), Replaced::Unchanged);
        assert_eq!(baks(), 0);
        let Replaced::Replaced { backup } = write_replacing(&path, b"two").unwrap() else {
            panic!("a different file is replaced");
        };
        assert_eq!(std::fs::read(&backup).unwrap(), b"one");
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(baks(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn backup_then_atomic_rewrite() {
        let dir = std::env::temp_dir().join(format!("eval-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("evals.json");
        std::fs::write(&file, "old").unwrap();
        let one = backup(&file).unwrap();
        let two = backup(&file).unwrap();
        assert_ne!(one, two, "a second backup does not overwrite the first");
        write_atomically(&file, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
        assert_eq!(std::fs::read_to_string(&one).unwrap(), "old");
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains(".tmp."))
            .collect();
        assert!(leftovers.is_empty());
    }

    #[test]
    fn concurrent_backups_never_share_a_name() {
        let dir = std::env::temp_dir().join(format!("eval-files-bak-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("evals.json");
        std::fs::write(&file, "original").unwrap();
        // 16 backups at once (as concurrent `evals upgrade` runs make them,
        // within one second): 16 files, each whole.
        for round in 0..5 {
            let barrier = std::sync::Barrier::new(16);
            let made: Vec<PathBuf> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..16)
                    .map(|_| {
                        s.spawn(|| {
                            barrier.wait();
                            backup(&file).unwrap()
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let mut names = made.clone();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), 16, "round {round}: {made:?}");
            for b in &made {
                assert_eq!(std::fs::read_to_string(b).unwrap(), "original");
            }
        }
        let backups = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".bak"))
            .count();
        assert_eq!(backups, 80);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn concurrent_writers_and_failures() {
        let dir = std::env::temp_dir().join(format!("eval-files-mt-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("shared.idx");
        // Several threads of one process write the same target at once:
        // each write is whole, none fails on another's temporary file.
        std::thread::scope(|s| {
            for t in 0..8u8 {
                let file = &file;
                s.spawn(move || {
                    for _ in 0..20 {
                        let line = vec![b'a' + t; 4096];
                        write_atomically_with(file, |w| {
                            for _ in 0..4 {
                                w.write_all(&line)?;
                            }
                            Ok(())
                        })
                        .unwrap();
                    }
                });
            }
        });
        let got = std::fs::read(&file).unwrap();
        assert_eq!(got.len(), 4 * 4096);
        assert!(got.iter().all(|b| *b == got[0]), "one writer's bytes only");
        // A failing writer leaves the old file and no temporary file.
        let failed = write_atomically_with(&file, |w| {
            w.write_all(b"partial")?;
            Err(std::io::Error::other("boom"))
        });
        assert_eq!(failed.unwrap_err().to_string(), "boom");
        assert_eq!(std::fs::read(&file).unwrap(), got);
        let names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["shared.idx".to_string()]);
        let _ = std::fs::remove_dir_all(dir);
    }
}
