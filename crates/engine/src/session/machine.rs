//! What `run` would fail on with this machine, though the manifest is valid.

use std::path::Path;

use mccbuild_core::diag::{Location, Problem, Problems};
use mccbuild_plan::manifest::{Contest, ExecutorKind};

/// [`super::Session::machine_problems`] of a contest.
pub fn machine_problems_of(contest: &Contest) -> Problems {
    let mut problems = Problems::default();
    if contest.executor.kind == ExecutorKind::Slurm {
        return problems;
    }
    let cores = mccbuild_exec::pool::available_cores().len();
    for tool in &contest.tools {
        if tool.dir.is_some() && tool.cores as usize > cores {
            problems.push(
                    Problem::new(
                        &contest.manifest_path,
                        format!(
                            "tool `{}`: cores = {} but this machine gives mccbuild {cores} (rules E-5.3/E-5.4): each of its runs would fail",
                            tool.name, tool.cores
                        ),
                    )
                    .at(line_of_tool_key(&contest.manifest_path, &tool.name, "cores"))
                    .help("run on a machine with enough cores, or with the Slurm executor (docs/execution.md)"),
                );
        }
    }
    problems
}

/// Where `key` of the `[[tool]]` named `tool` is in the manifest (for diagnostics made after
/// the manifest was read): the first line starting with `key` after the tool's `name` line.
fn line_of_tool_key(manifest: &Path, tool: &str, key: &str) -> Option<Location> {
    let text = std::fs::read_to_string(manifest).ok()?;
    let mut in_tool = false;
    for (n, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if t.starts_with('[') {
            in_tool = false;
        }
        if t.starts_with("name") && t.contains(&format!("\"{tool}\"")) {
            in_tool = true;
        }
        if in_tool && t.starts_with(key) && t[key.len()..].trim_start().starts_with('=') {
            return Some(Location {
                line: n + 1,
                column: line.len() - t.len() + 1,
            });
        }
    }
    None
}
