//! Mutated datasets against every loader: no panic, and a bounded time per
//! input.
//!
//! The seeds are real files: every dataset and manifest among the public
//! fixtures (`tests/fixtures/public`), the example datasets and the UI
//! tests' data. Each case takes one seed (cut to its first 16 KiB) and
//! applies a few mutations — byte flips, cuts, inserted quotes, brackets,
//! line breaks and invalid UTF-8, duplicated and deleted runs — then feeds
//! the bytes to the three syntaxes (`.jsonl`, `.csv`, `.json`, which reach
//! every schema: unrag, runevals, golden, deepeval, OpenAI evals,
//! promptflow, promptfoo), the retrieval loader, the runevals upgrade and
//! the manifest parser.
//!
//! The budget is fixed (`CASES`) and the seed too, so every run (CI's
//! included) tries the same inputs. `EVAL_FUZZ_CASES=N` runs more.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use eval_datasets::retrieval::RetrievalDataset;
use eval_datasets::{Dataset, Manifest};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, RngSeed, TestCaseError, TestRunner};

/// Cases per run (each feeds one input to every loader).
const CASES: u32 = 1000;
/// Longest a loader may take on one input (a debug build, on a busy machine).
const LIMIT: Duration = Duration::from_secs(2);
/// Bytes of each seed kept.
const SEED_BYTES: usize = 16 * 1024;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every dataset and manifest under `dir`, sorted (the order is part of the seed).
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files(&path, out);
        } else if matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("jsonl" | "ndjson" | "csv" | "json" | "yaml" | "yml")
        ) {
            out.push(path);
        }
    }
}

