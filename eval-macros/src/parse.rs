//! Typed view of the attribute and the function it sits on, with spans.

use proc_macro2::{Span, TokenStream};
use syn::parse::{Parse, ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Ident, ItemFn, Lit, LitStr, Token, parenthesized};

/// `#[eval_dataset("path", metrics(...), gate(...), timeout_secs = N)]` or
/// `#[eval_dataset(manifest = "agent.yaml", dataset = "name")]` on a function.
pub(crate) struct Input {
    pub path: Option<LitStr>,
    pub manifest: Option<LitStr>,
    pub dataset: Option<LitStr>,
    /// Where `metrics(...)` was written, when it was.
    pub metrics_span: Option<Span>,
    pub metrics: Vec<MetricArg>,
    /// `gate(...)`: gates on a statistic of a metric over the dataset, in
    /// the metrics' syntax, the mean unless a statistic wraps the metric
    /// (`p95(latency_ms) <= 3000`).
    pub gates: Vec<GateArg>,
    /// `ci_gate = true`.
    pub ci_gate: Option<syn::LitBool>,
    pub timeout_secs: Option<syn::LitInt>,
    /// `repeat = 5` or `repeat = "auto"` / `"auto:20"`.
    pub repeat: Option<Lit>,
    /// `inconclusive = "estimate" | "fail" | "pass"`.
    pub inconclusive: Option<LitStr>,
    /// `cluster = "field"`: the sample field gates cluster by.
    pub cluster: Option<LitStr>,
    pub allow_custom_prefix: Option<syn::LitBool>,
    /// `allow_outside = true`: dataset and manifest paths may lead outside the project.
    pub allow_outside: Option<syn::LitBool>,
    /// `max_samples = N`: the first N samples (after `sample_tags`).
    pub max_samples: Option<syn::LitInt>,
    /// `sample_tags = ["a", "b"]`: samples carrying every one of these tags.
    pub sample_tags: Option<(Span, Vec<LitStr>)>,
    pub func: ItemFn,
}

/// One `name`, `name(opt = value, ...)`, optionally followed by `>= x` / `<= x`.
pub(crate) struct MetricArg {
    /// The name, or (for a metric of the user's) the path's last segment.
    pub name: Ident,
    pub options: Vec<(Ident, Lit)>,
    pub bound: Option<Bound>,
    /// A metric of the user's, written by its path (`crate::cites_ticket`).
    pub path: Option<syn::Path>,
}

/// One gate: `metric >= x` (the mean) or `stat(metric) <= x`.
pub(crate) struct GateArg {
    /// The statistic as written (`p95`, `mean`), when one wraps the metric.
    pub stat: Option<Ident>,
    /// The metric, with the bound written after the statistic's parentheses.
    pub metric: MetricArg,
}

pub(crate) struct Bound {
    pub at_least: bool,
    pub op_span: Span,
    pub value: f64,
    pub value_span: Span,
}

enum Arg {
    Path(LitStr),
    Metrics(Span, Vec<MetricArg>),
    Gates(Span, Vec<GateArg>),
    CiGate(syn::LitBool),
    Timeout(syn::LitInt),
    Repeat(Lit),
    Inconclusive(LitStr),
    Cluster(LitStr),
    Manifest(LitStr),
    Dataset(LitStr),
    AllowCustomPrefix(syn::LitBool),
    AllowOutside(syn::LitBool),
    MaxSamples(syn::LitInt),
    SampleTags(Span, Vec<LitStr>),
}

