//! A sorted on-disk index from test name to record position, so a run that
//! wants one sample by its exact name (`--exact`, as `cargo nextest run`
//! does once per test) reads a few index lines and one record instead of
//! parsing the whole dataset.
//!
//! An index is named after the dataset's canonical path, length and
//! modification time, so an edited file never meets a stale index. The file
//! is text: a header line (the format's version and the dataset file's
//! SHA-256, so a run that reads one record still knows what file it came
//! from), then `name\toffset\tline\tindex` lines sorted by name (names are
//! identifiers: no tab, no newline).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::hash::{fnv1a64, short_hash, short_hex};
use crate::sample::Sample;

pub use crate::index_entry::Entry;

/// The header: this prefix, 64 hex digits of the file's SHA-256 (or 64
/// `-` when unknown), a newline.
const HEADER_PREFIX: &str = "eval-index 2 ";
const DIGEST_LEN: usize = 64;
const HEADER_LEN: usize = HEADER_PREFIX.len() + DIGEST_LEN + 1;

/// Whether `header` (the file's first [`HEADER_LEN`] bytes) is an index's.
fn is_header(header: &[u8]) -> bool {
    header.len() == HEADER_LEN
        && header.starts_with(HEADER_PREFIX.as_bytes())
        && header[HEADER_LEN - 1] == b'\n'
}

/// The index file for the dataset at `dataset`, under `dir`.
pub fn path_for(dir: &Path, dataset: &Path) -> std::io::Result<PathBuf> {
    let canonical = dataset.canonicalize()?;
    let meta = std::fs::metadata(&canonical)?;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let stem = canonical
        .file_stem()
        .map(|s| crate::naming::slug(&s.to_string_lossy(), 32))
        .unwrap_or_default();
    // One name per file (old states of it are removed on write), one state per
    // length, mtime and version of the naming rules.
    let file = short_hash(&canonical.to_string_lossy());
    let state = short_hex(fnv1a64(&[
        meta.len().to_string().as_bytes(),
        b"\0",
        mtime.to_string().as_bytes(),
        b"\0",
        env!("CARGO_PKG_VERSION").as_bytes(),
        HEADER_PREFIX.as_bytes(),
    ]));
    Ok(dir.join(format!("{stem}-{file}-{state}.idx")))
}

/// Writes the index of a dataset's `samples` (whose test names are
/// `names`), atomically, with the dataset file's SHA-256 (`digest`, 64 hex
/// digits) when known.
pub fn write(
    path: &Path,
    samples: &[Sample],
    names: &[String],
    digest: Option<&str>,
) -> std::io::Result<()> {
    let row = |i: usize| {
        let s = &samples[i];
        (names[i].as_str(), s.source.offset, s.source.line, s.index)
    };
    write_rows(path, samples.len().min(names.len()), &row, digest)
}

/// [`write()`] for a caller holding names and positions, not samples:
/// `row(i)` is sample `i`'s (name, offset, line, index).
pub fn write_rows<'a>(
    path: &Path,
    len: usize,
    row: &dyn Fn(usize) -> (&'a str, u64, usize, usize),
    digest: Option<&str>,
) -> std::io::Result<()> {
    let digest = digest
        .filter(|d| d.len() == DIGEST_LEN && d.bytes().all(|b| b.is_ascii_hexdigit()))
        .map_or_else(|| "-".repeat(DIGEST_LEN), str::to_string);
    let mut order: Vec<usize> = (0..len).collect();
    order.sort_unstable_by(|a, b| row(*a).0.cmp(row(*b).0));
    let rows = order.into_iter().map(row);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    // Drop indexes of earlier states of the same file.
    if let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str()))
        && let Some((prefix, _)) = name.rsplit_once('-')
        && let Ok(entries) = std::fs::read_dir(dir)
    {
        for e in entries.flatten() {
            let other = e.file_name();
            let other = other.to_string_lossy();
            if other != name && other.starts_with(&format!("{prefix}-")) && other.ends_with(".idx")
            {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    crate::files::write_atomically_with(path, |out| {
        out.write_all(HEADER_PREFIX.as_bytes())?;
        out.write_all(digest.as_bytes())?;
        out.write_all(b"\n")?;
        for (name, offset, line, index) in rows {
            writeln!(out, "{name}\t{offset}\t{line}\t{index}")?;
        }
        Ok(())
    })
}

/// How many samples the index lists (one line each after the header).
pub fn len(path: &Path) -> std::io::Result<usize> {
    let bytes = crate::files::read_checked(path, crate::files::DEFAULT_MAX_DATASET_BYTES)?;
    if bytes.len() < HEADER_LEN || !is_header(&bytes[..HEADER_LEN]) {
        return Err(std::io::Error::other("not an index"));
    }
    Ok(bytes[HEADER_LEN..].iter().filter(|b| **b == b'\n').count())
}

/// The dataset file's SHA-256 the index was written with (64 hex digits),
/// when it was known.
pub fn digest_of(path: &Path) -> std::io::Result<Option<String>> {
    let mut header = vec![0u8; HEADER_LEN];
    crate::files::open_checked(path, crate::files::DEFAULT_MAX_DATASET_BYTES)?
        .0
        .read_exact(&mut header)?;
    if !is_header(&header) {
        return Err(std::io::Error::other("not an index"));
    }
    let digest = String::from_utf8_lossy(&header[HEADER_PREFIX.len()..HEADER_LEN - 1]).into_owned();
    Ok(digest
        .bytes()
        .all(|b| b.is_ascii_hexdigit())
        .then_some(digest))
}

/// Finds `name` by binary search over the index file (a few small reads).
/// `Ok(None)` when the index does not hold it or is not an index.
pub fn lookup(path: &Path, name: &str) -> std::io::Result<Option<Entry>> {
    let (mut file, len) =
        crate::files::open_checked(path, crate::files::DEFAULT_MAX_DATASET_BYTES)?;
    let mut header = vec![0u8; HEADER_LEN];
    if file.read_exact(&mut header).is_err() || !is_header(&header) {
        return Ok(None);
    }
    // Invariant: every line starting before `lo` sorts before `name`; every
    // line starting at or after `hi` sorts after it.
    let (mut lo, mut hi) = (HEADER_LEN as u64, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        // The first line starting at or after `mid`.
        let start = if mid == lo {
            lo
        } else {
            next_line_start(&mut file, mid)?
        };
        if start >= hi {
            hi = mid;
            continue;
        }
        let (row, next) = read_row(&mut file, start)?;
        let Some(entry) = parse(&row) else {
            return Ok(None);
        };
        match entry.name.as_str().cmp(name) {
            std::cmp::Ordering::Equal => return Ok(Some(entry)),
            std::cmp::Ordering::Less => lo = next,
            std::cmp::Ordering::Greater => hi = start,
        }
    }
    Ok(None)
}

fn next_line_start(file: &mut File, from: u64) -> std::io::Result<u64> {
    file.seek(SeekFrom::Start(from - 1))?;
    let mut pos = from - 1;
    let mut buf = [0u8; 256];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(pos);
        }
        if let Some(i) = buf[..n].iter().position(|&b| b == b'\n') {
            return Ok(pos + i as u64 + 1);
        }
        pos += n as u64;
    }
}

