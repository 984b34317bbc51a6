//! The questions of `evals create`, asked on a terminal: every answer read
//! as a line; a wrong answer asked again with what is expected; the end of
//! input an error that names the question (never a silent default).

use std::cell::RefCell;
use std::io::{BufRead as _, IsTerminal as _};

use crate::Failure;

/// Asks on a terminal; elsewhere every question must have come as a flag.
pub(crate) struct Ask {
    pub(crate) terminal: bool,
    /// The question at which input ended, once it has.
    ended: RefCell<Option<String>>,
}

impl Ask {
    pub(crate) fn new() -> Ask {
        Ask {
            terminal: std::io::stdin().is_terminal() && std::io::stderr().is_terminal(),
            ended: RefCell::new(None),
        }
    }

    /// `prompt` shown, one line read (trimmed); `None` without a terminal
    /// or at the end of input (then [`Ask::ended`] names the question).
    pub(crate) fn line(&self, prompt: &str) -> Option<String> {
        if !self.terminal || self.ended.borrow().is_some() {
            return None;
        }
        err!("{prompt}");
        let mut answer = String::new();
        match std::io::stdin().lock().read_line(&mut answer) {
            Ok(0) | Err(_) => {
                *self.ended.borrow_mut() = Some(question(prompt));
                errln!();
                None
            }
            Ok(_) => Some(answer.trim().to_string()),
        }
    }

    /// The question at which input ended, if it has.
    pub(crate) fn ended(&self) -> Option<String> {
        self.ended.borrow().clone()
    }

    /// The failure of input ended at a question, if it has.
    pub(crate) fn ended_failure(&self) -> Option<Failure> {
        self.ended().map(|q| {
            Failure::config(format!(
                "the input ended at \"{q}\": nothing was answered there"
            ))
        })
    }

    /// A flag's value, else the answer to `prompt`, else why it is needed.
    pub(crate) fn value(
        &self,
        flag: &Option<String>,
        prompt: &str,
        name: &str,
    ) -> Result<String, Failure> {
        if let Some(v) = flag {
            return Ok(v.clone());
        }
        self.line(prompt).ok_or_else(|| {
            self.ended_failure().unwrap_or_else(|| {
                Failure::config(format!(
                    "{name} is needed: give --{name} (no terminal to ask)"
                ))
            })
        })
    }

    /// The answer to `prompt` as `parse` reads it, asked again (with
    /// `parse`'s reason) until it reads; the end of input an error.
    pub(crate) fn choose<T>(
        &self,
        prompt: &str,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<T, Failure> {
        loop {
            let Some(answer) = self.line(prompt) else {
                return Err(self.ended_failure().unwrap_or_else(|| {
                    Failure::config(format!(
                        "\"{}\" needs an answer (no terminal to ask): give it as a flag",
                        question(prompt)
                    ))
                }));
            };
            match parse(&answer) {
                Ok(v) => return Ok(v),
                Err(why) => errln!("   {why}: please answer again."),
            }
        }
    }

    /// A yes/no question: `y`, `yes`, `n` or `no` (any case); anything else
    /// asked again; the end of input an error.
    pub(crate) fn confirm(&self, prompt: &str) -> Result<bool, Failure> {
        self.choose(prompt, yes_no)
    }

    /// A yes/no question, asked again until answered; `false` without a
    /// terminal or at the end of input (then [`Ask::ended`] says so).
    #[allow(dead_code)] // step 3's review asks with it
    pub(crate) fn yes(&self, prompt: &str) -> bool {
        self.confirm(prompt).unwrap_or(false)
    }
}

/// `y`/`yes` or `n`/`no`, any case.
pub(crate) fn yes_no(answer: &str) -> Result<bool, String> {
    match answer.to_ascii_lowercase().as_str() {
        "y" | "yes" => Ok(true),
        "n" | "no" => Ok(false),
        other => Err(format!(
            "`{}`: expected yes or no (y/n)",
            eval_datasets::terminal::escaped(other)
        )),
    }
}

/// The question a prompt asks: its last line with words, trimmed.
fn question(prompt: &str) -> String {
    prompt
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_yes_and_no_are_answers() {
        assert_eq!(yes_no("Y"), Ok(true));
        assert_eq!(yes_no("yes"), Ok(true));
        assert_eq!(yes_no("No"), Ok(false));
        assert!(yes_no("yse").is_err());
        assert!(yes_no("").is_err());
    }

    #[test]
    fn the_question_is_the_prompts_last_line() {
        assert_eq!(question("ELICIT\n\n  Domain: "), "Domain:");
    }
}
