//! Test set generation reads a corpus someone else wrote: a passage (or a
//! question already written, which the judge is told to avoid) reaches the
//! judge only as data. Each attack of the judged metrics' suite
//! (`eval_examples::judge::attacks`, also run by the workspace's
//! tests/judge_injection.rs) is put in a corpus passage and among the
//! questions to avoid; the question the obedient scripted judge writes must
//! equal the control's (obedience off). The negative control puts the
//! attacks outside the data blocks of the requests a clean run sent, and
//! the obedient judge is then steered: the suite can fail.

use std::sync::atomic::{AtomicUsize, Ordering};

use eval_examples::demo::DemoServer;
use eval_examples::judge::{self, JudgeConfig};
use eval_runtime::services::Judge;
use serde_json::Value;

use super::{Corpus, Difficulty, Mix, Options, QueryType, generate};

fn judge_of(server: &DemoServer) -> Judge {
    let base = format!("{}/v1", server.url());
    Judge::new(&base, "judge").unwrap().cache(None)
}

/// The question generated from a corpus whose document holds `attack`, with
/// the attack also among the questions to avoid.
async fn generated(attack: &str, judge: &Judge) -> Result<Value, String> {
    let corpus = Corpus::from_documents(
        "t",
        &[(
            "paris.md".into(),
            format!("Paris is the capital of France and its largest city. {attack}"),
        )],
        100_000,
    )
    .map_err(|e| e.to_string())?;
    let mut options = Options::new(1);
    options.fresh = true;
    options.types = Mix::parse("factual", QueryType::parse).map_err(|e| e.to_string())?;
    options.difficulty = Mix::parse("easy", Difficulty::parse).map_err(|e| e.to_string())?;
    options.against = vec![format!("What about {attack}?")];
    static RUN: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "eval-synth-injection-{}-{}",
        std::process::id(),
        RUN.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let output = dir.join("golden.jsonl");
    let outcome = generate(&corpus, &output, &options, judge, None, &mut |_, _| {}).await;
    let written = std::fs::read_to_string(&output);
    let _ = std::fs::remove_dir_all(&dir);
    outcome.map_err(|e| e.to_string())?;
    let line = written.map_err(|e| e.to_string())?;
    let mut record: Value =
        serde_json::from_str(line.lines().next().unwrap_or("")).map_err(|e| e.to_string())?;
    // When it was made is not what the judge answered.
    record["metadata"]["created_at"] = Value::Null;
    Ok(record)
}

#[tokio::test]
async fn no_attack_in_a_corpus_changes_a_generated_question_and_the_same_attacks_outside_do() {
    let (obedient, log) = judge::spawn_recording(JudgeConfig::default()).unwrap();
    let control = judge::spawn(JudgeConfig {
        obey: false,
        ..JudgeConfig::default()
    })
    .unwrap();
    let (with_obedient, with_control) = (judge_of(&obedient), judge_of(&control));
    let attacks = judge::attacks();
    assert!(attacks.len() >= 50, "{} attacks", attacks.len());
    let (mut changed, mut made) = (Vec::new(), 0);
    for attack in &attacks {
        let got = generated(attack, &with_obedient).await;
        let want = generated(attack, &with_control).await;
        made += usize::from(got.is_ok());
        if got != want {
            let short: String = attack.trim().chars().take(60).collect();
            changed.push(format!("{short:?}: {got:?} != {want:?}"));
        }
    }
    let obeyed = judge::stats(obedient.addr()).unwrap()["obeyed"]
        .as_u64()
        .unwrap();
    // The negative control: the requests of a clean run, each attack put
    // outside their data blocks.
    let from = log.lock().unwrap().len();
    generated("", &with_obedient).await.unwrap();
    let asked = log.lock().unwrap()[from..].to_vec();
    assert!(!asked.is_empty(), "a clean run asked the judge nothing");
    let steered_by = attacks.iter().filter(|a| judge::steered(&asked, a)).count();
    println!(
        "generation injection suite: {} attacks, {changed_n} changed by obedience ({made} generated), the obedient judge obeyed {obeyed} time(s); negative control: {steered_by} of {} steered",
        attacks.len(),
        attacks.len(),
        changed_n = changed.len(),
    );
    assert!(changed.is_empty(), "{changed:#?}");
    assert_eq!(obeyed, 0, "nothing was found outside the data blocks");
    assert_eq!(made, attacks.len(), "every attacked corpus gave a question");
    // Not vacuous: most attacks steer the generation prompts once outside
    // the blocks (47 of 66 when written; the judged metrics' prompts, with
    // more sections to forge, are steered by more).
    assert!(
        steered_by * 2 >= attacks.len(),
        "the negative control steered only {steered_by} of {}",
        attacks.len()
    );
}
