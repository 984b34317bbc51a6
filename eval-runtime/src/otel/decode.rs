//! An OTLP/HTTP request body decoded within bounds: bounded by what
//! decoding builds, not only by the bytes read.
//!
//! A protobuf message is small on the wire and large in memory: an empty
//! span is two bytes (`0x12 0x00`) and a [`Span`] of a few hundred bytes,
//! an empty attribute two bytes and a `KeyValue` of some seventy. So before
//! a body is decoded, a pass over it counts what decoding would build —
//! spans, attributes, events, links, values, the nesting of values — and a
//! body over [`Limits`] is refused, unread further:
//!
//! * protobuf: a walk of the wire format along the OTLP trace schema
//!   (`opentelemetry/proto/collector/trace/v1/trace_service.proto` and the
//!   messages it holds, as opentelemetry-proto 0.33 generates them);
//! * JSON: a walk of the JSON text (serde_json's, with its own limit of 128
//!   nested arrays and objects) reading the OTLP/JSON member names.
//!
//! A gzip body is inflated as a stream that stops at [`Limits::body`].

use std::io::Read;
use std::mem::size_of;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{
    AnyValue, ArrayValue, EntityRef, InstrumentationScope, KeyValue, KeyValueList,
    any_value::Value as Av,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::span::{Event, Link};
use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span, Status};
use prost::Message;

/// What one request may make the receiver build.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Largest body, in bytes: as sent, and once decompressed.
    pub(crate) body: usize,
    /// Most spans in one request.
    pub(crate) spans: usize,
    /// Most bytes the decoded message's structure may take beyond its
    /// strings and byte strings (which the body's bytes bound): spans,
    /// attributes, events, links, values, each at twice its size (a
    /// vector grows by doubling).
    pub(crate) structure: usize,
    /// Deepest nesting of values (an array or a key-value list in a value).
    pub(crate) depth: usize,
}

/// The receiver's limits (documented in the guide's "Traces" chapter).
pub(crate) const LIMITS: Limits = Limits {
    body: 16 << 20,
    spans: 8192,
    structure: 24 << 20,
    depth: 16,
};

/// Why a body was refused.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Refusal {
    /// Over a limit: HTTP 413.
    TooLarge(String),
    /// Not an OTLP request (or nested deeper than values may be): HTTP 400.
    Malformed(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::TooLarge(m) | Refusal::Malformed(m) => f.write_str(m),
        }
    }
}

/// What decoding a body would build, counted.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Shape {
    pub(crate) spans: usize,
    pub(crate) attributes: usize,
    pub(crate) events: usize,
    pub(crate) links: usize,
    /// Values in arrays, resources, scopes, entity references and the like.
    pub(crate) others: usize,
    /// Bytes of structure, as [`Limits::structure`] counts them.
    pub(crate) structure: usize,
    /// Deepest nesting of values seen.
    pub(crate) depth: usize,
}

impl Shape {
    fn describe(&self) -> String {
        format!(
            "{} spans, {} attributes, {} events, {} links, {} other values",
            self.spans, self.attributes, self.events, self.links, self.others
        )
    }

    /// Counts one element of a repeated field; refuses past the limits.
    fn add(&mut self, kind: Msg, limits: &Limits) -> Result<(), Refusal> {
        match kind {
            Msg::Span => self.spans += 1,
            Msg::KeyValue => self.attributes += 1,
            Msg::Event => self.events += 1,
            Msg::Link => self.links += 1,
            _ => self.others += 1,
        }
        self.structure = self.structure.saturating_add(2 * kind.size());
        self.check(limits)
    }

    /// Counts `bytes` of a value serde holds before decoding it.
    fn buffer(&mut self, bytes: usize, limits: &Limits) -> Result<(), Refusal> {
        self.structure = self.structure.saturating_add(bytes);
        self.check(limits)
    }

    fn check(&self, limits: &Limits) -> Result<(), Refusal> {
        if self.spans > limits.spans {
            return Err(Refusal::TooLarge(format!(
                "more than {} spans in one request: send smaller batches (OTEL_BSP_MAX_EXPORT_BATCH_SIZE)",
                limits.spans
            )));
        }
        if self.structure > limits.structure {
            return Err(Refusal::TooLarge(format!(
                "the request would take over {} MiB to hold decoded ({} so far): send smaller batches",
                limits.structure >> 20,
                self.describe()
            )));
        }
        Ok(())
    }