/// The line at `start` (without its newline) and the offset after it.
fn read_row(file: &mut File, start: u64) -> std::io::Result<(String, u64)> {
    file.seek(SeekFrom::Start(start))?;
    let mut row = Vec::new();
    let mut buf = [0u8; 256];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        if let Some(i) = buf[..n].iter().position(|&b| b == b'\n') {
            row.extend_from_slice(&buf[..i]);
            break;
        }
        row.extend_from_slice(&buf[..n]);
    }
    let next = start + row.len() as u64 + 1;
    Ok((String::from_utf8_lossy(&row).into_owned(), next))
}

fn parse(row: &str) -> Option<Entry> {
    let mut parts = row.split('\t');
    let name = parts.next()?.to_string();
    let offset = parts.next()?.parse().ok()?;
    let line = parts.next()?.parse().ok()?;
    let index = parts.next()?.parse().ok()?;
    Some(Entry {
        name,
        offset,
        line,
        index,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dataset;

    #[test]
    fn finds_every_name_and_only_those() {
        let dir = std::env::temp_dir().join(format!("eval-index-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let data: String = (0..500)
            .map(|i| format!("{{\"input\": \"question {i} {}\"}}\r\n", "x".repeat(i % 7)))
            .collect();
        let file = dir.join("d.jsonl");
        std::fs::write(&file, format!("\u{feff}{data}")).unwrap();
        let ds = Dataset::load(&file).unwrap();
        let names = ds.test_names();
        let idx = path_for(&dir, &file).unwrap();
        let digest = "0123456789abcdef".repeat(4);
        write(&idx, &ds.samples, &names, Some(&digest)).unwrap();
        assert_eq!(digest_of(&idx).unwrap(), Some(digest));
        assert_eq!(len(&idx).unwrap(), 500);
        for (i, n) in names.iter().enumerate() {
            let e = lookup(&idx, n)
                .unwrap()
                .unwrap_or_else(|| panic!("{n} not found"));
            assert_eq!((e.index, e.line), (i, i + 1));
            let one = Dataset::load_record(&file, &file.to_string_lossy(), &e).unwrap();
            assert_eq!(one.samples[0].input, ds.samples[i].input);
            assert_eq!(one.samples[0].source, ds.samples[i].source);
            assert_eq!(one.samples[0].id, ds.samples[i].id);
        }
        for missing in ["", "a", "question", "zzz", "question_0_x"] {
            assert_eq!(lookup(&idx, missing).unwrap(), None, "{missing}");
        }
        // An edit makes a new index path, and writing it drops the old one.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&file, "{\"input\": \"changed\"}\n").unwrap();
        let new = path_for(&dir, &file).unwrap();
        assert_ne!(new, idx);
        let ds = Dataset::load(&file).unwrap();
        write(&new, &ds.samples, &ds.test_names(), None).unwrap();
        assert!(new.exists() && !idx.exists());
        assert_eq!(digest_of(&new).unwrap(), None, "unknown, said so");
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn csv_records_load_alone() {
        let dir = std::env::temp_dir().join(format!("eval-index-csv-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("d.csv");
        std::fs::write(
            &file,
            "\u{feff}id,input,ground_truth\r\na,\"two\nlines\",x\r\n\r\nb,plain,\"[\"\"y\"\"]\"\r\n",
        )
        .unwrap();
        let ds = Dataset::load(&file).unwrap();
        let names = ds.test_names();
        let idx = path_for(&dir, &file).unwrap();
        write(&idx, &ds.samples, &names, None).unwrap();
        for (i, n) in names.iter().enumerate() {
            let e = lookup(&idx, n).unwrap().unwrap();
            let one = Dataset::load_record(&file, &file.to_string_lossy(), &e).unwrap();
            assert_eq!(one.samples[0], ds.samples[i]);
        }
        let _ = std::fs::remove_dir_all(dir);
    }
}
