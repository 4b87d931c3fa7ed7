//! A run's page (`runs/<name>.html`): what the record of an executed run holds, one click from
//! every cell that shows the run: the command and its environment as BenchKit gives them, the
//! limits, the measurements, how it ended, the answers parsed, the parser's diagnostics, the
//! kept stdout and stderr, and the commands that reproduce it.
//!
//! A page is made from the record alone (and the plan's names of the tool, instance and model),
//! so it is named after the record's content digest ([`run_page_name`]) and is the same bytes
//! for the same record: `report` writes a page only when its file is missing and removes the
//! pages of records no longer in the plan. At the 2024 replay's scale (144,000 runs, imported:
//! their records hold nothing more than the model pages show) no run page is made; an executed
//! contest of that size makes each page once, when its record is new.

use maud::{DOCTYPE, html};
use mccbuild_core::Digest;
use mccbuild_plan::Plan;
use mccbuild_store::RunRecord;

/// The format of run pages: part of their names, so that pages made by an older mccbuild are
/// made again rather than kept.
const RUN_PAGE_FORMAT: u32 = 1;

/// The folder of the run pages, in the site.
pub const RUNS_DIR: &str = "runs";

/// The file name of the page of the record with content digest `digest`, relative to the site.
pub fn run_page_name(digest: &Digest) -> String {
    format!(
        "{RUNS_DIR}/r{RUN_PAGE_FORMAT}-{}.html",
        &mccbuild_core::digest::hex(digest)[..24]
    )
}

/// A path of the contest, relative to its folder when it lies inside it (never a path of the
/// machine that made the site otherwise: its file name alone).
fn contest_relative(plan: &Plan, path: &std::path::Path) -> String {
    match path.strip_prefix(&plan.contest.root) {
        Ok(p) => p.display().to_string(),
        Err(_) => path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
    }
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:+,".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The page of planned run `i`, from its record.
pub fn run_page(plan: &Plan, i: usize, record: &RunRecord) -> String {
    let run = &plan.runs[i];
    let tool = &plan.contest.tools[run.tool];
    let instance = plan.instance_of(run);
    let model = &plan.models[instance.model].name;
    let exam = plan.exam_name(run);
    let tool_dir = tool
        .dir
        .as_deref()
        .map_or_else(|| "(imported)".to_string(), |d| contest_relative(plan, d));
    let env: Vec<(&str, String)> = vec![
        ("BK_INPUT", record.instance.clone()),
        ("BK_EXAMINATION", record.examination.clone()),
        ("BK_TOOL", tool.bk_tool.clone()),
        ("BK_TIME_CONFINEMENT", record.limits.time_s.to_string()),
        ("BK_MEMORY_CONFINEMENT", record.limits.memory_mb.to_string()),
        ("BK_BIN_PATH", "<the tool's setup products>".to_string()),
        ("BK_LOG_FILE", "<the run's folder>/BenchKit.log".to_string()),
        ("BK_RESULT_DIR", "<the run's folder>/result".to_string()),
    ];
    let by_hand = format!(
        "cd <a copy of the instance folder {}> && env {} {}/{}",
        instance.name,
        env.iter()
            .take(5)
            .map(|(k, v)| format!("{k}={}", shell_quote(v)))
            .collect::<Vec<_>>()
            .join(" "),
        tool_dir,
        tool.entry
    );
    let rerun = format!(
        "mccbuild run --rerun --tool {} --model {} --examination {}",
        shell_quote(&tool.name),
        shell_quote(model),
        shell_quote(exam)
    );
    let m = &record.measurement;
    let title = format!("{} · {} · {}", tool.name, instance.name, exam);
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) }
                link rel="stylesheet" href="../style.css";
                link rel="icon" href="data:,";
            }
            body {
                (super::html::nav("../"))
                main {
                    h1 { "Run: " (title) }
                    table.run {
                        tr { th { "tool" } td { a href=(format!("../{}", super::slug("tool", run.tool, &tool.name))) { (tool.name) } } }
                        tr { th { "instance" } td { a href=(format!("../{}#i{}", super::slug("model", instance.model, model), plan.exam_instances[run.exam_instance].instance)) { (instance.name) } " (model " (model) ")" } }
                        tr { th { "examination" } td { (exam) } }
                        tr { th { "run key" } td.mono { (run.key.to_string()) } }
                        tr { th { "outcome" } td class=(format!("s-{}", record.outcome().label())) { (record.outcome().title()) } }
                        tr { th { "termination" } td { (m.termination.label()) " (" (m.termination.reason()) ")" } }
                        tr { th { "limits" } td { (record.limits.time_s) " s (" (format!("{:?}", record.limits.time).to_lowercase()) " time), " (record.limits.memory_mb) " MB" } }
                        tr { th { "CPU time" } td.n { (format!("{:.3} s", m.cpu_time_s)) } }
                        tr { th { "wall time" } td.n { (format!("{:.3} s", m.wall_time_s)) } }
                        tr { th { "peak memory" } td.n { (format!("{:.1} MB", m.peak_memory_mb())) } }
                        tr { th { "measured by" } td { (record.method) } }
                        tr { th { "executor" } td.mono { (record.executor.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ")) } }
                        tr { th { "host" } td { (record.host) ": " (super::setup::machine_words(record.machine.as_ref())) } }
                        @if let Some(vm) = &record.vm { tr { th { "virtual machine" } td { (vm.accel) ", " (vm.guest) " guest, CPU " (vm.cpu_model) ", " (vm.vcpus) " vCPUs, " (vm.memory_mb) " MB; QEMU " (format!("{:.2}", vm.qemu_cpu_time_s)) " s CPU, " (format!("{:.2}", vm.vm_wall_time_s)) " s wall" @if !vm.note.is_empty() { "; " (vm.note) } } } }
                        @if let Some(s) = &record.slurm { tr { th { "Slurm" } td { "job " (s.job) ", step " (s.step) ", node " (s.node) } } }
                        tr { th { "cores" } td { (record.cores.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")) } }
                        tr { th { "started, finished" } td { (record.started_at) " — " (record.finished_at) } }
                        tr { th { "mccbuild" } td { (record.mccbuild_version) } }
                    }
                    h2 { "Command" }
                    p { "As BenchKit runs it: the tool's " code { (tool.entry) } " in " code { (tool_dir) } ", in a fresh folder holding the instance, with this environment:" }
                    table {
                        @for (k, v) in &env { tr { th.mono { (k) } td.mono { (v) } } }
                    }
                    h2 { "Reproduce" }
                    p { "In the contest's folder, the contest's way (this examination on the model's instances, in the sandbox):" }
                    pre.mono { (rerun) }
                    p { "By hand:" }
                    pre.mono { (by_hand) }
                    h2 { "Answers parsed (" (record.answers.len()) ")" }
                    @if !record.answers.is_empty() {
                        table {
                            tr { th { "value" } th { "answer" } th { "techniques" } }
                            @for a in &record.answers { tr { td.mono { (a.id) } td.mono { (a.value) } td { (a.techniques.join(" ")) } } }
                        }
                    }
                    h2 { "Parser diagnostics (" (record.diagnostics.len()) ")" }
                    @if !record.diagnostics.is_empty() {
                        ul { @for d in &record.diagnostics { li.mono { (d) } } }
                    }
                    @for (name, out) in [("stdout", &record.stdout), ("stderr", &record.stderr)] {
                        h2 { (name) " (" (out.bytes) " bytes" @if out.truncated { ", the first and last parts kept" } ")" }
                        pre.output { (out.text) }
                    }
                }
            }
        }
    }
    .into_string()
}