    fn nest(&mut self, depth: usize, limits: &Limits) -> Result<(), Refusal> {
        self.depth = self.depth.max(depth);
        if depth > limits.depth {
            return Err(Refusal::Malformed(format!(
                "an attribute's value nests arrays or key-value lists more than {} deep",
                limits.depth
            )));
        }
        Ok(())
    }
}

/// The messages of an OTLP trace request.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Msg {
    Request,
    ResourceSpans,
    Resource,
    EntityRef,
    ScopeSpans,
    Scope,
    Span,
    Event,
    Link,
    Status,
    KeyValue,
    AnyValue,
    ArrayValue,
    KeyValueList,
    /// An element of a repeated string field.
    String,
    /// A member whose values nothing decodes (an unknown one).
    Ignored,
}

impl Msg {
    /// What one takes in memory, decoded.
    fn size(self) -> usize {
        match self {
            Msg::Request => size_of::<ExportTraceServiceRequest>(),
            Msg::ResourceSpans => size_of::<ResourceSpans>(),
            Msg::Resource => size_of::<Resource>(),
            Msg::EntityRef => size_of::<EntityRef>(),
            Msg::ScopeSpans => size_of::<ScopeSpans>(),
            Msg::Scope => size_of::<InstrumentationScope>(),
            Msg::Span => size_of::<Span>(),
            Msg::Event => size_of::<Event>(),
            Msg::Link => size_of::<Link>(),
            Msg::Status => size_of::<Status>(),
            Msg::KeyValue => size_of::<KeyValue>(),
            Msg::AnyValue => size_of::<AnyValue>(),
            Msg::ArrayValue => size_of::<ArrayValue>(),
            Msg::KeyValueList => size_of::<KeyValueList>(),
            Msg::String => size_of::<String>(),
            Msg::Ignored => 0,
        }
    }

    /// The field `number` of this message, when it holds messages (or
    /// repeated strings), and whether it is repeated.
    fn field(self, number: u64) -> Option<(Msg, bool)> {
        use Msg::*;
        Some(match (self, number) {
            (Request, 1) => (ResourceSpans, true),
            (ResourceSpans, 1) => (Resource, false),
            (ResourceSpans, 2) => (ScopeSpans, true),
            (Resource, 1) | (Scope, 3) | (Span, 9) | (Event, 3) | (Link, 4) => (KeyValue, true),
            (Resource, 3) => (EntityRef, true),
            (EntityRef, 3 | 4) => (String, true),
            (ScopeSpans, 1) => (Scope, false),
            (ScopeSpans, 2) => (Span, true),
            (Span, 11) => (Event, true),
            (Span, 13) => (Link, true),
            (Span, 15) => (Status, false),
            (KeyValue, 2) => (AnyValue, false),
            (AnyValue, 5) => (ArrayValue, false),
            (AnyValue, 6) => (KeyValueList, false),
            (ArrayValue, 1) => (AnyValue, true),
            (KeyValueList, 1) => (KeyValue, true),
            _ => return None,
        })
    }
}

/// `gz` inflated as a stream, refused once it passes `max` bytes.
pub(crate) fn inflate(gz: &[u8], max: usize) -> Result<Vec<u8>, Refusal> {
    let mut decoder = flate2::read::GzDecoder::new(gz);
    let mut out: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        let n = match decoder.read(&mut chunk) {
            Ok(0) => return Ok(out),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Refusal::Malformed(format!("not gzip: {e}"))),
        };
        if out.len() + n > max {
            return Err(Refusal::TooLarge(format!(
                "the body is over {max} bytes once decompressed"
            )));
        }
        // Grown by doubling, but never past `max`.
        if out.capacity() - out.len() < n {
            let want = (out.capacity() * 2).max(out.len() + n).min(max);
            out.reserve_exact(want - out.len());
        }
        out.extend_from_slice(&chunk[..n]);
    }
}

/// The request `body` holds, when it is within `limits`.
pub(crate) fn decode(
    body: &[u8],
    json: bool,
    limits: &Limits,
) -> Result<(ExportTraceServiceRequest, Shape), Refusal> {
    if body.len() > limits.body {
        return Err(Refusal::TooLarge(format!(
            "the body is over {} bytes",
            limits.body
        )));
    }
    let not_otlp =
        |e: String| Refusal::Malformed(format!("not an OTLP ExportTraceServiceRequest: {e}"));
    if json {
        let shape = json_shape(body, limits)?;
        let request = serde_json::from_slice(body).map_err(|e| not_otlp(e.to_string()))?;
        Ok((request, shape))
    } else {
        let mut shape = Shape::default();
        walk(body, Msg::Request, 0, &mut shape, limits)?;
        let request =
            ExportTraceServiceRequest::decode(body).map_err(|e| not_otlp(e.to_string()))?;
        Ok((request, shape))
    }
}

