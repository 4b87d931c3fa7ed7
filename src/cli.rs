//! The command line as clap reads it: every command, its options and their help.

use std::path::PathBuf;

use clap::{ArgGroup, Args, FromArgMatches, Parser, Subcommand};

use mccbuild_engine::session::Filter;

#[derive(Parser, Debug)]
#[command(
    name = "mccbuild",
    version,
    about = "Model Checking Contest infrastructure: content-addressed runs, incremental scoring"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// The command line, parsed as [`Cli::parse`] does. `mccbuild sandbox ...` is tried with
    /// its own command's parser first: building the parser of every command costs ~0.2 ms, a
    /// noticeable part of the sandbox's overhead per run, which benchmarks and scripts running
    /// command after command pay each time. What that parser does not take (`--help`, a
    /// mistake) goes through the full parser, so that the messages and exit codes are always
    /// the full parser's.
    pub fn from_command_line() -> Cli {
        Cli::from_args(std::env::args_os().collect())
    }

    /// See [`Cli::from_command_line`] (`args[0]` is the program's name).
    pub fn from_args(args: Vec<std::ffi::OsString>) -> Cli {
        match sandbox_args(&args) {
            Some(sandbox) => Cli {
                command: Command::Sandbox(sandbox),
            },
            None => Cli::parse_from(args),
        }
    }
}

/// `mccbuild sandbox ...` read by its own command's parser; None for another command, or what
/// that parser does not take.
fn sandbox_args(args: &[std::ffi::OsString]) -> Option<SandboxArgs> {
    if args.get(1).is_none_or(|a| a != "sandbox") {
        return None;
    }
    let matches = SandboxArgs::augment_args(clap::Command::new("sandbox"))
        .try_get_matches_from(&args[1..])
        .ok()?;
    SandboxArgs::from_arg_matches(&matches).ok()
}

#[derive(Args, Debug, Clone)]
pub struct ManifestArg {
    /// The contest manifest.
    #[arg(
        long,
        global = true,
        default_value = "contest.toml",
        value_name = "PATH"
    )]
    pub manifest: PathBuf,
}

#[derive(Args, Debug, Clone, Default)]
pub struct FilterArgs {
    /// Only this tool (repeatable).
    #[arg(long = "tool", value_name = "TOOL")]
    pub tools: Vec<String>,
    /// Only this model (repeatable).
    #[arg(long = "model", value_name = "MODEL")]
    pub models: Vec<String>,
    /// Only this examination or category (repeatable).
    #[arg(long = "examination", value_name = "EXAMINATION")]
    pub examinations: Vec<String>,
}

