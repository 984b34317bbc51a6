//! A reader of server-sent events (`text/event-stream`), fed the body's
//! bytes as they arrive.
//!
//! It follows the WHATWG HTML standard's "interpreting an event stream"
//! (<https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation>):
//! lines end with CRLF, LF or CR (a CRLF split across two chunks is one line
//! end); a leading byte-order mark is dropped; a line starting with `:` is a
//! comment; `field: value` loses one space after the colon; `data` lines
//! are joined with `\n`; `event` names the event's type; an empty line
//! dispatches the event (none when it has no `data`); invalid UTF-8 becomes
//! U+FFFD. `retry` and unknown fields are ignored. What is left when the
//! stream ends without an empty line is not dispatched ([`Reader::pending`]
//! tells what it was).
//!
//! Our own rather than the `eventsource-stream` crate: that one wants the
//! body as a `Stream` (reqwest's `stream` feature) and was last released in
//! 2022; this reader is fed the chunks [`BoundedBody`](crate::http::BoundedBody)
//! reads, so the size limit and the timeout stay in one place.

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
    /// complete onto `out`.
    pub(crate) fn feed(&mut self, bytes: &[u8], out: &mut Vec<Event>) {
        for &b in bytes {
            match b {
                b'\n' if self.after_cr => self.after_cr = false,
                b'\n' | b'\r' => {
                    self.after_cr = b == b'\r';
                    let line = std::mem::take(&mut self.line);
                    self.line_end(&line, out);
                }
                _ => {
                    self.after_cr = false;
                    self.line.push(b);
                }
            }
        }
    }

    /// What the stream left undispatched at its end: the `data` of an event
    /// that had no empty line after it (e.g. a final `data: [DONE]`), or
    /// the start of a line.
    pub(crate) fn pending(&self) -> Option<String> {
        if !self.line.is_empty() {
            let mut line = self.line.as_slice();
            if !self.started {
                line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
            }
            let text = String::from_utf8_lossy(line);
            return Some(match text.strip_prefix("data:") {
                Some(v) => v.strip_prefix(' ').unwrap_or(v).to_string(),
                None => text.into_owned(),
            });
        }
        self.has_data.then(|| {
            self.data
                .strip_suffix('\n')
                .unwrap_or(&self.data)
                .to_string()
        })
    }

    fn line_end(&mut self, line: &[u8], out: &mut Vec<Event>) {
        let mut line = line;
        if !self.started {
            self.started = true;
            line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        }
        if line.is_empty() {
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
            return;
        }
        if line[0] == b':' {
            return;
        }
        let text = String::from_utf8_lossy(line);
        let (field, value) = match text.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (text.as_ref(), ""),
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(chunks: &[&[u8]]) -> (Vec<Event>, Option<String>) {
        let mut reader = Reader::new();
        let mut out = Vec::new();
        for c in chunks {
            reader.feed(c, &mut out);
        }
        (out, reader.pending())
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
        let (got, _) = events(&[b"event: ping\n\n:keep-alive\n\ndata: \xFF\n\n"]);
        assert_eq!(got, [ev("", "\u{FFFD}")]);
        let (got, pending) = events(&[b"data: {\"a\":1}\n\ndata: [DONE]"]);
        assert_eq!(got, [ev("", "{\"a\":1}")]);
        assert_eq!(pending.as_deref(), Some("[DONE]"), "no blank line after it");
        let (_, pending) = events(&[b"data: [DONE]\n"]);
        assert_eq!(pending.as_deref(), Some("[DONE]"));
        let (got, pending) = events(&[b""]);
        assert!(got.is_empty() && pending.is_none());
    }
}
