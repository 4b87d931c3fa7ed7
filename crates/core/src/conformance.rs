//! The protocol checks of the qualification phase (`mccbuild qualify`): what a run's output and
//! ending say about a tool's use of the MCC protocol, beyond the answers scoring reads.
//!
//! The MCC runs every tool on the first instance of each known model before an edition, to find
//! the tools that do not speak the protocol. Each check here is one thing a tool developer must fix:
//! [`check_run`] reads a run's stdout and stderr again (with the parser the executor used,
//! [`crate::protocol`]) and returns one [`Finding`] per fault.

use serde::{Deserialize, Serialize};

use crate::outcome::{Response, Termination};
use crate::protocol::{
    DiagnosticKind, Expected, LineValue, parse_output, resolve, resolve_detailed,
};

/// One of the qualification's protocol checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Check {
    /// Every answer's id exists in the instance's formula file (or is the examination's name, or
    /// one of the four StateSpace values), in a line of the examination's form.
    UnknownId,
    /// Every value is well-formed for its examination (TRUE/FALSE, or a non-negative integer or
    /// `+inf`).
    IllFormedValue,
    /// Nothing on stdout that the protocol does not allow: no malformed `FORMULA`/`STATE_SPACE`
    /// line, no more output than the output limit.
    Stdout,
    /// No contradiction: two different answers for one id, an answer and CANNOT_COMPUTE for
    /// one id, DO_NOT_COMPETE printed with answers.
    Contradiction,
    /// The tool answers, or says CANNOT_COMPUTE or DO_NOT_COMPETE (E-1.8).
    NoResponse,
    /// Every answer line carries TECHNIQUES with at least one technique.
    Techniques,
    /// No answer only on stderr (the MCC reads stdout only).
    AnswerOnStderr,
    /// The tool exits by itself with status 0.
    ExitStatus,
    /// The run ends within its time and memory limits.
    Limits,
    /// The run could be carried out and recorded (the tool's setup worked, the run started).
    NotRun,
}

impl Check {
    /// The name of the check as `--json` and the text output write it.
    pub fn name(self) -> &'static str {
        match self {
            Check::UnknownId => "unknown-id",
            Check::IllFormedValue => "ill-formed-value",
            Check::Stdout => "stdout",
            Check::Contradiction => "contradiction",
            Check::NoResponse => "no-response",
            Check::Techniques => "techniques",
            Check::AnswerOnStderr => "answer-on-stderr",
            Check::ExitStatus => "exit-status",
            Check::Limits => "limits",
            Check::NotRun => "not-run",
        }
    }
}

/// One fault of one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub check: Check,
    /// What is wrong, with the line of the output where there is one.
    pub detail: String,
}

/// What a run left that the checks read.
#[derive(Clone, Copy, Debug)]
pub struct RunOutput<'a> {
    /// Stdout as stored (the head and tail of a long output).
    pub stdout: &'a str,
    /// Whether `stdout` is the whole of it.
    pub stdout_complete: bool,
    pub stderr: &'a str,
    pub termination: Termination,
    /// The response the executor recorded (read from the whole stdout as it streamed).
    pub response: Response,
}

