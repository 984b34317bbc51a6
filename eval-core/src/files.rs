//! Writing files safely: atomically (a temporary file beside the target, then
//! a rename), and a timestamped backup before a file is rewritten.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Writes `bytes` to `path` atomically: readers see the old file or the new
/// one, never a half-written one.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp.{}", std::process::id()));
    let written = std::fs::File::create(&tmp).and_then(|mut file| {
        file.write_all(bytes)?;
        file.sync_all()
    });
    if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    Ok(())
}

/// Copies `path` to `<path>.<UTC timestamp>.bak` (e.g.
/// `evals.json.20261122T101500Z.bak`) and returns the backup's path. An
/// existing backup of that name is never overwritten.
pub fn backup(path: &Path) -> std::io::Result<PathBuf> {
    let stamp = utc_stamp(SystemTime::now());
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut target = path.with_file_name(format!("{name}.{stamp}.bak"));
    let mut n = 1;
    while target.exists() {
        target = path.with_file_name(format!("{name}.{stamp}-{n}.bak"));
        n += 1;
    }
    let bytes = std::fs::read(path)?;
    write_atomically(&target, &bytes)?;
    Ok(target)
}

/// `YYYYMMDDTHHMMSSZ` for `time` (UTC).
pub fn utc_stamp(time: SystemTime) -> String {
    let secs = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}{m:02}{d:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn stamps_are_utc_calendar_times() {
        assert_eq!(utc_stamp(UNIX_EPOCH), "19700101T000000Z");
        // 2000-02-29 12:34:56 UTC (a leap day) = 951827696.
        assert_eq!(
            utc_stamp(UNIX_EPOCH + Duration::from_secs(951_827_696)),
            "20000229T123456Z"
        );
        // 2026-11-22 00:00:00 UTC = 1795305600.
        assert_eq!(
            utc_stamp(UNIX_EPOCH + Duration::from_secs(1_795_305_600)),
            "20261122T000000Z"
        );
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
}