fn malformed(why: &str) -> Refusal {
    Refusal::Malformed(format!("not an OTLP ExportTraceServiceRequest: {why}"))
}

fn varint(buf: &mut &[u8]) -> Result<u64, Refusal> {
    let mut value = 0u64;
    for i in 0..10 {
        let Some((&b, rest)) = buf.split_first() else {
            return Err(malformed("a varint is cut short"));
        };
        *buf = rest;
        value |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            return Ok(value);
        }
    }
    Err(malformed("a varint is over ten bytes"))
}

fn skip<'a>(buf: &mut &'a [u8], n: u64) -> Result<&'a [u8], Refusal> {
    let n = usize::try_from(n).map_err(|_| malformed("a length is too large"))?;
    if n > buf.len() {
        return Err(malformed("a field runs past the end of its message"));
    }
    let (field, rest) = buf.split_at(n);
    *buf = rest;
    Ok(field)
}

/// Counts what decoding `buf`, a `msg` at value depth `depth`, builds.
fn walk(
    mut buf: &[u8],
    msg: Msg,
    depth: usize,
    shape: &mut Shape,
    limits: &Limits,
) -> Result<(), Refusal> {
    while !buf.is_empty() {
        let key = varint(&mut buf)?;
        if key >> 3 == 0 {
            return Err(malformed("a field numbered 0"));
        }
        match key & 7 {
            0 => {
                varint(&mut buf)?;
            }
            1 => {
                skip(&mut buf, 8)?;
            }
            5 => {
                skip(&mut buf, 4)?;
            }
            2 => {
                let len = varint(&mut buf)?;
                let field = skip(&mut buf, len)?;
                let Some((inner, repeated)) = msg.field(key >> 3) else {
                    continue;
                };
                if repeated {
                    shape.add(inner, limits)?;
                }
                let depth = match inner {
                    Msg::ArrayValue | Msg::KeyValueList => depth + 1,
                    _ => depth,
                };
                shape.nest(depth, limits)?;
                if inner != Msg::String {
                    walk(field, inner, depth, shape, limits)?;
                }
            }
            _ => return Err(malformed("a group or an unknown wire type")),
        }
    }
    Ok(())
}

/// Counts what decoding the OTLP/JSON `body` builds.
fn json_shape(body: &[u8], limits: &Limits) -> Result<Shape, Refusal> {
    use serde::de::DeserializeSeed;
    let mut shape = Shape::default();
    let mut refused = None;
    let mut de = serde_json::Deserializer::from_slice(body);
    let walked = Node {
        shape: &mut shape,
        refused: &mut refused,
        limits,
        elements: Msg::Ignored,
        object: Msg::Request,
        depth: 0,
        anys: 0,
    }
    .deserialize(&mut de)
    .and_then(|()| de.end());
    match (refused, walked) {
        (Some(r), _) => Err(r),
        (None, Err(e)) => Err(malformed(&e.to_string())),
        (None, Ok(())) => Ok(shape),
    }
}

/// A JSON value being walked: `elements` is what an array here holds (by
/// the member it is the value of), `depth` its value nesting.
struct Node<'a> {
    shape: &'a mut Shape,
    refused: &'a mut Option<Refusal>,
    limits: &'a Limits,
    elements: Msg,
    /// What an object here is.
    object: Msg,
    depth: usize,
    /// Attribute values this one is in: opentelemetry-proto reads an
    /// `AnyValue` through a flattened field, so serde first holds all of
    /// it, every member (known or not) and every element, as a `Content`
    /// tree, and again for each value nested in it (measured: a value 16
    /// deep took some six times what one level did).
    anys: usize,
}

/// What serde holds for one value of a buffered tree (its `Content`, at
/// most 32 bytes on a 64-bit target; counted at twice that, for vectors
/// grown by doubling), taken at 48.
const CONTENT: usize = 48;

impl Node<'_> {
    fn child(&mut self, elements: Msg, object: Msg, depth: usize) -> Node<'_> {
        Node {
            shape: self.shape,
            refused: self.refused,
            limits: self.limits,
            elements,
            object,
            depth,
            anys: self.anys + usize::from(object == Msg::AnyValue),
        }
    }

    fn check<E: serde::de::Error>(&mut self, r: Result<(), Refusal>) -> Result<(), E> {
        r.map_err(|refusal| {
            *self.refused = Some(refusal);
            E::custom("over the receiver's limits")
        })
    }
}

