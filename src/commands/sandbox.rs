//! `mccbuild sandbox -- COMMAND`: one command in the sandbox contest runs get, measured and
//! printed as runexec does (`key=value` lines, or JSON).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use mccbuild_core::Termination;
use mccbuild_core::timing::phase;
use mccbuild_exec::local::{LocalExecutor, LocalSettings, SandboxCommand, wall_limit};
use mccbuild_exec::pool::{available_cores, reserve_waiting};
use mccbuild_exec::process::ProcessResult;

use crate::cli::SandboxArgs;
use crate::error::Error;

pub fn sandbox(args: SandboxArgs) -> Result<(), Error> {
    let mut command = command(&args)?;
    // The cores are reserved machine-wide, as a run's (crates/exec/src/pool.rs), until the
    // command ends.
    let _reserved = reserve_waiting(&mut command.cores, !args.cores.is_empty());
    let t = phase("sandbox: executor");
    let executor = LocalExecutor::new(LocalSettings {
        hidden: args.hide.clone(),
        probe_isolation: false,
        run_at_once: true,
        ..LocalSettings::default()
    });
    drop(t);
    let cancel = Arc::new(AtomicBool::new(false));
    let t = phase("sandbox: run");
    let result = executor
        .run_command(&command, &cancel)
        .map_err(|source| Error::NotStarted {
            source,
            hint: if executor.sandbox() == "cgroup+namespaces" {
                "\n(MCCBUILD_SANDBOX=cgroup runs without namespaces)"
            } else {
                ""
            },
        })?;
    drop(t);
    let text = if args.json {
        json(&result, &executor, &command.cores)
    } else {
        key_values(&result, &executor, &command.cores)
    };
    super::print_out(&text)
}

/// The command with its limits, from the command line (checked).
fn command(args: &SandboxArgs) -> Result<SandboxCommand, Error> {
    let positive = |s: f64| s.is_finite() && s > 0.0;
    if !positive(args.time) || args.wall.is_some_and(|w| !positive(w)) {
        return Err(Error::SandboxTime);
    }
    let available = available_cores();
    if let Some(c) = args.cores.iter().find(|c| !available.contains(c)) {
        return Err(Error::SandboxCore {
            core: *c,
            available,
        });
    }
    let cores = if args.cores.is_empty() {
        available.into_iter().take(1).collect()
    } else {
        args.cores.clone()
    };
    // Without --cores, the core is chosen among the available ones by `reserve_waiting`.
    Ok(SandboxCommand {
        argv: args.command.clone(),
        cpu_limit_s: args.time,
        memory_limit_bytes: args.memory.saturating_mul(1 << 20),
        wall_limit: args
            .wall
            .map(Duration::from_secs_f64)
            .unwrap_or_else(|| wall_limit(args.time.ceil() as u64)),
        cores,
    })
}

fn json(result: &ProcessResult, executor: &LocalExecutor, cores: &[u32]) -> String {
    let m = &result.measurement;
    let out = serde_json::json!({
        "termination": m.termination,
        "cpu_time_s": m.cpu_time_s,
        "wall_time_s": m.wall_time_s,
        "peak_memory_bytes": m.peak_memory_bytes,
        "sandbox": executor.sandbox(),
        "measurement": executor.method(),
        "cores": cores,
        "stdout": result.stdout,
        "stderr": result.stderr,
    });
    format!("{out}\n")
}

/// runexec's `key=value` lines.
fn key_values(result: &ProcessResult, executor: &LocalExecutor, cores: &[u32]) -> String {
    let m = &result.measurement;
    let mut lines = vec![format!("termination={}", m.termination.reason())];
    match m.termination {
        Termination::Exit { code } => lines.push(format!("returnvalue={code}")),
        Termination::Signal { signal } => lines.push(format!("signal={signal}")),
        _ => {}
    }
    let cores: Vec<String> = cores.iter().map(u32::to_string).collect();
    lines.extend([
        format!("cputime={:.6}s", m.cpu_time_s),
        format!("walltime={:.6}s", m.wall_time_s),
        format!("memory={}B", m.peak_memory_bytes),
        format!("cores={}", cores.join(",")),
        format!("sandbox={}", executor.sandbox()),
        format!("measurement={}", executor.method()),
        format!(
            "output={}B{}",
            result.stdout.bytes + result.stderr.bytes,
            if result.stdout.truncated || result.stderr.truncated {
                " (truncated in the capture)"
            } else {
                ""
            }
        ),
    ]);
    lines.join("\n") + "\n"
}
