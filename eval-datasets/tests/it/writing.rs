//! How every file we write is written (`files::write_atomically`): a
//! regular file atomically, a symlink's target (the link kept), a device or
//! a FIFO written through and never replaced, anything else refused.

#![cfg(unix)]

use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use eval_datasets::files::write_atomically;

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "eval-datasets-writing-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success());
}

/// `f`'s result, or a failure when it takes longer than `limit`.
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("still running after {limit:?}"))
}

#[test]
fn a_symlink_keeps_being_a_link_and_its_target_is_written() {
    let dir = scratch("symlink");
    let target = dir.join("real.json");
    std::fs::write(&target, "old").unwrap();
    let link = dir.join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    write_atomically(&link, b"new").unwrap();
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");

    let dangling = dir.join("dangling.json");
    std::os::unix::fs::symlink(dir.join("nowhere/x.json"), &dangling).unwrap();
    let err = write_atomically(&dangling, b"new").unwrap_err().to_string();
    assert!(err.contains("a symlink to nothing"), "{err}");
    assert!(std::fs::symlink_metadata(&dangling).unwrap().is_symlink());

    let err = write_atomically(&dir, b"x").unwrap_err().to_string();
    assert!(err.contains("a directory, not a regular file"), "{err}");
}

#[test]
fn devices_are_written_through_and_never_replaced() {
    write_atomically(Path::new("/dev/null"), b"results").unwrap();
    assert!(
        std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    );
    if Path::new("/dev/full").exists() {
        let err = write_atomically(Path::new("/dev/full"), &vec![b'x'; 1 << 16]).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(28), "ENOSPC: {err}");
        assert!(
            std::fs::metadata("/dev/full")
                .unwrap()
                .file_type()
                .is_char_device()
        );
    }
    // A symlink to a device (as /dev/stdout is) is written through too.
    let dir = scratch("devlink");
    let link = dir.join("out.json");
    std::os::unix::fs::symlink("/dev/null", &link).unwrap();
    write_atomically(&link, b"results").unwrap();
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
}

#[test]
fn a_fifo_is_written_through_or_refused_when_nothing_reads_it() {
    let dir = scratch("fifo");
    let fifo = dir.join("out.json");
    mkfifo(&fifo);
    // Nothing reads it: refused at once, not waited on.
    let path = fifo.clone();
    let err = within(Duration::from_secs(10), move || {
        write_atomically(&path, b"x")
    })
    .unwrap_err()
    .to_string();
    assert!(err.contains("a FIFO that nothing reads"), "{err}");
    // A reader: every byte arrives (more than a pipe holds), the FIFO stays.
    let (tx, rx) = mpsc::channel();
    let path = fifo.clone();
    std::thread::spawn(move || {
        let mut got = Vec::new();
        std::fs::File::open(&path)
            .unwrap()
            .read_to_end(&mut got)
            .unwrap();
        tx.send(got).unwrap();
    });
    let body = vec![b'r'; 1 << 20];
    let sent = body.clone();
    let path = fifo.clone();
    within(Duration::from_secs(30), move || {
        // The reader may not have opened it yet.
        for _ in 0..500 {
            match write_atomically(&path, &sent) {
                Ok(()) => return,
                Err(e) if e.to_string().contains("nothing reads") => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                Err(e) => panic!("{e}"),
            }
        }
        panic!("the reader never opened the FIFO");
    });
    let got = rx.recv_timeout(Duration::from_secs(30)).unwrap();
    assert_eq!(got.len(), body.len());
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
}