/// What a member of an OTLP/JSON object (an `object`) holds: what the
/// elements of its array are, and what an object as its value is (an
/// array value and a key-value list nest a value one deeper).
fn member(name: &str, object: Msg) -> (Msg, Msg) {
    let elements = match name {
        "resourceSpans" => Msg::ResourceSpans,
        "scopeSpans" => Msg::ScopeSpans,
        "spans" => Msg::Span,
        "attributes" => Msg::KeyValue,
        "events" => Msg::Event,
        "links" => Msg::Link,
        "entityRefs" => Msg::EntityRef,
        "idKeys" | "descriptionKeys" => Msg::String,
        "values" if object == Msg::ArrayValue => Msg::AnyValue,
        "values" if object == Msg::KeyValueList => Msg::KeyValue,
        _ => Msg::Ignored,
    };
    let value = match name {
        "arrayValue" => Msg::ArrayValue,
        "kvlistValue" => Msg::KeyValueList,
        "value" if object == Msg::KeyValue => Msg::AnyValue,
        _ => Msg::Ignored,
    };
    (elements, value)
}

impl<'de> serde::de::DeserializeSeed<'de> for Node<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

/// A member name of an object (the `Msg`), read as what it means for the
/// walk.
struct Name(Msg);

impl<'de> serde::de::DeserializeSeed<'de> for Name {
    type Value = (Msg, Msg);
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(Msg, Msg), D::Error> {
        d.deserialize_str(self)
    }
}

impl serde::de::Visitor<'_> for Name {
    type Value = (Msg, Msg);
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a member name")
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(Msg, Msg), E> {
        Ok(member(v, self.0))
    }
}

impl<'de> serde::de::Visitor<'de> for Node<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        let (elements, depth) = (self.elements, self.depth);
        while seq
            .next_element_seed(self.child(Msg::Ignored, elements, depth))?
            .is_some()
        {
            let mut counted = self.shape.add(elements, self.limits);
            if self.anys > 0 || elements == Msg::AnyValue {
                let held = 2 * CONTENT * self.anys.max(1);
                counted = counted.and_then(|()| self.shape.buffer(held, self.limits));
            }
            self.check(counted)?;
        }
        Ok(())
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        while let Some((elements, value)) = map.next_key_seed(Name(self.object))? {
            let nests = matches!(value, Msg::ArrayValue | Msg::KeyValueList);
            let depth = self.depth + usize::from(nests);
            let mut nested = self.shape.nest(depth, self.limits);
            if self.anys > 0 {
                // A member: its name and its value, each a `Content`.
                let held = 4 * CONTENT * self.anys;
                nested = nested.and_then(|()| self.shape.buffer(held, self.limits));
            }
            self.check(nested)?;
            map.next_value_seed(self.child(elements, value, depth))?;
        }
        Ok(())
    }
}

/// What `span` takes in memory, decoded (its structure and its strings).
pub(crate) fn memory(span: &Span) -> usize {
    fn value(v: &AnyValue) -> usize {
        match &v.value {
            Some(Av::StringValue(s)) => s.len(),
            Some(Av::BytesValue(b)) => b.len(),
            Some(Av::ArrayValue(a)) => a
                .values
                .iter()
                .map(|v| size_of::<AnyValue>() + value(v))
                .sum(),
            Some(Av::KvlistValue(kv)) => attributes(&kv.values),
            _ => 0,
        }
    }
    fn attributes(kvs: &[KeyValue]) -> usize {
        kvs.iter()
            .map(|kv| size_of::<KeyValue>() + kv.key.len() + kv.value.as_ref().map_or(0, value))
            .sum()
    }
    size_of::<Span>()
        + span.trace_id.len()
        + span.span_id.len()
        + span.parent_span_id.len()
        + span.trace_state.len()
        + span.name.len()
        + span.status.as_ref().map_or(0, |s| s.message.len())
        + attributes(&span.attributes)
        + span
            .events
            .iter()
            .map(|e| size_of::<Event>() + e.name.len() + attributes(&e.attributes))
            .sum::<usize>()
        + span
            .links
            .iter()
            .map(|l| {
                size_of::<Link>()
                    + l.trace_id.len()
                    + l.span_id.len()
                    + l.trace_state.len()
                    + attributes(&l.attributes)
            })
            .sum::<usize>()
}

#[cfg(test)]
mod tests;
