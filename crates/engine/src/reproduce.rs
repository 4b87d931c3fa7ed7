//! How to run a run again by hand: the shell command that runs its tool on its instance as the
//! run did (`qualify`'s and `explain`'s reproduction line, `scores --wrong`).

use mccbuild_core::hex;
use mccbuild_plan::manifest::InstanceSource;
use mccbuild_rules::edition::TimeLimit;

use crate::session::Session;

/// A shell command that runs the tool on the instance as the run did: in a scratch copy of the
/// instance, as the run's user, with the run's environment only (BenchKit's variables, BK_TOOL
/// and BK_BIN_PATH as the run had them, the run's PATH, HOME, TMPDIR and LANG), and its time
/// limit (`timeout` for wall-clock time, `prlimit --cpu` for CPU time, with the run's safety
/// net of 2 x + 30 s of wall-clock time). Outside the sandbox: no isolation, and the memory limit
/// is only told to the tool (BK_MEMORY_CONFINEMENT), not enforced.
pub fn reproduce(session: &Session, i: usize) -> String {
    let plan = &session.plan;
    let run = &plan.runs[i];
    let tool = &plan.contest.tools[run.tool];
    let instance = plan.instance_of(run);
    let tool_dir = tool.dir.clone().unwrap_or_default();
    let bin_path = if tool.setup.is_some() {
        session
            .store
            .tools_dir()
            .join(hex(&plan.tools[run.tool].setup_digest()))
            .join("bin")
    } else {
        tool_dir.clone()
    };
    let unpack = match &instance.source {
        InstanceSource::Archive(path) => {
            format!(
                "tar -xzf {} --strip-components=1",
                quote(&path.display().to_string())
            )
        }
        other => format!("cp -r {}/. .", quote(&other.path().display().to_string())),
    };
    // The run's user, where mccbuild changes users (it runs as root): the scratch folder is
    // theirs.
    let (own, as_user) = match mccbuild_exec::run_user::resolve(tool.user) {
        Ok(Some(_)) => (
            format!(" && chown -R {0}: .", tool.user.name()),
            format!("runuser -u {} -- ", tool.user.name()),
        ),
        _ => (String::new(), String::new()),
    };
    let t = run.limits.time_s;
    let limit = match run.limits.time {
        TimeLimit::Wall => format!("timeout -s KILL {t} "),
        TimeLimit::Cpu => format!("timeout -s KILL {} prlimit --cpu={t} ", 2 * t + 30),
        TimeLimit::Both => format!("timeout -s KILL {t} prlimit --cpu={t} "),
    };
    format!(
        "cd \"$(mktemp -d)\" && {unpack} && mkdir -p home tmp result{own} && {as_user}env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=\"$PWD/home\" TMPDIR=\"$PWD/tmp\" LANG=C.UTF-8 BK_INPUT={} BK_EXAMINATION={} BK_TOOL={} BK_TIME_CONFINEMENT={t} BK_MEMORY_CONFINEMENT={} BK_BIN_PATH={}/ BK_LOG_FILE=\"$PWD/BenchKit.log\" BK_RESULT_DIR=\"$PWD/result\" {limit}{}",
        quote(&instance.name),
        quote(plan.exam_name(run)),
        quote(&tool.bk_tool),
        run.limits.memory_mb,
        quote(&bin_path.display().to_string()),
        quote(&tool_dir.join(&tool.entry).display().to_string()),
    )
}

/// A word for sh: as is when it is plain, else in single quotes.
fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,".contains(&b))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}