impl FilterArgs {
    pub fn filter(&self) -> Filter {
        Filter {
            tools: self.tools.clone(),
            models: self.models.clone(),
            examinations: self.examinations.clone(),
        }
    }
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Validate the manifest, the rules and the inputs (or, with --rules, rules files alone);
    /// report every problem at once.
    Check {
        #[command(flatten)]
        manifest: ManifestArg,
        /// Rules files to validate instead of the manifest (repeatable).
        #[arg(long = "rules", value_name = "RULES")]
        rules: Vec<PathBuf>,
    },
    /// Show how many runs the contest has, how many are in the store and how many are to run.
    Plan {
        #[command(flatten)]
        manifest: ManifestArg,
        #[command(flatten)]
        filter: FilterArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        forecast: ForecastArgs,
    },
    /// Execute the runs that are not in the store, then print the podiums.
    Run {
        #[command(flatten)]
        manifest: ManifestArg,
        #[command(flatten)]
        filter: FilterArgs,
        /// Runs at a time, at least 1 (default: [executor] jobs).
        #[arg(long, value_parser = at_least_one)]
        jobs: Option<usize>,
        /// Print JSON counts at the end instead of the podiums (also when interrupted).
        #[arg(long)]
        json: bool,
        /// How progress is shown on stderr: auto (a bar on a terminal, plain lines every few
        /// seconds otherwise), plain, or json (one object per event, for dashboards).
        #[arg(long, value_enum, value_name = "FORMAT", default_value = "auto")]
        progress: ProgressFormat,
        /// When another command executes runs into the same store, stop at once (exit 3)
        /// instead of waiting for it to end.
        #[arg(long)]
        no_wait: bool,
        /// Slurm only: follow this contest's jobs still queued or running (submitted by a
        /// `mccbuild run` in another terminal, or by one that was killed) until they end,
        /// showing the runs they record; submit, resubmit and cancel nothing.
        #[arg(long, conflicts_with = "rerun")]
        follow: bool,
        #[command(flatten)]
        rerun: RerunArgs,
        /// After the runs, compare each tool of --tool (or each tool whose runs were executed
        /// now) with its previous version in the store, as `diff --tool` does, instead of
        /// printing the podiums. Implied by --fail-on.
        #[arg(long)]
        diff: bool,
        #[command(flatten)]
        judge: JudgeArgs,
    },
    /// Compare two versions of a tool (two tool entries, or one entry now and an earlier version
    /// of it in the store) value by value against the trusted values and run by run:
    /// regressions first (newly wrong, newly unsolved, slower runs), then newly solved and
    /// newly right; scores per category; CPU-time and memory ratios. Executes nothing.
    Diff {
        #[command(flatten)]
        manifest: ManifestArg,
        /// The old version's tool entry (with --new: two entries).
        #[arg(long, value_name = "TOOL", requires = "new", conflicts_with = "tool")]
        old: Option<String>,
        /// The new version's tool entry.
        #[arg(long, value_name = "TOOL", requires = "old", conflicts_with = "tool")]
        new: Option<String>,
        /// One tool entry: the tool as its folder is now against an earlier version of it
        /// whose runs the store holds (by default the previous one).
        #[arg(long, value_name = "TOOL", required_unless_present = "old")]
        tool: Option<String>,
        /// With --tool: the earlier version, by digest or git revision (or a prefix of one), or
        /// by date (YYYY-MM-DD: the version current at the end of that day).
        #[arg(long, value_name = "VERSION", requires = "tool")]
        against: Option<String>,
        /// With --tool: list the tool's versions the store knows (digest, first and last run,
        /// runs in the store, git revision) instead of comparing.
        #[arg(long, requires = "tool")]
        list: bool,
        #[command(flatten)]
        judge: JudgeArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Also write the comparison as an HTML page.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
    },
    /// The MCC's qualification phase: each tool on every examination it takes part in, on the
    /// first instance of each known model (runs cached like any other), every run checked
    /// against the protocol; per tool: qualified, or each problem with the run to reproduce it.
    Qualify {
        #[command(flatten)]
        manifest: ManifestArg,
        #[command(flatten)]
        filter: FilterArgs,
        /// Runs at a time (default: [executor] jobs).
        #[arg(long)]
        jobs: Option<usize>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Also write the verdicts as an HTML page.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
    },
    /// Explain a value (every answer, Confidence, the case of E-3.1 that decided it) or a tool's
    /// score in a category (points per model, instance and examination, penalties, weights).
    Explain {
        #[command(flatten)]
        manifest: ManifestArg,
        #[command(flatten)]
        what: ExplainWhat,
        /// Print JSON (the same explanation as data).
        #[arg(long)]
        json: bool,
    },
    /// The reliability table: each tool's Confidence, values correct and selected, examinations
    /// entered (the MCC 2015 report's Table 3).
    Confidence {
        #[command(flatten)]
        manifest: ManifestArg,
        /// Print JSON (one object per tool).
        #[arg(long)]
        json: bool,
    },
    /// Read a results file (the layout of the MCC's raw-result-analysis.csv) into the store.
    Import {
        #[command(flatten)]
        manifest: ManifestArg,
        /// A file named in `results` of [contest].
        file: PathBuf,
        /// Print JSON counts.
        #[arg(long)]
        json: bool,
    },
    /// Write the results site (podiums, a page per tool, examination and model, the
    /// reliability table, execution-time charts): static HTML, readable from file://.
    Report {
        #[command(flatten)]
        manifest: ManifestArg,
        /// Where to write it (default: `report` beside the manifest).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Also write the exports (as `mccbuild export --dir`) in `exports/` and link them.
        #[arg(long)]
        exports: bool,
        /// Print JSON counts.
        #[arg(long)]
        json: bool,
    },
    /// Keep the scores current: apply each run record written to the store (by any executor),
    /// each edit of the manifest, the rules or a tool, and print what changed in the podiums.
    Watch {
        #[command(flatten)]
        manifest: ManifestArg,
        /// Also execute the runs a change makes necessary (with `mccbuild run`).
        #[arg(long)]
        run: bool,
        /// Serve the results site, updated live in the browser, on ADDR (`host:port`, or a port
        /// on loopback).
        #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:8017")]
        serve: Option<String>,
        /// Keep the results site written in DIR (as `mccbuild report --out DIR` writes it),
        /// rewriting only the pages an update changed.
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Print one JSON object per update.
        #[arg(long)]
        json: bool,
        /// Stop after N updates (for scripts and tests).
        #[arg(long, value_name = "N")]
        updates: Option<u64>,
    },
    /// Write the results: a CSV in the layout of the MCC's raw-result-analysis.csv, a JSON with
    /// the scores and every run, the trusted values as propertiesverdict XML files (one per model).
    #[command(group(ArgGroup::new("outputs").required(true).multiple(true).args(["csv", "json", "verdicts", "dir"])))]
    Export {
        #[command(flatten)]
        manifest: ManifestArg,
        #[command(flatten)]
        to: ExportTo,
    },
    /// Internal: execute the runs with these keys here, in the local sandbox, and record them
    /// into the store (what each step of a Slurm job runs). Exits 0 when every run is recorded
    /// (whatever the tool did), 1 when some could not be carried out (not recorded).
    #[command(hide = true)]
    ExecRun {
        #[command(flatten)]
        manifest: ManifestArg,
        /// A run key (64 hex digits; repeatable); `KEY:DIGEST` executes it again while the
        /// stored record has that content digest (`run --rerun`).
        #[arg(long = "key", value_name = "HEX")]
        keys: Vec<String>,
        /// A file of run keys, one a line (a line may start with the run's cores: `1 <key>`).
        #[arg(long, value_name = "FILE")]
        keys_file: Option<PathBuf>,
        /// Runs at a time (default 1).
        #[arg(long, default_value_t = 1, value_parser = at_least_one)]
        jobs: usize,
    },
    /// Run one command in the sandbox runs get (cgroups, namespaces, pinned cores) and print
    /// how it ended and what it used, as BenchExec's runexec does: to check the sandbox on a
    /// machine, measure a tool by hand, or compare with runexec.
    Sandbox(SandboxArgs),
    /// Compute Confidence, trusted values, scores and podiums from the store, executing nothing.
    Scores {
        #[command(flatten)]
        manifest: ManifestArg,
        /// Print JSON (with every value, its trusted value and every tool's answer).
        #[arg(long)]
        json: bool,
        /// Instead of the podiums, list the values a tool (TOOL, or every tool) answered other
        /// than their trusted value, each with its run's record and reproduction command.
        #[arg(long, value_name = "TOOL", num_args = 0..=1, default_missing_value = "")]
        wrong: Option<String>,
    },
}