impl Parse for Arg {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.peek(LitStr) {
            return Ok(Arg::Path(input.parse()?));
        }
        let key: Ident = input.parse()?;
        match key.to_string().as_str() {
            "metrics" => {
                let content;
                parenthesized!(content in input);
                let list = Punctuated::<MetricArg, Token![,]>::parse_terminated(&content)?;
                Ok(Arg::Metrics(key.span(), list.into_iter().collect()))
            }
            "gate" | "gates" => {
                let content;
                parenthesized!(content in input);
                let list = Punctuated::<GateArg, Token![,]>::parse_terminated(&content)?;
                Ok(Arg::Gates(key.span(), list.into_iter().collect()))
            }
            "ci_gate" => {
                input.parse::<Token![=]>()?;
                Ok(Arg::CiGate(input.parse()?))
            }
            "timeout_secs" => {
                input.parse::<Token![=]>()?;
                Ok(Arg::Timeout(input.parse()?))
            }
            "repeat" => {
                input.parse::<Token![=]>()?;
                Ok(Arg::Repeat(input.parse()?))
            }
            "inconclusive" => {
                input.parse::<Token![=]>()?;
                Ok(Arg::Inconclusive(input.parse()?))
            }
            "cluster" => {
                input.parse::<Token![=]>()?;
                Ok(Arg::Cluster(input.parse()?))
            }
            "manifest" => {
                input.parse::<Token![=]>()?;
                Ok(Arg::Manifest(input.parse()?))
            }
            "dataset" => {
                input.parse::<Token![=]>()?;
                Ok(Arg::Dataset(input.parse()?))
            }
            "allow_custom_prefix" => {
                input.parse::<Token![=]>()?;
                Ok(Arg::AllowCustomPrefix(input.parse()?))
            }
            "allow_outside" => {
                input.parse::<Token![=]>()?;
                Ok(Arg::AllowOutside(input.parse()?))
            }
            "max_samples" => {
                input.parse::<Token![=]>()?;
                Ok(Arg::MaxSamples(input.parse()?))
            }
            "sample_tags" => {
                input.parse::<Token![=]>()?;
                let content;
                syn::bracketed!(content in input);
                let list = Punctuated::<LitStr, Token![,]>::parse_terminated(&content)?;
                Ok(Arg::SampleTags(key.span(), list.into_iter().collect()))
            }
            other => Err(syn::Error::new(
                key.span(),
                format!(
                    "unknown argument `{other}`; expected a dataset path string, `metrics(...)`, `gate(...)`, `ci_gate = true`, `timeout_secs = N`, `repeat = N` (or `\"auto\"`), `inconclusive = \"fail\"`, `cluster = \"field\"`, `manifest = \"agent.yaml\"`, `dataset = \"name\"`, `max_samples = N`, `sample_tags = [\"tag\"]`, `allow_custom_prefix = true` or `allow_outside = true`"
                ),
            )),
        }
    }
}

impl Parse for MetricArg {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        // a path with `::` names a metric of the user's.
        let written = input.call(syn::Path::parse_mod_style)?;
        let (name, path) = match written.get_ident() {
            Some(ident) => (ident.clone(), None),
            None => {
                let last = written
                    .segments
                    .last()
                    .map(|s| s.ident.clone())
                    .ok_or_else(|| input.error("expected a metric"))?;
                (last, Some(written))
            }
        };
        let mut options = Vec::new();
        if input.peek(syn::token::Paren) {
            let content;
            parenthesized!(content in input);
            let list = Punctuated::<OptionArg, Token![,]>::parse_terminated(&content)?;
            options = list.into_iter().map(|o| (o.key, o.value)).collect();
        }
        let bound = parse_bound(input)?;
        Ok(MetricArg {
            name,
            options,
            bound,
            path,
        })
    }
}

impl Parse for GateArg {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        // `p95(latency_ms ...)`: parentheses holding a metric, not
        // `key = value` options, make the name a statistic.
        let fork = input.fork();
        // a gate may start with a path (`crate::x`).
        let is_stat = fork.parse::<Ident>().is_ok() && fork.peek(syn::token::Paren) && {
            let content;
            parenthesized!(content in fork);
            let path_start = content.peek(Token![crate])
                || content.peek(Token![self])
                || content.peek(Token![super])
                || content.peek(Token![::]);
            (content.peek(Ident) || path_start) && !content.peek2(Token![=])
        };
        if !is_stat {
            return Ok(GateArg {
                stat: None,
                metric: input.parse()?,
            });
        }
        let stat: Ident = input.parse()?;
        let content;
        parenthesized!(content in input);
        let mut metric: MetricArg = content.parse()?;
        if let Some(b) = &metric.bound {
            return Err(syn::Error::new(
                b.op_span,
                format!(
                    "the threshold goes after the parentheses: `{stat}({}) <= x`",
                    metric.name
                ),
            ));
        }
        if !content.is_empty() {
            return Err(content.error("expected one metric inside the statistic's parentheses"));
        }
        metric.bound = parse_bound(input)?;
        Ok(GateArg {
            stat: Some(stat),
            metric,
        })
    }
}

