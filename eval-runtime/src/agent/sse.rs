//! A reader of server-sent events (`text/event-stream`), fed the body's
//! bytes as they arrive.
//!
//! It follows the WHATWG HTML standard's "interpreting an event stream"
//! (<https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation>):
//! lines end with CRLF, LF or CR (a CRLF split across two chunks is one line
//! end); a leading byte-order mark is dropped; a line starting with `:` is a
//! comment; `field: value` loses one space after the colon; `data` lines
//! are joined with `\n`; `event` names the event's type; an empty line
//! dispatches the event (none when it has no `data`). `retry` and unknown
//! fields are ignored. What is left when the stream ends without an empty
//! line is not dispatched ([`Reader::pending`] tells what it was).
//!
//! One departure from the standard: invalid UTF-8 is an error naming its
//! byte offset in the body ([`InvalidUtf8`]), not U+FFFD. The standard's
//! reader shows text to a person; ours scores it, and a broken answer
//! decoded lossily would be scored (and fail) as if the agent had said it.
//!
//! Our own rather than the `eventsource-stream` crate: that one wants the
//! body as a `Stream` (reqwest's `stream` feature) and was last released in
//! 2022; this reader is fed the chunks [`BoundedBody`](crate::http::BoundedBody)
//! reads, so the size limit and the timeout stay in one place.

/// Bytes that are not UTF-8 in an answer that must be text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("invalid UTF-8 at byte offset {offset} of the body")]
pub(crate) struct InvalidUtf8 {
    /// Where the first byte that is not UTF-8 is, from the body's start.
    pub offset: u64,
}

impl InvalidUtf8 {
    /// `bytes` as text, or where they stop being UTF-8 (`start`: the
    /// offset of `bytes` in the body).
    pub(crate) fn check(bytes: &[u8], start: u64) -> Result<&str, InvalidUtf8> {
        std::str::from_utf8(bytes).map_err(|e| InvalidUtf8 {
            offset: start.saturating_add(e.valid_up_to() as u64),
        })
    }
}

/// One dispatched event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Event {
    /// The `event` field (empty: a plain `message`).
    pub event: String,
    /// The `data` lines, joined with `\n`.
    pub data: String,
}

/// The reader's state between chunks.
#[derive(Debug, Default)]
pub(crate) struct Reader {
    /// The line being read (its bytes so far).
    line: Vec<u8>,
    /// The offset in the body of the line being read.
    line_start: u64,
    /// Bytes read so far.
    read: u64,
    /// The last byte seen was a CR: a LF right after it ends nothing.
    after_cr: bool,
    /// The first line has been read (a BOM is only dropped from it).
    started: bool,
    event: String,
    data: String,
    has_data: bool,
}

impl Reader {
    /// A reader at the start of a stream.
    pub(crate) fn new() -> Self {
        Reader::default()
    }

    /// Reads `bytes` (the next chunk of the body), pushing each event they
    /// complete onto `out`; a line that is not UTF-8 stops it.
    pub(crate) fn feed(&mut self, bytes: &[u8], out: &mut Vec<Event>) -> Result<(), InvalidUtf8> {
        for &b in bytes {
            self.read = self.read.saturating_add(1);
            match b {
                b'\n' if self.after_cr => {
                    self.after_cr = false;
                    self.line_start = self.read;
                }
                b'\n' | b'\r' => {
                    self.after_cr = b == b'\r';
                    let line = std::mem::take(&mut self.line);
                    self.line_end(&line, out)?;
                    self.line_start = self.read;
                }
                _ => {
                    self.after_cr = false;
                    self.line.push(b);
                }
            }
        }
        Ok(())
    }

    /// What the stream left undispatched at its end: the `data` of an event
    /// that had no empty line after it (e.g. a final `data: [DONE]`), or
    /// the start of a line (an error when that is not UTF-8).
    pub(crate) fn pending(&self) -> Result<Option<String>, InvalidUtf8> {
        if !self.line.is_empty() {
            let (line, start) = self.unmarked(&self.line, !self.started);
            let text = InvalidUtf8::check(line, start)?;
            return Ok(Some(match text.strip_prefix("data:") {
                Some(v) => v.strip_prefix(' ').unwrap_or(v).to_string(),
                None => text.to_string(),
            }));
        }
        Ok(self.has_data.then(|| {
            self.data
                .strip_suffix('\n')
                .unwrap_or(&self.data)
                .to_string()
        }))
    }

