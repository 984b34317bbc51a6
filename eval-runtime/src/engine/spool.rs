//! A run's finished records, out of memory: each sample's record is
//! serialized once, when its sample finishes, and held in a bounded buffer;
//! a full buffer is sorted and written to a temporary file (a sorted run,
//! unlinked at once, so a killed process leaves nothing behind). The end of
//! the run reads every record back in (dataset, test name) order — the
//! results file's order — by merging the buffer with those files, as often
//! as it needs (the attribute rewrites its file as datasets finish).
//!
//! Memory is the buffer's bound (`EVAL_SPILL_BYTES`, 4 MiB by default) plus one bit per trial,
//! whatever the run's size; a run whose records fit in the buffer never
//! touches the disk. When no temporary file can be written the records stay
//! in memory (nothing is lost) and a note says so once.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::sync::{Mutex, MutexGuard};

/// Read buffer per sorted run while merging.
const READ_BUFFER: usize = 64 << 10;

/// Finished records of one run. See the [module docs](self).
pub(crate) struct Spool {
    inner: Mutex<Inner>,
}

struct Inner {
    /// Records held in memory (sorted only when read).
    held: Vec<Entry>,
    held_bytes: usize,
    /// Sorted runs written to temporary files: the file and its entries.
    spilled: Vec<(File, usize)>,
    /// Which trials have a record (one bit each).
    stored: Vec<u64>,
    trials: usize,
    count: usize,
    limit: usize,
    /// Spilling failed once: everything stays in memory from then on.
    cannot_spill: bool,
}

/// One record and its sort key (`<dataset>\0<sample name>`).
pub(crate) struct Entry {
    bytes: Box<[u8]>,
    key_len: u32,
}

impl Entry {
    fn key(&self) -> &[u8] {
        &self.bytes[..self.key_len as usize]
    }

    /// The record, as compact JSON.
    pub(crate) fn record(&self) -> &[u8] {
        &self.bytes[self.key_len as usize..]
    }
}

impl Spool {
    /// A spool for `trials` trials, spilling above the default bound.
    pub(crate) fn new(trials: usize) -> Spool {
        let limit = usize::try_from(crate::config::DEFAULT_SPILL_BYTES).unwrap_or(usize::MAX);
        Self::with_limit(trials, limit)
    }

    /// The same, spilling above `limit` bytes.
    pub(crate) fn with_limit(trials: usize, limit: usize) -> Spool {
        Spool {
            inner: Mutex::new(Inner {
                held: Vec::new(),
                held_bytes: 0,
                spilled: Vec::new(),
                stored: vec![0; trials.div_ceil(64)],
                trials,
                count: 0,
                limit,
                cannot_spill: false,
            }),
        }
    }

    /// Keeps trial `t`'s `record` (compact JSON) under `(dataset, name)`;
    /// a trial's first record is kept, a later one is not.
    pub(crate) fn put(&self, t: usize, (dataset, name): (&str, &str), record: &[u8]) {
        let mut bytes = Vec::with_capacity(dataset.len() + 1 + name.len() + record.len());
        bytes.extend_from_slice(dataset.as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(name.as_bytes());
        let key_len = bytes.len() as u32;
        bytes.extend_from_slice(record);
        let mut inner = self.lock();
        if t >= inner.trials {
            return;
        }
        let (word, bit) = (t / 64, 1u64 << (t % 64));
        match inner.stored.get_mut(word) {
            Some(w) if *w & bit == 0 => *w |= bit,
            _ => return,
        }
        inner.count += 1;
        inner.held_bytes += bytes.len() + std::mem::size_of::<Entry>();
        inner.held.push(Entry {
            bytes: bytes.into_boxed_slice(),
            key_len,
        });
        if inner.held_bytes > inner.limit && !inner.cannot_spill {
            inner.spill();
        }
    }

    /// The records, held while the guard lives (see [`merged`]).
    pub(crate) fn hold(&self) -> Held<'_> {
        Held(self.lock())
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Inner {
    /// Sorts the held records into a temporary file; on failure keeps them
    /// (and says so once).
    fn spill(&mut self) {
        self.held.sort_unstable_by(|a, b| a.key().cmp(b.key()));
        match write_run(&self.held) {
            Ok(file) => {
                self.spilled.push((file, self.held.len()));
                self.held = Vec::new();
                self.held_bytes = 0;
            }
            Err(e) => {
                self.cannot_spill = true;
                super::warn(&format!(
                    "cannot write finished records to the temporary directory ({e}); they stay in memory"
                ));
            }
        }
    }
}

/// Writes `entries` (sorted) to a new unlinked temporary file.
fn write_run(entries: &[Entry]) -> io::Result<File> {
    let mut out = BufWriter::with_capacity(READ_BUFFER, tempfile::tempfile()?);
    for e in entries {
        out.write_all(&e.key_len.to_le_bytes())?;
        out.write_all(&(e.bytes.len() as u32).to_le_bytes())?;
        out.write_all(&e.bytes)?;
    }
    out.into_inner().map_err(io::IntoInnerError::into_error)
}

/// A spool's records, locked.
pub(crate) struct Held<'a>(MutexGuard<'a, Inner>);

impl Held<'_> {
    /// How many records there are.
    pub(crate) fn len(&self) -> usize {
        self.0.count
    }
}

