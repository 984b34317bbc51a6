//! OpenTelemetry: the agent's spans in, as each sample's trajectory, and the
//! run's evaluation results out (see the guide's "Traces" chapter).
//!
//! * [`context`]: each request to the agent starts a trace and carries it
//!   in a W3C `traceparent` header;
//! * `receiver`: the OTLP/HTTP receiver on loopback that keeps the spans
//!   under those traces; `steps`: which spans are steps of a trajectory;
//! * `export`: evaluation results as spans with `gen_ai.evaluation.result`
//!   events, sent to `OTEL_EXPORTER_OTLP_ENDPOINT` from a bounded queue.
//!
//! The engine holds one [`Tracing`] per run (in its services).

use std::sync::Arc;
use std::time::Duration;

// Without the receiver and the exporter, nothing asks for a trace.
#[cfg_attr(not(feature = "otel"), allow(dead_code))]
mod context;
#[cfg(feature = "otel")]
mod decode;
#[cfg(feature = "otel")]
mod export;
#[cfg(feature = "otel")]
mod loopback;
#[cfg(feature = "otel")]
mod receiver;
#[cfg(feature = "otel")]
mod steps;
#[cfg(feature = "otel")]
mod tree;

pub(crate) use context::SampleTrace;
#[cfg(all(test, feature = "otel"))]
pub(crate) use context::next_traceparent;
#[cfg(feature = "http")]
pub(crate) use context::{Request, next_request};

use crate::config::TraceSettings;
use crate::model::{TraceError, Trajectory};

/// What a run does with traces: whether its agent requests carry a
/// `traceparent`, and where the agent's spans are received.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tracing {
    propagate: bool,
    /// `None`: spans are not collected.
    receiver: Option<Result<Receiving, TraceError>>,
    #[cfg_attr(not(feature = "otel"), allow(dead_code))]
    wait: Duration,
    /// `None`: results are not exported.
    #[cfg(feature = "otel")]
    exporter: Option<Arc<export::Exporter>>,
    /// Why results asked to be exported are not.
    #[cfg(feature = "otel")]
    export_skipped: Option<String>,
    /// Export asked for in a build that cannot.
    #[cfg(not(feature = "otel"))]
    export_asked: bool,
}

/// A run's own trace, under which its evaluations are exported.
#[cfg(feature = "otel")]
pub(crate) use export::RunTrace;
/// A run's own trace (none without the `otel` feature).
#[cfg(not(feature = "otel"))]
#[derive(Debug, Default)]
pub(crate) struct RunTrace;
#[cfg(not(feature = "otel"))]
impl RunTrace {
    pub(crate) fn new() -> RunTrace {
        RunTrace
    }
}

#[cfg(feature = "otel")]
type Receiving = Arc<receiver::Receiver>;
#[cfg(not(feature = "otel"))]
type Receiving = std::convert::Infallible;

impl Tracing {
    /// As `settings` say; the receiver is started (once per process and
    /// address) when they name one.
    pub(crate) fn new(settings: &TraceSettings) -> Tracing {
        let receiver = settings.receiver.map(start);
        // The run's own evaluations are not sent to its own receiver (an
        // environment meant for the agent, `OTEL_EXPORTER_OTLP_ENDPOINT`
        // pointing at it, seen by the run too).
        #[cfg(feature = "otel")]
        let (export, export_skipped) = match (&settings.export, &receiver) {
            (Some(e), Some(Ok(r))) if loopback::reaches(&e.endpoint, r.addr()) => (
                None,
                Some(format!(
                    "evaluations were not exported: OTEL_EXPORTER_OTLP_ENDPOINT points at this run's own receiver of the agent's spans ({})",
                    r.addr()
                )),
            ),
            (e, _) => (e.as_ref(), None),
        };
        Tracing {
            propagate: settings.propagate(),
            receiver,
            wait: settings.wait,
            #[cfg(feature = "otel")]
            exporter: export.map(export::Exporter::for_settings),
            #[cfg(feature = "otel")]
            export_skipped,
            #[cfg(not(feature = "otel"))]
            export_asked: settings.export.is_some(),
        }
    }

    /// Exports the evaluation of `report`, a sample of `dataset` in `run`,
    /// when results are exported (never waits).
    pub(crate) fn export_sample(
        &self,
        run: &RunTrace,
        dataset: &str,
        report: &crate::model::SampleReport,
    ) {
        #[cfg(feature = "otel")]
        if let Some(e) = &self.exporter {
            e.sample(run, dataset, report);
        }
        #[cfg(not(feature = "otel"))]
        let _ = (run, dataset, report);
    }

