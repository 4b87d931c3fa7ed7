//! BenchKit entry point: reads the environment (BK_EXAMINATION, BK_TIME_CONFINEMENT,
//! BK_MEMORY_CONFINEMENT), the model in the working directory (or the directory given as
//! the only argument), answers on stdout and explains on stderr.

use explorer::ctl::Deadlocks;
use explorer::exams::{self, Budget, Examination};
use explorer::pnml::{parse_pnml, ModelError};
use explorer::runs::FiniteRuns;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Exit codes.
const EXIT_OK: u8 = 0;
const EXIT_BAD_INPUT: u8 = 1;
const EXIT_UNSUPPORTED_MODEL: u8 = 2;
const EXIT_INTERNAL: u8 = 3;

fn print_lines(lines: &[String]) {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for l in lines {
        // A closed stdout (e.g. piped into `head`) is not an error worth a panic.
        if writeln!(out, "{l}").is_err() {
            return;
        }
    }
    let _ = out.flush();
}

fn env_number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(n) if n > 0 => n,
            _ => {
                eprintln!(
                    "explorer: ignoring {name}={v:?} (not a positive integer), using {default}"
                );
                default
            }
        },
        Err(_) => default,
    }
}

const USAGE: &str = "usage: explorer [INSTANCE_DIR]
Answers the MCC examination named by BK_EXAMINATION on INSTANCE_DIR/model.pnml (default: the
working directory), within BK_TIME_CONFINEMENT seconds and BK_MEMORY_CONFINEMENT MB.
Optional: EXPLORER_MAX_STATES caps the number of states explored.";

fn main() -> ExitCode {
    let start = Instant::now();
    match std::env::args().nth(1).as_deref() {
        Some("--version") => {
            println!("explorer {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::from(EXIT_OK);
        }
        Some("--help" | "-h") => {
            println!("{USAGE}");
            return ExitCode::from(EXIT_OK);
        }
        _ => {}
    }
    let Ok(exam_name) = std::env::var("BK_EXAMINATION") else {
        eprintln!("explorer: BK_EXAMINATION is not set");
        print_lines(&["CANNOT_COMPUTE".to_string()]);
        return ExitCode::from(EXIT_BAD_INPUT);
    };
    let Some(exam) = Examination::from_name(exam_name.trim()) else {
        eprintln!("explorer: examination {exam_name:?} is not supported");
        print_lines(&["DO_NOT_COMPETE".to_string()]);
        return ExitCode::from(EXIT_OK);
    };
    let dir = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    let model_path = dir.join("model.pnml");
    let text = match std::fs::read_to_string(&model_path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("explorer: cannot read {}: {e}", model_path.display());
            print_lines(&["CANNOT_COMPUTE".to_string()]);
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let net = match parse_pnml(&text) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("explorer: {}: {e}", model_path.display());
            print_lines(&["CANNOT_COMPUTE".to_string()]);
            let code = if matches!(e, ModelError::Colored(_)) {
                EXIT_UNSUPPORTED_MODEL
            } else {
                EXIT_BAD_INPUT
            };
            return ExitCode::from(code);
        }
    };
    drop(text);
    eprintln!(
        "explorer: net {}: {} places, {} transitions, read in {:.3} s",
        net.name,
        net.num_places(),
        net.num_transitions(),
        start.elapsed().as_secs_f64()
    );
    let deadlocks = match std::env::var("EXPLORER_CTL_DEADLOCKS").as_deref() {
        Ok("selfloop") => Deadlocks::SelfLoop,
        _ => Deadlocks::NoSuccessor,
    };
    let finite_runs = match std::env::var("EXPLORER_LTL_DEADLOCKS").as_deref() {
        Ok("drop") => FiniteRuns::Drop,
        _ => FiniteRuns::Stutter,
    };
    let budget = Budget {
        start,
        time: Duration::from_secs(env_number("BK_TIME_CONFINEMENT", 3600)),
        memory: (env_number("BK_MEMORY_CONFINEMENT", 16384) as usize).saturating_mul(1 << 20),
        max_states: std::env::var("EXPLORER_MAX_STATES")
            .ok()
            .and_then(|v| v.trim().parse().ok()),
        deadlocks,
        finite_runs,
    };
    let result = std::panic::catch_unwind(|| exams::run(exam, &net, &dir, &budget));
    match result {
        Ok(Ok(answer)) => {
            print_lines(&answer.lines);
            ExitCode::from(EXIT_OK)
        }
        Ok(Err(e)) => {
            eprintln!("explorer: {e}");
            print_lines(&["CANNOT_COMPUTE".to_string()]);
            ExitCode::from(EXIT_BAD_INPUT)
        }
        Err(_) => {
            eprintln!("explorer: internal error (panic), no answer");
            print_lines(&["CANNOT_COMPUTE".to_string()]);
            ExitCode::from(EXIT_INTERNAL)
        }
    }
}