/// Checks one run's output against the protocol; no finding means the run is a conforming one.
pub fn check_run(run: RunOutput<'_>, expected: Expected<'_>) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut add = |check: Check, detail: String| findings.push(Finding { check, detail });
    let parsed = parse_output(run.stdout);
    let (answers, kinds) = resolve_detailed(&parsed, expected);
    for (message, kind) in answers.diagnostics.iter().zip(&kinds) {
        let check = match kind {
            DiagnosticKind::Malformed => Check::Stdout,
            DiagnosticKind::InvalidValue | DiagnosticKind::WrongKind => Check::IllFormedValue,
            DiagnosticKind::UnknownId | DiagnosticKind::WrongForm => Check::UnknownId,
            DiagnosticKind::Contradiction
            | DiagnosticKind::AnswerAndCannotCompute
            | DiagnosticKind::DoNotCompeteWithAnswers => Check::Contradiction,
        };
        add(check, format!("stdout {message}"));
    }
    let said_not_computed = parsed
        .lines
        .iter()
        .any(|l| l.value == LineValue::NotComputed);
    if run.response == Response::CannotCompute
        && answers.answers.is_empty()
        && !parsed.cannot_compute
        && !parsed.do_not_compete
        && !said_not_computed
        && !run.termination.is_limit()
    {
        let seen = if run.stdout_complete {
            ""
        } else {
            " (in the stored head and tail of its output)"
        };
        add(
            Check::NoResponse,
            format!(
                "no answer, no CANNOT_COMPUTE and no DO_NOT_COMPETE on stdout{seen}: E-1.8 counts it as computing nothing"
            ),
        );
    }
    let bare: Vec<usize> = parsed
        .lines
        .iter()
        .filter(|l| matches!(l.value, LineValue::Value(_)) && l.techniques.is_empty())
        .map(|l| l.line)
        .collect();
    if let Some(first) = bare.first() {
        add(
            Check::Techniques,
            format!(
                "{} answer line{} without TECHNIQUES (the first at stdout line {first}); write `... TECHNIQUES <T1> <T2> ...`",
                bare.len(),
                if bare.len() == 1 { "" } else { "s" }
            ),
        );
    }
    let on_stderr = resolve(&parse_output(run.stderr), expected);
    let only_on_stderr: Vec<&str> = on_stderr
        .answers
        .iter()
        .filter(|a| !answers.answers.iter().any(|b| b.id == a.id))
        .map(|a| &*a.id)
        .collect();
    if !only_on_stderr.is_empty() && run.response != Response::DoNotCompete {
        add(
            Check::AnswerOnStderr,
            format!(
                "{} answer{} only on stderr ({}{}); the MCC reads stdout only",
                only_on_stderr.len(),
                if only_on_stderr.len() == 1 { "" } else { "s" },
                only_on_stderr[..only_on_stderr.len().min(3)].join(", "),
                if only_on_stderr.len() > 3 {
                    ", ..."
                } else {
                    ""
                }
            ),
        );
    }
    match run.termination {
        Termination::Exit { code: 0 } => {}
        Termination::Exit { code } => add(Check::ExitStatus, format!("exited with status {code}")),
        Termination::Signal { signal } => {
            add(Check::ExitStatus, format!("killed by signal {signal}"))
        }
        Termination::GuestPanic => add(
            Check::ExitStatus,
            "the virtual machine's kernel panicked before the tool ended".to_string(),
        ),
        Termination::CpuLimit => add(Check::Limits, "reached the CPU-time limit".to_string()),
        Termination::WallLimit => add(
            Check::Limits,
            "reached the wall-clock limit (sleeping or blocked)".to_string(),
        ),
        Termination::MemoryLimit => add(Check::Limits, "reached the memory limit".to_string()),
        Termination::OutputLimit => add(
            Check::Stdout,
            "printed more than the output limit; the run was stopped".to_string(),
        ),
    }
    findings
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::protocol::AnswerForm;
    use crate::value::ValueKind;

    fn ids() -> Vec<Arc<str>> {
        ["F-00", "F-01"].iter().map(|s| Arc::from(*s)).collect()
    }

    fn expected(ids: &[Arc<str>]) -> Expected<'_> {
        Expected {
            examination: "CTLCardinality",
            instance: "F",
            form: AnswerForm::Formulas,
            kind: ValueKind::Boolean,
            ids,
        }
    }

    fn checks(stdout: &str, stderr: &str, termination: Termination) -> Vec<Check> {
        let ids = ids();
        let expected = expected(&ids);
        let response = resolve(&parse_output(stdout), expected).response;
        check_run(
            RunOutput {
                stdout,
                stdout_complete: true,
                stderr,
                termination,
                response,
            },
            expected,
        )
        .into_iter()
        .map(|f| f.check)
        .collect()
    }

    const OK: Termination = Termination::Exit { code: 0 };

    #[test]
    fn a_conforming_run_has_no_finding() {
        assert!(
            checks(
                "banner\nFORMULA F-00 TRUE TECHNIQUES EXPLICIT\nFORMULA F-01 CANNOT_COMPUTE\n",
                "log\n",
                OK
            )
            .is_empty()
        );
        assert!(checks("DO_NOT_COMPETE\n", "", OK).is_empty());
        assert!(checks("CANNOT_COMPUTE\n", "", OK).is_empty());
    }

    #[test]
    fn each_fault_is_its_check() {
        let t = "TECHNIQUES X";
        assert_eq!(
            checks(
                &format!("FORMULA F-99 TRUE {t}\nFORMULA F-00 TRUE {t}\n"),
                "",
                OK
            ),
            [Check::UnknownId]
        );
        assert_eq!(
            checks(
                &format!("FORMULA F-00 yes {t}\nFORMULA F-01 7 {t}\n"),
                "",
                OK
            ),
            [
                Check::IllFormedValue,
                Check::IllFormedValue,
                Check::NoResponse
            ]
        );
        assert_eq!(
            checks(&format!("FORMULA F-00\nFORMULA F-01 TRUE {t}\n"), "", OK),
            [Check::Stdout]
        );
        assert_eq!(
            checks(
                &format!("FORMULA F-00 TRUE {t}\nFORMULA F-00 FALSE {t}\n"),
                "",
                OK
            ),
            [Check::Contradiction]
        );
        assert_eq!(
            checks(&format!("FORMULA F-00 TRUE {t}\nDO_NOT_COMPETE\n"), "", OK),
            [Check::Contradiction]
        );
        assert_eq!(checks("hello\n", "", OK), [Check::NoResponse]);
        assert_eq!(
            checks("FORMULA F-00 TRUE\nFORMULA F-01 FALSE TECHNIQUES\n", "", OK),
            [Check::Techniques]
        );
        assert_eq!(
            checks("CANNOT_COMPUTE\n", &format!("FORMULA F-00 TRUE {t}\n"), OK),
            [Check::AnswerOnStderr]
        );
        assert_eq!(
            checks(
                &format!("FORMULA F-00 TRUE {t}\n"),
                "",
                Termination::Exit { code: 3 }
            ),
            [Check::ExitStatus]
        );
        assert_eq!(
            checks(
                &format!("FORMULA F-00 TRUE {t}\n"),
                "",
                Termination::Signal { signal: 11 }
            ),
            [Check::ExitStatus]
        );
        // A time-out is a limit, not also a missing response.
        assert_eq!(checks("", "", Termination::CpuLimit), [Check::Limits]);
        assert_eq!(checks("", "", Termination::MemoryLimit), [Check::Limits]);
        assert_eq!(checks("", "", Termination::OutputLimit), [Check::Stdout]);
    }

    #[test]
    fn the_same_answer_on_both_streams_is_not_a_fault() {
        let line = "FORMULA F-00 TRUE TECHNIQUES X\n";
        assert!(checks(line, line, OK).is_empty());
    }
}
