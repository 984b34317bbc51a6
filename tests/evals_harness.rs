//! The same example datasets through the run-time harness (`harness = false`),
//! as the agentspec manifest `examples/agent.yaml` lists them: samples are
//! found when the binary runs, all selected samples are evaluated
//! concurrently, a results file is written and the manifest's `ciGate`
//! thresholds are checked on each dataset's mean.
//!
//! ```text
//! cargo test --test evals_harness                  # everything
//! cargo test --test evals_harness -- advanced      # samples tagged `advanced`
//! cargo nextest run --test evals_harness           # one process per sample
//! ```

use std::process::ExitCode;

use eval_runtime::{Harness, HttpAgent};

fn main() -> ExitCode {
    // Without EVAL_AGENT_URL, serve the bundled demo agent on 127.0.0.1:0.
    let agent = if std::env::var_os("EVAL_AGENT_URL").is_some() {
        HttpAgent::from_env()
    } else {
        let config = match eval_examples::demo::DemoConfig::from_env() {
            Ok(c) => c,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        };
        match eval_examples::demo::spawn(config) {
            Ok(server) => HttpAgent::new(&server.url()),
            Err(e) => {
                eprintln!("error: cannot start the demo agent: {e}");
                return ExitCode::from(2);
            }
        }
    };
    // Datasets, metrics, thresholds and the CI gate come from the manifest.
    Harness::from_manifest("examples/agent.yaml")
        .agent(agent)
        .run()
}
