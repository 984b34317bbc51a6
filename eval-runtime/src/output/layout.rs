//! How a results file is laid out: the document and its lists indented, one
//! line per sample record (and per dataset summary). A 100,000-sample file
//! is about half the size of a fully indented one and faster to write, and
//! `grep`, `wc -l` and line diffs see one sample per line.

use std::io::{self, Write};

use serde_json::ser::{Formatter, PrettyFormatter};

/// Indents containers opened less than `depth` levels down; writes deeper
/// ones on one line (serde_json's compact form, the trait's defaults).
pub(crate) struct LinePerRecord {
    pretty: PrettyFormatter<'static>,
    /// Containers open now.
    open: usize,
    depth: usize,
}

impl LinePerRecord {
    /// The results file's layout: the document and its lists (`samples`,
    /// `datasets`) indented, their items on one line each.
    pub(crate) fn new() -> Self {
        LinePerRecord {
            pretty: PrettyFormatter::with_indent(b"  "),
            open: 0,
            depth: 2,
        }
    }

    /// Whether the container being opened now is indented.
    fn opening_pretty(&self) -> bool {
        self.open < self.depth
    }

    /// Whether the innermost open container is indented.
    fn inside_pretty(&self) -> bool {
        self.open <= self.depth
    }
}

impl Formatter for LinePerRecord {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        let pretty = self.opening_pretty();
        self.open += 1;
        if pretty {
            self.pretty.begin_array(w)
        } else {
            w.write_all(b"[")
        }
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open -= 1;
        if self.opening_pretty() {
            self.pretty.end_array(w)
        } else {
            w.write_all(b"]")
        }
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if self.inside_pretty() {
            self.pretty.begin_array_value(w, first)
        } else if first {
            Ok(())
        } else {
            w.write_all(b",")
        }
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        if self.inside_pretty() {
            self.pretty.end_array_value(w)
        } else {
            Ok(())
        }
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        let pretty = self.opening_pretty();
        self.open += 1;
        if pretty {
            self.pretty.begin_object(w)
        } else {
            w.write_all(b"{")
        }
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open -= 1;
        if self.opening_pretty() {
            self.pretty.end_object(w)
        } else {
            w.write_all(b"}")
        }
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if self.inside_pretty() {
            self.pretty.begin_object_key(w, first)
        } else if first {
            Ok(())
        } else {
            w.write_all(b",")
        }
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        if self.inside_pretty() {
            self.pretty.begin_object_value(w)
        } else {
            w.write_all(b":")
        }
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        if self.inside_pretty() {
            self.pretty.end_object_value(w)
        } else {
            Ok(())
        }
    }
}

/// `value` as JSON in the results file's layout.
pub(crate) fn to_writer(out: impl Write, value: &impl serde::Serialize) -> serde_json::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(out, LinePerRecord::new());
    value.serialize(&mut ser)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn one_line_per_item_of_the_documents_lists() {
        let doc = json!({
            "version": 1,
            "datasets": [{"name": "qa", "metrics": [{"name": "contains", "mean": 0.5}]}],
            "samples": [
                {"id": "a", "metrics": [{"name": "contains", "score": 1.0}], "tags": []},
                {"id": "b", "metadata": {"k": {"n": [1, 2]}}}
            ],
            "empty": [],
        });
        let mut out = Vec::new();
        super::to_writer(&mut out, &doc).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "{\n  \"version\": 1,\n  \"datasets\": [\n    {\"name\":\"qa\",\"metrics\":[{\"name\":\"contains\",\"mean\":0.5}]}\n  ],\n  \"samples\": [\n    {\"id\":\"a\",\"metrics\":[{\"name\":\"contains\",\"score\":1.0}],\"tags\":[]},\n    {\"id\":\"b\",\"metadata\":{\"k\":{\"n\":[1,2]}}}\n  ],\n  \"empty\": []\n}"
        );
        // It is the same JSON.
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            doc
        );
    }
}
