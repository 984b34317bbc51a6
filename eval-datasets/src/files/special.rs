//! Writing through to a character device or a FIFO (`--output /dev/stdout`,
//! `/dev/null`, a named pipe): the file is never replaced, only written to.

use std::fs::{File, FileType};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

/// A reader that takes nothing for this long fails the write.
const STALL: Duration = Duration::from_secs(60);

/// The special files that are written through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    CharDevice,
    Fifo,
}

/// Whether a file of type `t` is written through, and as what.
pub(super) fn writable_kind(t: &FileType) -> Option<Kind> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_char_device() {
            return Some(Kind::CharDevice);
        }
        if t.is_fifo() {
            return Some(Kind::Fifo);
        }
    }
    let _ = t;
    None
}

/// Writes what `write` writes to the device or FIFO at `path` (symlinks
/// followed), without creating or truncating anything.
pub(super) fn write_through<F>(path: &Path, kind: Kind, write: F) -> std::io::Result<()>
where
    F: FnOnce(&mut dyn Write) -> std::io::Result<()>,
{
    let mut options = std::fs::OpenOptions::new();
    options.write(true);
    #[cfg(unix)]
    if kind == Kind::Fifo {
        // Opening a FIFO without a reader would wait for one forever.
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| {
        #[cfg(unix)]
        if e.raw_os_error() == Some(libc::ENXIO) {
            return super::refused(path, "a FIFO that nothing reads");
        }
        e
    })?;
    // Replaced between the check and the open: not ours to write through.
    let now = file.metadata()?.file_type();
    if writable_kind(&now) != Some(kind) {
        return Err(super::refused(path, super::read::kind(&now)));
    }
    let mut out = std::io::BufWriter::new(Patient { file, path });
    write(&mut out)?;
    out.flush()
}

/// A non-blocking FIFO written to the end: a full pipe is waited on (up to
/// [`STALL`] without progress).
struct Patient<'a> {
    file: File,
    path: &'a Path,
}

impl Write for Patient<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let start = Instant::now();
        loop {
            match self.file.write(buf) {
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if start.elapsed() > STALL {
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::TimedOut,
                            format!(
                                "{}: nothing read what was written for {} s",
                                self.path.display(),
                                STALL.as_secs()
                            ),
                        ));
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
                other => return other,
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}