/// `mccbuild plan --forecast`: the contest's expected makespan on a cluster.
#[derive(Args, Debug, Clone, Default)]
pub struct ForecastArgs {
    /// Forecast the selected runs' makespan on a cluster of --nodes nodes (rule E-5.1: one job
    /// per model on one node), from the run times in the store, and the order to submit the
    /// models in.
    #[arg(long, requires = "nodes")]
    pub forecast: bool,
    /// With --forecast: the cluster's nodes.
    #[arg(long, requires = "forecast", value_parser = at_least_one)]
    pub nodes: Option<usize>,
    /// With --forecast: each node's cores (default: the CPUs of the largest job, one job per
    /// node at a time).
    #[arg(long, requires = "forecast", value_parser = at_least_one)]
    pub cores: Option<usize>,
    /// With --forecast: seconds added to each run (the cost of a run's start and record on the
    /// cluster; default 0).
    #[arg(long, requires = "forecast", value_name = "SECONDS")]
    pub run_overhead: Option<f64>,
    /// With --forecast: seconds added to each model's job (its start on a node before its
    /// first run, its end after its last: Slurm's and `mccbuild exec-run`'s own; default 0).
    #[arg(long, requires = "forecast", value_name = "SECONDS")]
    pub job_overhead: Option<f64>,
}