fn seeds() -> Vec<Vec<u8>> {
    let mut paths = Vec::new();
    for dir in [
        "tests/fixtures/public",
        "examples",
        "tests/ui/data",
        "benches/data",
    ] {
        files(&repo().join(dir), &mut paths);
    }
    let mut seeds: Vec<Vec<u8>> = paths
        .iter()
        .map(|p| {
            let mut bytes = std::fs::read(p).unwrap();
            bytes.truncate(SEED_BYTES);
            bytes
        })
        .collect();
    // Shapes the fixtures hold few of, written out.
    seeds.push(br#"[{"input": [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}], "ideal": ["a", "b"]}]"#.to_vec());
    seeds.push(br#"{"chat_history": [{"inputs": {"question": "q"}, "outputs": {"answer": "a"}}], "question": "q2", "truth": "t"}"#.to_vec());
    seeds.push(b"__expected,question,__metadata:topic\ncontains:x,q,t\n".to_vec());
    assert!(
        seeds.len() > 100,
        "the fixtures are missing: {} seeds",
        seeds.len()
    );
    seeds
}

#[derive(Debug, Clone)]
enum Mutation {
    /// XOR one byte (position as a fraction of the length, in 1/65536).
    Flip(u16, u8),
    /// Cut the input at a point.
    Truncate(u16),
    /// Insert a token at a point.
    Insert(u16, &'static [u8]),
    /// Copy a run of up to 256 bytes to another point.
    Duplicate(u16, u8, u16),
    /// Delete a run of up to 256 bytes.
    Delete(u16, u8),
}

const TOKENS: &[&[u8]] = &[
    b"\"",
    b"\"\"",
    b"'",
    b"[",
    b"]",
    b"{",
    b"}",
    b",",
    b":",
    b"\n",
    b"\r",
    b"\r\n",
    b"\\",
    b"\xff",
    b"\xc3",
    b"\xe2\x82",
    b"\0",
    b"\xef\xbb\xbf",
    b"null",
    b"[[[[[[[[",
    b"}}}}",
    b"\"input\":",
    b"\"queries\": [",
    b"\"items\": [",
    b"- ",
    b"  ",
    b"$file:",
    b"\t",
    b"#",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<u16>(), 1..=255u8).prop_map(|(at, x)| Mutation::Flip(at, x)),
        any::<u16>().prop_map(Mutation::Truncate),
        (any::<u16>(), prop::sample::select(TOKENS)).prop_map(|(at, t)| Mutation::Insert(at, t)),
        (any::<u16>(), any::<u8>(), any::<u16>())
            .prop_map(|(a, n, b)| Mutation::Duplicate(a, n, b)),
        (any::<u16>(), any::<u8>()).prop_map(|(at, n)| Mutation::Delete(at, n)),
    ]
}

/// The point `at` (1/65536ths of the length) of `bytes`.
fn point(bytes: &[u8], at: u16) -> usize {
    bytes.len() * at as usize / 65_536
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    match *m {
        Mutation::Flip(at, x) => {
            let i = point(bytes, at);
            if let Some(b) = bytes.get_mut(i) {
                *b ^= x;
            }
        }
        Mutation::Truncate(at) => {
            let i = point(bytes, at);
            bytes.truncate(i);
        }
        Mutation::Insert(at, token) => {
            let i = point(bytes, at);
            bytes.splice(i..i, token.iter().copied());
        }
        Mutation::Duplicate(from, n, to) => {
            let i = point(bytes, from);
            let run: Vec<u8> = bytes[i..(i + n as usize).min(bytes.len())].to_vec();
            let j = point(bytes, to);
            bytes.splice(j..j, run);
        }
        Mutation::Delete(at, n) => {
            let i = point(bytes, at);
            let end = (i + n as usize).min(bytes.len());
            bytes.drain(i..end);
        }
    }
}

/// Runs `f`, failing the case when it took longer than [`LIMIT`].
fn timed<T>(what: &str, f: impl FnOnce() -> T) -> Result<T, TestCaseError> {
    let started = Instant::now();
    let out = f();
    let took = started.elapsed();
    if took > LIMIT {
        return Err(TestCaseError::fail(format!("{what} took {took:?}")));
    }
    Ok(out)
}

/// Feeds `bytes` to every loader.
fn every_loader(bytes: &[u8], dir: &Path) -> Result<(), TestCaseError> {
    for name in ["d.jsonl", "d.csv", "d.json"] {
        let loaded = timed(name, || Dataset::from_bytes(name, bytes))?;
        match loaded {
            Ok(ds) => {
                let names = timed("test names", || ds.test_names())?;
                prop_assert_eq!(names.len(), ds.samples.len());
            }
            Err(e) => {
                // Every problem is one line.
                for p in e.problems() {
                    prop_assert!(!p.contains('\n'), "{}: {:?}", name, p);
                }
            }
        }
    }
    let _ = timed("retrieval", || {
        RetrievalDataset::from_bytes("d.json", bytes)
    })?;
    if let Ok(doc) = eval_datasets::dataset::parse_json_strict(&String::from_utf8_lossy(bytes))
        && let Ok(upgraded) = timed("runevals upgrade", || {
            eval_datasets::runevals::upgrade(&doc)
        })?
    {
        let text = upgraded.to_string();
        let _ = timed("upgraded", || {
            Dataset::from_bytes("u.json", text.as_bytes())
        })?;
    }
    let manifest = timed("manifest", || {
        Manifest::parse_bytes(bytes, "agent.yaml", dir, dir)
    })?;
    if let Err(e) = manifest {
        for p in e.problems() {
            prop_assert!(!p.contains('\n'), "manifest: {:?}", p);
        }
    }
    Ok(())
}

#[test]
fn mutated_datasets_never_panic_and_load_in_bounded_time() {
    let seeds = seeds();
    // Datasets a manifest may name, so `$file:` paths sometimes resolve.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("eval-datasets-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("eval")).unwrap();
    for (name, text) in [
        (
            "rag.jsonl",
            "{\"input\": \"q\", \"expected\": \"a\", \"context\": [\"c\"]}\n",
        ),
        (
            "eval/rag.jsonl",
            "{\"input\": \"q\", \"expected\": \"a\"}\n",
        ),
    ] {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let cases = std::env::var("EVAL_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(CASES);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(0x00e7_a15f_0220),
        max_shrink_iters: 256,
        ..Config::default()
    });
    let input = (0..seeds.len(), prop::collection::vec(mutation(), 1..8));
    let started = Instant::now();
    let result = runner.run(&input, |(seed, mutations)| {
        let mut bytes = seeds[seed].clone();
        for m in &mutations {
            apply(&mut bytes, m);
        }
        every_loader(&bytes, &dir)
    });
    // The seeds themselves, unmutated.
    for (i, seed) in seeds.iter().enumerate() {
        every_loader(seed, &dir).unwrap_or_else(|e| panic!("seed {i}: {e}"));
    }
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = result {
        panic!("{e}");
    }
    eprintln!("{cases} mutated inputs in {:?}", started.elapsed());
}