/// Every record of `held` (several runs' spools), in key order.
pub(crate) fn merged<'a>(held: &'a mut [Held<'_>]) -> io::Result<Merged<'a>> {
    let mut sources = Vec::new();
    for h in held.iter_mut() {
        let inner = &mut *h.0;
        inner.held.sort_unstable_by(|a, b| a.key().cmp(b.key()));
        for (file, entries) in &inner.spilled {
            let mut file = file.try_clone()?;
            file.seek(SeekFrom::Start(0))?;
            sources.push(Source::File(
                BufReader::with_capacity(READ_BUFFER, file),
                *entries,
            ));
        }
        sources.push(Source::Held(inner.held.iter()));
    }
    let mut merged = Merged {
        sources,
        heads: BinaryHeap::new(),
    };
    for i in 0..merged.sources.len() {
        merged.advance(i)?;
    }
    Ok(merged)
}

enum Source<'a> {
    Held(std::slice::Iter<'a, Entry>),
    /// A sorted run and the entries left in it.
    File(BufReader<File>, usize),
}

impl Source<'_> {
    fn next(&mut self) -> io::Result<Option<Entry>> {
        match self {
            Source::Held(entries) => Ok(entries.next().map(|e| Entry {
                bytes: e.bytes.clone(),
                key_len: e.key_len,
            })),
            Source::File(_, 0) => Ok(None),
            Source::File(file, left) => {
                *left -= 1;
                let mut lens = [0u8; 8];
                file.read_exact(&mut lens)?;
                let key_len = u32::from_le_bytes([lens[0], lens[1], lens[2], lens[3]]);
                let len = u32::from_le_bytes([lens[4], lens[5], lens[6], lens[7]]) as usize;
                let mut bytes = vec![0u8; len];
                file.read_exact(&mut bytes)?;
                Ok(Some(Entry {
                    bytes: bytes.into_boxed_slice(),
                    key_len,
                }))
            }
        }
    }
}

/// Records of several sorted sources, in key order (see [`merged`]).
pub(crate) struct Merged<'a> {
    sources: Vec<Source<'a>>,
    heads: BinaryHeap<Reverse<Head>>,
}

/// The next entry of source `from`.
struct Head {
    entry: Entry,
    from: usize,
}

impl PartialEq for Head {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}
impl Eq for Head {}
impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Head {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.entry.key(), self.from).cmp(&(other.entry.key(), other.from))
    }
}

impl Merged<'_> {
    fn advance(&mut self, from: usize) -> io::Result<()> {
        if let Some(entry) = self.sources[from].next()? {
            self.heads.push(Reverse(Head { entry, from }));
        }
        Ok(())
    }
}

impl Iterator for Merged<'_> {
    type Item = io::Result<Entry>;

    fn next(&mut self) -> Option<Self::Item> {
        let Reverse(Head { entry, from }) = self.heads.pop()?;
        Some(self.advance(from).map(|()| entry))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(spools: &[&Spool]) -> Vec<(String, String)> {
        let mut held: Vec<Held<'_>> = spools.iter().map(|s| s.hold()).collect();
        merged(&mut held)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (
                    String::from_utf8(e.key().to_vec()).unwrap(),
                    String::from_utf8(e.record().to_vec()).unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn records_come_back_in_key_order_whether_held_or_spilled() {
        // A limit of 200 bytes spills every few records; 1,000 records in a
        // scrambled order come back sorted, each once, twice over.
        let n = 1000;
        let spool = Spool::with_limit(n, 200);
        let other = Spool::new(10);
        for k in 0..n {
            let i = (k * 7919) % n;
            spool.put(
                i,
                ("a", &format!("s{i:04}")),
                format!("{{\"i\":{i}}}").as_bytes(),
            );
        }
        other.put(3, ("b", "x"), b"{}");
        other.put(1, ("a", "s0500_"), b"{\"o\":1}");
        assert!(spool.lock().spilled.len() > 10, "it spilled");
        for _ in 0..2 {
            let got = all(&[&spool, &other]);
            assert_eq!(got.len(), n + 2);
            let mut want: Vec<String> = (0..n).map(|i| format!("a\0s{i:04}")).collect();
            want.push("a\0s0500_".into());
            want.push("b\0x".into());
            want.sort();
            let keys: Vec<&str> = got.iter().map(|(k, _)| k.as_str()).collect();
            assert_eq!(keys, want);
            let (_, record) = got.iter().find(|(k, _)| k == "a\0s0042").unwrap();
            assert_eq!(record, "{\"i\":42}");
        }
    }

    #[test]
    fn a_trial_keeps_its_first_record() {
        let spool = Spool::new(70);
        spool.put(65, ("d", "n"), b"1");
        spool.put(65, ("d", "n"), b"2");
        spool.put(70, ("d", "beyond"), b"3");
        assert_eq!(all(&[&spool]), vec![("d\0n".to_string(), "1".to_string())]);
        assert_eq!(spool.hold().len(), 1);
    }
}