/// `mccbuild run --rerun`: which of the selected runs in the store are done again.
#[derive(Args, Debug, Clone, Default)]
pub struct RerunArgs {
    /// Execute again the selected runs that are in the store (only those: runs not in the
    /// store are left to `mccbuild run`), each new record replacing the old one once written;
    /// with outcome options, only the runs with one of those outcomes.
    #[arg(long)]
    pub rerun: bool,
    /// With --rerun: the runs that failed (no answer; a crash, a non-zero exit, too much
    /// output or a crashed VM).
    #[arg(long, requires = "rerun")]
    pub failed: bool,
    /// With --rerun: the runs that answered CANNOT_COMPUTE or nothing well-formed, exiting 0.
    #[arg(long, requires = "rerun")]
    pub cannot_compute: bool,
    /// With --rerun: the runs a time limit stopped with no answer.
    #[arg(long, requires = "rerun")]
    pub time_out: bool,
    /// With --rerun: the runs the memory limit stopped with no answer.
    #[arg(long, requires = "rerun")]
    pub memory_out: bool,
    /// With --rerun: the runs whose tool said DO_NOT_COMPETE.
    #[arg(long, requires = "rerun")]
    pub did_not_compete: bool,
}

impl RerunArgs {
    /// What `run` redoes: `None` without --rerun; otherwise the outcomes asked for (empty:
    /// every outcome).
    pub fn outcomes(&self) -> Option<Vec<mccbuild_core::Outcome>> {
        use mccbuild_core::Outcome;
        if !self.rerun {
            return None;
        }
        let asked = [
            (self.failed, Outcome::Failed),
            (self.cannot_compute, Outcome::CannotCompute),
            (self.time_out, Outcome::TimeOut),
            (self.memory_out, Outcome::MemoryOut),
            (self.did_not_compete, Outcome::DoNotCompete),
        ];
        Some(
            asked
                .into_iter()
                .filter(|(on, _)| *on)
                .map(|(_, o)| o)
                .collect(),
        )
    }
}

/// What `mccbuild explain` explains: a value, or a tool's score in a category.
#[derive(Args, Debug, Clone, Default)]
pub struct ExplainWhat {
    /// The value's instance (with --examination and --id).
    #[arg(long)]
    pub instance: Option<String>,
    /// The value's examination (with --instance and --id).
    #[arg(long)]
    pub examination: Option<String>,
    /// A formula id; the examination's name for a global property; STATES, TRANSITIONS,
    /// MAX_TOKEN_IN_PLACE or MAX_TOKEN_PER_MARKING for StateSpace.
    #[arg(long)]
    pub id: Option<String>,
    /// The tool (with --category).
    #[arg(long)]
    pub tool: Option<String>,
    /// The category whose score is explained (with --tool): StateSpace, GlobalProperties,
    /// UpperBounds, Reachability, CTL or LTL.
    #[arg(long)]
    pub category: Option<String>,
}