    /// The line being read without a leading byte-order mark when it is
    /// the first (`first`), and its offset in the body.
    fn unmarked<'l>(&self, line: &'l [u8], first: bool) -> (&'l [u8], u64) {
        match line.strip_prefix(b"\xEF\xBB\xBF") {
            Some(rest) if first => (rest, self.line_start.saturating_add(3)),
            _ => (line, self.line_start),
        }
    }

    fn line_end(&mut self, line: &[u8], out: &mut Vec<Event>) -> Result<(), InvalidUtf8> {
        let (line, start) = self.unmarked(line, !self.started);
        self.started = true;
        let text = InvalidUtf8::check(line, start)?;
        if text.is_empty() {
            if self.has_data {
                let mut data = std::mem::take(&mut self.data);
                if data.ends_with('\n') {
                    data.pop();
                }
                out.push(Event {
                    event: std::mem::take(&mut self.event),
                    data,
                });
            }
            self.event.clear();
            self.data.clear();
            self.has_data = false;
            return Ok(());
        }
        if text.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match text.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (text, ""),
        };
        match field {
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            "event" => self.event = value.to_string(),
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[&[u8]]) -> (Vec<Event>, Option<String>) {
        let mut reader = Reader::new();
        let mut out = Vec::new();
        for c in chunks {
            reader.feed(c, &mut out).unwrap();
        }
        (out, reader.pending().unwrap())
    }

    /// Where the first chunk not UTF-8 stops the reader.
    fn invalid(chunks: &[&[u8]]) -> InvalidUtf8 {
        let mut reader = Reader::new();
        let mut out = Vec::new();
        for c in chunks {
            if let Err(e) = reader.feed(c, &mut out) {
                return e;
            }
        }
        reader.pending().unwrap_err()
    }

    fn ev(event: &str, data: &str) -> Event {
        Event {
            event: event.into(),
            data: data.into(),
        }
    }

    #[test]
    fn data_lines_join_and_blank_lines_dispatch() {
        let (got, pending) = events(&[b"data: a\ndata:b\ndata:  c\n\nevent: error\ndata: x\n\n"]);
        assert_eq!(got, [ev("", "a\nb\n c"), ev("error", "x")]);
        assert_eq!(pending, None);
    }

    #[test]
    fn every_line_end_and_chunk_boundary() {
        let whole = b"\xEF\xBB\xBFdata: one\r\n\r\ndata: two\r\rdata: three\n\n: comment\nid: 7\nretry: 10\ndata\n\n";
        let want = [ev("", "one"), ev("", "two"), ev("", "three"), ev("", "")];
        assert_eq!(events(&[whole]).0, want);
        // Split at every byte: CRLF, the BOM and UTF-8 split across chunks.
        let chunks: Vec<&[u8]> = whole.chunks(1).collect();
        assert_eq!(events(&chunks).0, want);
        let (got, _) = events(&[b"data: caf\xC3", b"\xA9\r", b"\n\n"]);
        assert_eq!(got, [ev("", "café")]);
    }

    #[test]
    fn events_without_data_and_odd_bytes() {
        let (got, _) = events(&[b"event: ping\n\n:keep-alive\n\ndata: \xC3\xA9\n\n"]);
        assert_eq!(got, [ev("", "é")]);
        let (got, pending) = events(&[b"data: {\"a\":1}\n\ndata: [DONE]"]);
        assert_eq!(got, [ev("", "{\"a\":1}")]);
        assert_eq!(pending.as_deref(), Some("[DONE]"), "no blank line after it");
        let (_, pending) = events(&[b"data: [DONE]\n"]);
        assert_eq!(pending.as_deref(), Some("[DONE]"));
        let (got, pending) = events(&[b""]);
        assert!(got.is_empty() && pending.is_none());
    }

    #[test]
    fn bytes_that_are_not_utf8_are_an_error_at_their_offset() {
        // `data: ok\n\n` is 10 bytes, `data: ` 6 more: the 0xFF is byte 16.
        let whole: &[u8] = b"data: ok\n\ndata: \xFFx\n\n";
        assert_eq!(invalid(&[whole]), InvalidUtf8 { offset: 16 });
        let chunks: Vec<&[u8]> = whole.chunks(1).collect();
        assert_eq!(invalid(&chunks), InvalidUtf8 { offset: 16 });
        // After CRLF line ends and a byte-order mark; in a comment; a
        // sequence cut short by the line's end; in the last, unended line.
        assert_eq!(
            invalid(&[b"\xEF\xBB\xBFdata: a\r\n\r\ndata: b\xC3\r\n"]),
            InvalidUtf8 { offset: 21 }
        );
        assert_eq!(invalid(&[b": \xFE\n"]), InvalidUtf8 { offset: 2 });
        assert_eq!(
            invalid(&[b"data: [DONE]\n\ndata: \xE2\x82"]),
            InvalidUtf8 { offset: 20 }
        );
        assert_eq!(
            InvalidUtf8 { offset: 16 }.to_string(),
            "invalid UTF-8 at byte offset 16 of the body"
        );
    }
}