/// An optional `>= x` / `<= x`.
fn parse_bound(input: ParseStream) -> syn::Result<Option<Bound>> {
    {
        let bound = if input.peek(Token![>=]) || input.peek(Token![<=]) {
            let (at_least, op_span) = if input.peek(Token![>=]) {
                (true, input.parse::<Token![>=]>()?.spans[0])
            } else {
                (false, input.parse::<Token![<=]>()?.spans[0])
            };
            let lit: Lit = input.parse()?;
            let value = match &lit {
                Lit::Float(f) => f.base10_parse::<f64>()?,
                Lit::Int(i) => i.base10_parse::<f64>()?,
                other => {
                    return Err(syn::Error::new(
                        other.span(),
                        "expected a number threshold, e.g. `>= 0.8`",
                    ));
                }
            };
            Some(Bound {
                at_least,
                op_span,
                value,
                value_span: lit.span(),
            })
        } else if input.peek(Token![>]) || input.peek(Token![<]) || input.peek(Token![==]) {
            return Err(input.error("use `>=` (a minimum) or `<=` (a maximum) before a threshold"));
        } else {
            None
        };
        Ok(bound)
    }
}

struct OptionArg {
    key: Ident,
    value: Lit,
}

impl Parse for OptionArg {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let key = input.parse()?;
        input.parse::<Token![=]>()?;
        Ok(OptionArg {
            key,
            value: input.parse()?,
        })
    }
}

pub(crate) fn parse(args: TokenStream, item: TokenStream) -> syn::Result<Input> {
    let func: ItemFn = syn::parse2(item)?;
    let args = Punctuated::<Arg, Token![,]>::parse_terminated.parse2(args)?;
    let mut path = None;
    let mut metrics = None;
    let mut timeout_secs = None;
    let mut repeat = None;
    let mut inconclusive = None;
    let mut cluster = None;
    let mut manifest: Option<LitStr> = None;
    let mut dataset: Option<LitStr> = None;
    let mut metrics_span = None;
    let mut allow_custom_prefix = None;
    let mut allow_outside = None;
    let mut gates: Option<Vec<GateArg>> = None;
    let mut ci_gate = None;
    let mut max_samples = None;
    let mut sample_tags = None;
    for arg in args {
        match arg {
            Arg::Path(p) if path.is_some() => {
                return Err(syn::Error::new(
                    p.span(),
                    "only one dataset path per attribute; add another function for another dataset",
                ));
            }
            Arg::Path(p) => path = Some(p),
            Arg::Metrics(span, _) if metrics.is_some() => {
                return Err(syn::Error::new(span, "`metrics(...)` given twice"));
            }
            Arg::Metrics(span, m) => {
                metrics_span = Some(span);
                metrics = Some(m)
            }
            Arg::Manifest(m) if manifest.is_some() => {
                return Err(syn::Error::new(m.span(), "`manifest` given twice"));
            }
            Arg::Manifest(m) => manifest = Some(m),
            Arg::Dataset(d) if dataset.is_some() => {
                return Err(syn::Error::new(d.span(), "`dataset` given twice"));
            }
            Arg::Dataset(d) => dataset = Some(d),
            Arg::Gates(span, _) if gates.is_some() => {
                return Err(syn::Error::new(span, "`gate(...)` given twice"));
            }
            Arg::Gates(_, g) => gates = Some(g),
            Arg::CiGate(b) => ci_gate = Some(b),
            Arg::AllowCustomPrefix(b) => allow_custom_prefix = Some(b),
            Arg::AllowOutside(b) => allow_outside = Some(b),
            Arg::Timeout(t) => timeout_secs = Some(t),
            Arg::Repeat(r) => repeat = Some(r),
            Arg::Inconclusive(i) => inconclusive = Some(i),
            Arg::Cluster(c) => cluster = Some(c),
            Arg::MaxSamples(n) => max_samples = Some(n),
            Arg::SampleTags(span, tags) => sample_tags = Some((span, tags)),
        }
    }
    if path.is_none() && manifest.is_none() {
        return Err(syn::Error::new(
            Span::call_site(),
            "expected a dataset path: #[eval_dataset(\"evals/rag.jsonl\", metrics(...))], or #[eval_dataset(manifest = \"agent.yaml\", dataset = \"name\")]",
        ));
    }
    Ok(Input {
        path,
        max_samples,
        sample_tags,
        manifest,
        dataset,
        metrics_span,
        metrics: metrics.unwrap_or_default(),
        gates: gates.unwrap_or_default(),
        ci_gate,
        timeout_secs,
        repeat,
        inconclusive,
        cluster,
        allow_custom_prefix,
        allow_outside,
        func,
    })
}