/// Where `mccbuild export` writes.
#[derive(Args, Debug, Clone, Default)]
pub struct ExportTo {
    /// The CSV, one row per run in the store (`-`: standard output).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// The JSON: scores, values and every run (`-`: standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// A folder for the verdict files, `<Model>.xml` (created if needed).
    #[arg(long, value_name = "DIR")]
    pub verdicts: Option<PathBuf>,
    /// A folder for all three: results.csv, results.json and verdicts/ (created if needed).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// `mccbuild sandbox`: one command and its limits.
#[derive(Args, Debug, Clone)]
pub struct SandboxArgs {
    /// CPU-time limit of the whole process tree, in seconds.
    #[arg(long, value_name = "S", default_value_t = 3600.0)]
    pub time: f64,
    /// Memory limit of the whole process tree, in MiB (1 MiB = 1,048,576 bytes, as
    /// BK_MEMORY_CONFINEMENT; runexec's --memlimit counts bytes).
    #[arg(long, value_name = "MIB", default_value_t = 16384)]
    pub memory: u64,
    /// Wall-clock limit in seconds (default: twice the CPU-time limit plus 30 s).
    #[arg(long, value_name = "S")]
    pub wall: Option<f64>,
    /// Cores to pin the command to, e.g. `0` or `0,1` (default: the first core mccbuild may use
    /// that no run holds). Each is reserved machine-wide as a run's are: a core another run holds
    /// is waited for.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub cores: Vec<u32>,
    /// A folder the command must not see (repeatable).
    #[arg(long, value_name = "DIR")]
    pub hide: Vec<PathBuf>,
    /// Print JSON (with the head and tail of the command's output).
    #[arg(long)]
    pub json: bool,
    /// The command and its arguments.
    #[arg(trailing_var_arg = true, required = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// What a comparison counts as a regression, and which regressions fail the command.
#[derive(Args, Clone, Debug)]
pub struct JudgeArgs {
    /// A run of the new version is slower when it took more than FACTOR times the old
    /// version's run (the time the contest limits; runs under 0.1 s are never slower).
    #[arg(long, value_name = "FACTOR", default_value = "2", value_parser = slower_factor)]
    pub slower: f64,
    /// Exit 5 when the comparison finds any of these regressions (a comma-separated list of
    /// wrong, unsolved, slower), after printing it.
    #[arg(long, value_enum, value_name = "LIST", value_delimiter = ',')]
    pub fail_on: Vec<FailOn>,
}

/// A regression `--fail-on` can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// Newly wrong values.
    Wrong,
    /// Newly unsolved values.
    Unsolved,
    /// Runs slower by more than the `--slower` factor.
    Slower,
}

impl From<FailOn> for mccbuild_output::diff::Regression {
    fn from(what: FailOn) -> Self {
        use mccbuild_output::diff::Regression;
        match what {
            FailOn::Wrong => Regression::Wrong,
            FailOn::Unsolved => Regression::Unsolved,
            FailOn::Slower => Regression::Slower,
        }
    }
}

/// Why a `--slower` factor was refused.
#[derive(Debug, thiserror::Error)]
enum FactorError {
    #[error("must be a factor of at least 1 (2: twice as slow)")]
    Small,
    #[error(transparent)]
    NotANumber(#[from] std::num::ParseFloatError),
}

/// A slowdown factor: a finite number of at least 1.
fn slower_factor(text: &str) -> Result<f64, FactorError> {
    match text.parse::<f64>()? {
        f if f.is_finite() && f >= 1.0 => Ok(f),
        _ => Err(FactorError::Small),
    }
}

/// How progress is shown (`run --progress`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ProgressFormat {
    /// A bar on a terminal, plain lines every few seconds otherwise.
    Auto,
    /// Plain lines every few seconds, even on a terminal.
    Plain,
    /// One JSON object per event on stderr.
    Json,
}

impl From<ProgressFormat> for mccbuild_engine::progress::ProgressFormat {
    fn from(format: ProgressFormat) -> Self {
        use mccbuild_engine::progress::ProgressFormat as Shown;
        match format {
            ProgressFormat::Auto => Shown::Auto,
            ProgressFormat::Plain => Shown::Plain,
            ProgressFormat::Json => Shown::Json,
        }
    }
}

/// Why a count of runs at a time was refused.
#[derive(Debug, thiserror::Error)]
enum JobsError {
    #[error("must be at least 1 (as `[executor] jobs`)")]
    Zero,
    #[error(transparent)]
    NotANumber(#[from] std::num::ParseIntError),
}

/// A count of runs at a time, validated as `[executor] jobs` is: at least 1.
fn at_least_one(text: &str) -> Result<usize, JobsError> {
    match text.parse::<usize>()? {
        0 => Err(JobsError::Zero),
        n => Ok(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `mccbuild sandbox`'s own parser (see [`Cli::from_args`]) reads what the full parser
    /// reads: the same values, defaults included.
    #[test]
    fn the_sandbox_commands_own_parser_reads_as_the_full_parser() {
        for line in [
            "mccbuild sandbox -- /bin/true",
            "mccbuild sandbox --json --cores 0 --time 5 --memory 1000 --wall 60 -- /bin/true",
            "mccbuild sandbox --cores 0,1 --hide /a --hide /b sh -c x --json",
            "mccbuild sandbox --time 0.5 -- prog --time 7 -x",
        ] {
            let args: Vec<std::ffi::OsString> = line.split(' ').map(Into::into).collect();
            let fast = sandbox_args(&args).unwrap_or_else(|| panic!("not taken: {line}"));
            let Command::Sandbox(full) = Cli::parse_from(args).command else {
                panic!("{line}")
            };
            assert_eq!(format!("{fast:?}"), format!("{full:?}"), "{line}");
        }
        // Left to the full parser: help, mistakes, other commands.
        for line in [
            "mccbuild sandbox --help",
            "mccbuild sandbox --bogus -- true",
            "mccbuild sandbox",
            "mccbuild plan --json",
        ] {
            let args: Vec<std::ffi::OsString> = line.split(' ').map(Into::into).collect();
            assert!(sandbox_args(&args).is_none(), "{line}");
        }
    }
}