    /// At the end of `run` (of `datasets`): its own span exported and what
    /// is queued sent (waiting at most half a second); lines saying what was
    /// exported and dropped, and what the receiver took under no sample's
    /// trace or refused.
    pub(crate) fn end_run(&self, run: &RunTrace, datasets: &[&str]) -> Vec<String> {
        let mut notes = Vec::new();
        #[cfg(feature = "otel")]
        {
            if let Some(Ok(r)) = &self.receiver {
                let counts = r.tally();
                let refused = counts.refused();
                if counts.unclaimed + refused > 0 {
                    notes.push(format!(
                        "the OTLP receiver on {} took {} spans under no running sample's trace (late, or another program's) and refused {refused} requests{}",
                        r.addr(),
                        counts.unclaimed,
                        if refused > 0 {
                            format!(" ({})", counts.reasons())
                        } else {
                            String::new()
                        }
                    ));
                }
            }
            notes.extend(self.export_skipped.clone());
            if let Some(e) = &self.exporter {
                e.run_span(run, datasets);
                let done = run.own(e.flush(export::FLUSH_WAIT));
                notes.push(done.note(&e.shown_endpoint()));
            }
        }
        #[cfg(not(feature = "otel"))]
        {
            let _ = (run, datasets);
            if self.export_asked {
                notes.push("OTEL_EXPORTER_OTLP_ENDPOINT is set, but eval-runtime was built without its `otel` feature: no evaluation was exported (enable it in Cargo.toml: `eval-runtime = { version = \"0.1\", features = [\"otel\"] }`)".into());
            }
        }
        notes
    }

    /// Why spans cannot be collected, when they should be.
    pub(crate) fn setup_error(&self) -> Option<&TraceError> {
        self.receiver.as_ref().and_then(|r| r.as_ref().err())
    }

    /// Where the receiver listens, when it does.
    pub(crate) fn receiver_addr(&self) -> Option<std::net::SocketAddr> {
        match self.receiver.as_ref()? {
            #[cfg(feature = "otel")]
            Ok(r) => Some(r.addr()),
            #[cfg(not(feature = "otel"))]
            Ok(never) => match *never {},
            Err(_) => None,
        }
    }

    /// The traces of one run of the agent on a sample, when requests carry
    /// them.
    pub(crate) fn sample(&self) -> Option<Arc<SampleTrace>> {
        if !self.propagate {
            return None;
        }
        let registry = match &self.receiver {
            #[cfg(feature = "otel")]
            Some(Ok(r)) => Some(r.registry()),
            _ => None,
        };
        Some(SampleTrace::new(registry))
    }

    /// The trajectory of the running sample's spans (its scope's), once its
    /// traces are complete (or the wait is over); `None` when spans are not
    /// collected, the sample sent no request, or they were collected already.
    pub(crate) async fn trajectory_in_scope(&self) -> Option<Trajectory> {
        let sample = SampleTrace::current()?;
        if !sample.take_collection() {
            return None;
        }
        match self.receiver.as_ref()? {
            #[cfg(feature = "otel")]
            Ok(r) => r.collect(&sample, self.wait).await,
            #[cfg(not(feature = "otel"))]
            Ok(never) => match *never {},
            Err(_) => None,
        }
    }
}

#[cfg(feature = "otel")]
fn start(addr: std::net::SocketAddr) -> Result<Receiving, TraceError> {
    receiver::Receiver::on(addr)
}

#[cfg(not(feature = "otel"))]
fn start(_addr: std::net::SocketAddr) -> Result<Receiving, TraceError> {
    Err(TraceError::NotBuilt)
}

/// Without the `otel` feature, a receiver asked for is an error that names
/// the feature to enable.
#[cfg(all(test, not(feature = "otel")))]
mod without_otel {
    use super::*;

    #[test]
    fn a_receiver_asked_for_names_the_feature() {
        let settings = TraceSettings {
            receiver: Some(std::net::SocketAddr::from(([127, 0, 0, 1], 4318))),
            ..TraceSettings::default()
        };
        let tracing = Tracing::new(&settings);
        let e = tracing.setup_error().map(ToString::to_string);
        let e = e.unwrap_or_default();
        assert!(e.contains("EVAL_OTLP_RECEIVER"), "{e}");
        assert!(e.contains(r#"features = ["otel"]"#), "{e}");
    }
}
