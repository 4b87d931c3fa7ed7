//! Running one process tree under limits, and measuring it.
//!
//! The tool's first process joins the run's cgroups and its cores before it executes the tool,
//! so nothing it starts escapes. Isolated, it is born in its cgroups (see `spawn`). Not
//! isolated, it is moved into them by a thread of mccbuild while it sets itself up, and waits
//! for that move before it executes the tool: the first move into a cgroup after a quiet while
//! waits for an RCU grace period of the kernel (10-14 ms here), which then overlaps with the
//! setup instead of preceding it (see `Gate`). The monitor, which reads the tool's output too,
//! wakes when the main process exits (pidfd), when output comes, and every few milliseconds to
//! check the limits; at a limit the whole tree is killed at once. When the main process has
//! exited, what it left running (orphans) is killed too, the tree is waited until empty, and
//! only then are CPU time and peak memory read.
//!
//! Without cgroups (a laptop, no root) the fallback limits and measures through the process
//! session: /proc sampling of its members, rusage of the main process, SIGKILL to the session.
//! It is less exact (orphans that leave the session are not seen); records say which was used.

use std::collections::{HashMap, VecDeque};
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cgroup::RunCgroup;
use crate::isolation::Prepared;
use crate::spawn::StatusSlot;
use mccbuild_core::protocol::{OutputParser, ParsedOutput};
use mccbuild_core::{CapturedOutput, Measurement, Termination};

/// What to run and under which limits.
pub struct ProcessSpec {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    pub cpu_limit_s: f64,
    pub memory_limit_bytes: u64,
    pub wall_limit: Duration,
    /// Total bytes of stdout + stderr after which the run is killed.
    pub output_limit: u64,
    /// Bytes of each stream kept in the record (half from the start, half from the end).
    pub capture_bytes: usize,
    pub cores: Vec<u32>,
    pub pids_limit: u64,
    pub cgroup: Option<RunCgroup>,
    /// Namespaces, the run's view of the files and its own user (None: none of them).
    pub isolation: Option<Prepared>,
    /// Not isolated, started by root: the user (uid, gid) the tool runs as (isolated runs
    /// carry theirs in `isolation`).
    pub user: Option<(u32, u32)>,
    /// Set by another thread to stop the run (Ctrl-C).
    pub cancel: Arc<AtomicBool>,
}

/// What came out.
#[derive(Debug)]
pub struct ProcessResult {
    pub measurement: Measurement,
    pub stdout: CapturedOutput,
    pub stderr: CapturedOutput,
    pub parsed: ParsedOutput,
    /// True when the run was stopped by a cancellation, not by itself or a limit.
    pub cancelled: bool,
}

/// Runs the process tree to its end; `started` is called once the tool executes (or could not
/// be started). Errors are infrastructure failures (the tool could not be started); everything
/// the tool does is a result.
pub fn run_process(mut spec: ProcessSpec, started: &dyn Fn()) -> io::Result<ProcessResult> {
    if let Some(cg) = &spec.cgroup {
        cg.set_pids_limit(spec.pids_limit)?;
        // Isolated, the spawn sets it once the run's process is in its groups (see `spawn`).
        if spec.isolation.is_none() {
            cg.set_memory_limit(spec.memory_limit_bytes)?;
        }
    }
    let start = Instant::now();
    let tree = start_tree(&mut spec);
    started();
    let (pid, stdout, stderr, status) = match tree {
        Ok(started) => started,
        Err(e) => {
            // Nothing of the run is left: whatever started is killed, the groups removed.
            if let Some(cg) = &spec.cgroup {
                cg.kill_all(Duration::from_secs(10));
                // The run's process used more than the run's memory limit before its tool
                // started (a limit of a few hundred KB): the run hit its limit, as when the
                // limit was in place and the kernel killed it.
                if e.kind() == io::ErrorKind::OutOfMemory {
                    return Ok(over_memory_at_start(&spec, cg, start));
                }
                cg.remove();
            }
            return Err(e);
        }
    };
    // The tool's output is read by this thread while it supervises the run (no reader
    // threads: on a short run, making and ending two threads cost more than the run itself).
    let mut output = Output::new(stdout, stderr, spec.capture_bytes, spec.output_limit);
    let mut sampler = ProcSampler::new(pid);
    let mut ended = supervise(&spec, pid, start, &mut sampler, &mut output)?;
    // Isolated, mccbuild waited for the run's init: the tool's own status is the one it left.
    if let Some(status) = status.as_ref().and_then(StatusSlot::tool_status) {
        ended.status = status;
    }
    let wall_time_s = start.elapsed().as_secs_f64();
    let t = mccbuild_core::timing::phase("process: kill, wait, read");
    // Whatever the main process left behind (orphans) is killed; then the tree is empty.
    if spec.cgroup.is_none() {
        sampler.sample();
    }
    kill_tree(&spec.cgroup, pid, &sampler);
    let (cpu_time_s, peak_memory_bytes, oom) = used(&spec, &ended.usage, &mut sampler);
    // The tree is empty: every writer of the pipes is gone, what is left in them is read to
    // their end.
    let ((stdout_capture, parsed), (stderr_capture, _)) = output.finish();
    drop(t);
    Ok(ProcessResult {
        measurement: Measurement {
            termination: ended.termination(oom, spec.cgroup.is_none()),
            cpu_time_s,
            wall_time_s,
            peak_memory_bytes,
        },
        stdout: stdout_capture,
        stderr: stderr_capture,
        parsed,
        cancelled: ended.cancelled,
    })
}

/// The result of a run whose process used more than its memory limit before its tool started
/// (see `run_process`): `memory_limit`, with what its groups measured; the groups are removed.
fn over_memory_at_start(spec: &ProcessSpec, cg: &RunCgroup, start: Instant) -> ProcessResult {
    let result = ProcessResult {
        measurement: Measurement {
            termination: Termination::MemoryLimit,
            cpu_time_s: cg.cpu_time_s().unwrap_or(0.0),
            wall_time_s: start.elapsed().as_secs_f64(),
            peak_memory_bytes: cg.peak_memory().unwrap_or(spec.memory_limit_bytes),
        },
        stdout: CapturedOutput::default(),
        stderr: CapturedOutput::default(),
        parsed: ParsedOutput::default(),
        cancelled: false,
    };
    cg.remove();
    result
}

/// The run's started process tree: the pid mccbuild waits for, the tool's output streams and,
/// isolated, where the run's init leaves the tool's wait status.
type Started = (i32, std::fs::File, std::fs::File, Option<StatusSlot>);

/// Starts the run's process tree: isolated, with one `clone3` (see `spawn`); else through the
/// standard library's `Command`, its process moved into the run's cgroups by a thread (`Gate`).
/// Returns once the tool executed.
fn start_tree(spec: &mut ProcessSpec) -> io::Result<Started> {
    let _t = mccbuild_core::timing::phase("process: spawn (to exec)");
    if let Some(mut isolation) = spec.isolation.take() {
        let namespaces = isolation.take_namespaces();
        let spawned = crate::spawn::spawn(crate::spawn::Launch {
            namespaces,
            program: &spec.program,
            args: &spec.args,
            env: &spec.env,
            cores: &spec.cores,
            isolation: &isolation,
            cgroup: spec.cgroup.as_ref(),
            memory_limit_bytes: spec.memory_limit_bytes,
        })?;
        return Ok((
            spawned.pid,
            spawned.stdout,
            spawned.stderr,
            Some(spawned.status),
        ));
    }
    let gate = match &spec.cgroup {
        Some(cg) => Some(Gate::new(cg.procs_files())?),
        None => None,
    };
    let mut command = command(spec, gate.as_ref().map(Gate::child_fds))?;
    let mover = gate.map(Gate::start);
    let spawned = command.spawn();
    // The moves' outcome: the child executes nothing before they succeeded.
    let moved = mover.map(Mover::finish).unwrap_or(Ok(()));
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => {
            // The child gave up at the gate: the thread's error says why.
            let at_gate = e
                .raw_os_error()
                .is_some_and(|raw| raw & 0xffff == libc::ECANCELED);
            return Err(match moved {
                Err(why) if at_gate => why,
                _ => e,
            });
        }
    };
    let pid = child.id() as i32;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| io::Error::other("no stdout pipe"))?;
    let stderr = child
        .stderr
        .take()
        .ok_or_else(|| io::Error::other("no stderr pipe"))?;
    let file = |fd: std::os::fd::OwnedFd| std::fs::File::from(fd);
    Ok((pid, file(stdout.into()), file(stderr.into()), None))
}

/// The moves of a run's first process into its cgroups, made by a thread of mccbuild while the
/// process builds what does not depend on them (its namespaces, its view of the files): the
/// child sends its pid, the thread writes it into every `cgroup.procs` of the run, then opens
/// the gate (one byte); the child waits at the gate before it forks anything or executes the
/// tool. If a move fails the gate is closed without the byte and the child gives up.
struct Gate {
    procs: Vec<PathBuf>,
    /// mccbuild's ends: the child's pid comes in, the go byte goes out.
    pid_in: std::os::fd::OwnedFd,
    go_out: std::os::fd::OwnedFd,
    /// The child's ends.
    pid_out: std::os::fd::OwnedFd,
    go_in: std::os::fd::OwnedFd,
}

/// The file descriptors of the gate, as the child uses them (raw: between fork and exec).
#[derive(Clone, Copy)]
struct ChildFds {
    /// mccbuild's ends, closed in the child first (so that a thread's end of the gate is never
    /// held by the child itself).
    pid_in: i32,
    go_out: i32,
    pid_out: i32,
    go_in: i32,
}

/// The thread moving the child.
struct Mover {
    thread: std::thread::JoinHandle<io::Result<()>>,
    /// Kept open until `spawn` returned: then dropped, so that the thread sees the end of the
    /// pipe if the child died before sending its pid.
    pid_out: std::os::fd::OwnedFd,
    go_in: std::os::fd::OwnedFd,
}

impl Gate {
    fn new(procs: Vec<PathBuf>) -> io::Result<Gate> {
        let (pid_in, pid_out) = pipe()?;
        let (go_in, go_out) = pipe()?;
        Ok(Gate {
            procs,
            pid_in,
            go_out,
            pid_out,
            go_in,
        })
    }

    fn child_fds(&self) -> ChildFds {
        use std::os::fd::AsRawFd;
        ChildFds {
            pid_in: self.pid_in.as_raw_fd(),
            go_out: self.go_out.as_raw_fd(),
            pid_out: self.pid_out.as_raw_fd(),
            go_in: self.go_in.as_raw_fd(),
        }
    }

    /// Starts the thread; call right before `spawn`.
    fn start(self) -> Mover {
        let Gate {
            procs,
            pid_in,
            go_out,
            pid_out,
            go_in,
        } = self;
        let thread = std::thread::spawn(move || {
            use std::io::Write;
            let mut pid = [0u8; 4];
            std::fs::File::from(pid_in)
                .read_exact(&mut pid)
                .map_err(|e| io::Error::other(format!("the run's process did not start: {e}")))?;
            crate::cgroup::move_into(i32::from_ne_bytes(pid), &procs)?;
            std::fs::File::from(go_out).write_all(&[1])
        });
        Mover {
            thread,
            pid_out,
            go_in,
        }
    }
}

impl Mover {
    /// After `spawn` returned: whether the moves succeeded.
    fn finish(self) -> io::Result<()> {
        drop(self.pid_out);
        drop(self.go_in);
        self.thread
            .join()
            .map_err(|_| io::Error::other("the thread moving the run into its cgroups panicked"))?
    }
}

fn pipe() -> io::Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut fds = [-1i32; 2];
    // SAFETY: pipe2 fills two fds on success; each is then owned once.
    unsafe {
        if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok((
            std::os::fd::OwnedFd::from_raw_fd(fds[0]),
            std::os::fd::OwnedFd::from_raw_fd(fds[1]),
        ))
    }
}

/// In the child: sends its pid through the gate (and closes mccbuild's ends).
///
/// # Safety
/// Between fork and exec: system calls only.
unsafe fn send_pid(fds: ChildFds) -> io::Result<()> {
    libc::close(fds.pid_in);
    libc::close(fds.go_out);
    let pid = libc::getpid().to_ne_bytes();
    let written = libc::write(fds.pid_out, pid.as_ptr().cast(), pid.len());
    libc::close(fds.pid_out);
    if written != pid.len() as isize {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// In the child: waits until mccbuild moved it into its cgroups (`fd`: the gate; -1: no gate).
/// An error if the moves failed (mccbuild's thread closed the gate without the go byte).
///
/// # Safety
/// Between fork and exec: system calls only.
pub(crate) unsafe fn wait_at_gate(fd: i32) -> io::Result<()> {
    if fd < 0 {
        return Ok(());
    }
    let mut byte = 0u8;
    let n = loop {
        let n = libc::read(fd, (&mut byte as *mut u8).cast(), 1);
        if n >= 0 || *libc::__errno_location() != libc::EINTR {
            break n;
        }
    };
    libc::close(fd);
    if n == 1 && byte == 1 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(libc::ECANCELED))
    }
}

/// The tool's command, not isolated (see `spawn` for isolated runs): its own session, in its
/// cgroups, pinned to its cores, without core dumps, as its user (when given) last.
fn command(spec: &mut ProcessSpec, gate: Option<ChildFds>) -> io::Result<Command> {
    let fallback = spec.cgroup.is_none();
    let cpu_rlimit = spec.cpu_limit_s.ceil() as u64 + 1;
    let cores = spec.cores.clone();
    let user = spec.user;
    // SAFETY: getpid has no preconditions.
    let supervisor = unsafe { libc::getpid() };

    let mut command = Command::new(&spec.program);
    command
        .current_dir(&spec.cwd)
        .args(&spec.args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: the closure runs between fork and exec; it only makes async-signal-safe system
    // calls (setsid, open, write, close, sched_setaffinity, setrlimit, setgroups, setresgid,
    // setresuid, prctl) on data prepared before the fork, and allocates nothing.
    unsafe {
        command.pre_exec(move || {
            // Dies with the thread that started it (mccbuild's death included), and so does
            // the run (see `isolation`); unless mccbuild died already.
            die_with_parent(supervisor)?;
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            // mccbuild moves this process into the run's cgroups from now on.
            if let Some(fds) = gate {
                send_pid(fds)?;
            }
            let gate = gate.map_or(-1, |fds| fds.go_in);
            pin_to_cores(&cores)?;
            let no_core = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &no_core);
            if fallback {
                // Per process only: a backstop; the monitor enforces the limit on the tree.
                let cpu = libc::rlimit {
                    rlim_cur: cpu_rlimit,
                    rlim_max: cpu_rlimit + 5,
                };
                libc::setrlimit(libc::RLIMIT_CPU, &cpu);
            }
            wait_at_gate(gate)?;
            // Last: it drops root, which the steps above need.
            if let Some((uid, gid)) = user {
                crate::isolation::become_user(uid, gid)?;
            }
            // Again: a change of credentials (capabilities, user) clears it.
            die_with_parent(supervisor)
        });
    }
    Ok(command)
}

/// How the process ended, as its supervision saw it.
struct Ended {
    status: libc::c_int,
    usage: libc::rusage,
    killed_for: Option<Termination>,
    cancelled: bool,
}

impl Ended {
    /// How the run ended: the limit it was killed at, else the OOM killer, else how its main
    /// process ended (SIGXCPU under the fallback is its CPU limit).
    fn termination(&self, oom: bool, fallback: bool) -> Termination {
        if let Some(reason) = self.killed_for {
            reason
        } else if oom {
            Termination::MemoryLimit
        } else if libc::WIFSIGNALED(self.status) {
            let signal = libc::WTERMSIG(self.status);
            if fallback && signal == libc::SIGXCPU {
                Termination::CpuLimit
            } else {
                Termination::Signal { signal }
            }
        } else {
            Termination::Exit {
                code: libc::WEXITSTATUS(self.status),
            }
        }
    }
}

/// Waits for the main process, reading its output meanwhile, and kills the tree at a limit
/// (CPU time, memory, wall clock, output) or when cancelled.
fn supervise(
    spec: &ProcessSpec,
    pid: i32,
    start: Instant,
    sampler: &mut ProcSampler,
    output: &mut Output,
) -> io::Result<Ended> {
    let fallback = spec.cgroup.is_none();
    let pidfd = pidfd_open(pid);
    let mut ended = Ended {
        status: 0,
        // SAFETY: rusage is plain data.
        usage: unsafe { std::mem::zeroed() },
        killed_for: None,
        cancelled: false,
    };
    // The first check after 1 ms: nothing can have passed a limit before (and most short runs
    // have ended by then).
    let mut interval = Duration::from_millis(1);
    let mut next_check = Instant::now() + interval;
    let result = loop {
        // SAFETY: wait4 on our own child, with valid pointers.
        let r = unsafe { libc::wait4(pid, &mut ended.status, libc::WNOHANG, &mut ended.usage) };
        if r == pid {
            break Ok(());
        }
        if r < 0 {
            let err = io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EINTR) {
                break Err(err);
            }
        }
        if Instant::now() >= next_check {
            if ended.killed_for.is_none() && !ended.cancelled {
                let cpu = match &spec.cgroup {
                    Some(cg) => cg.cpu_time_s().unwrap_or(0.0),
                    None => sampler.sample().0,
                };
                let reason = if cpu >= spec.cpu_limit_s {
                    Some(Termination::CpuLimit)
                } else if spec.cgroup.as_ref().is_some_and(|cg| cg.oom_killed())
                    || (fallback && sampler.peak_rss >= spec.memory_limit_bytes)
                {
                    Some(Termination::MemoryLimit)
                } else if start.elapsed() >= spec.wall_limit {
                    Some(Termination::WallLimit)
                } else if output.total > spec.output_limit {
                    Some(Termination::OutputLimit)
                } else {
                    None
                };
                if spec.cancel.load(Ordering::Relaxed) {
                    ended.cancelled = true;
                    kill_tree(&spec.cgroup, pid, sampler);
                } else if let Some(reason) = reason {
                    ended.killed_for = Some(reason);
                    kill_tree(&spec.cgroup, pid, sampler);
                }
            }
            // Check often at first (short runs end fast), then settle at 20 ms.
            next_check = Instant::now() + interval;
            interval = (interval * 2).min(Duration::from_millis(20));
        }
        let before = output.total;
        output.wait_and_read(pidfd, Some(next_check));
        if before <= spec.output_limit && output.total > spec.output_limit {
            // Past the output limit: checked (and killed) at once.
            next_check = Instant::now();
        }
    };
    if pidfd >= 0 {
        // SAFETY: closing the fd we opened.
        unsafe { libc::close(pidfd) };
    }
    result.map(|()| ended)
}

/// The run's stdout and stderr, read by the thread that supervises the run as output comes (no
/// reader threads: on a short run, making and ending two threads cost more than the run).
struct Output {
    streams: [OutputStream; 2],
    /// Bytes read from both so far.
    total: u64,
    /// Past this total, what is read is dropped (the monitor kills the tree for it).
    limit: u64,
    buf: Vec<u8>,
}

struct OutputStream {
    file: std::fs::File,
    /// Not at its end yet.
    open: bool,
    capture: Capture,
}

impl Output {
    fn new(
        stdout: std::fs::File,
        stderr: std::fs::File,
        capture_bytes: usize,
        limit: u64,
    ) -> Output {
        let stream = |file, is_stdout| OutputStream {
            file,
            open: true,
            capture: Capture::new(is_stdout, capture_bytes),
        };
        Output {
            streams: [stream(stdout, true), stream(stderr, false)],
            total: 0,
            limit,
            // Grown when a read fills it (most runs print little: 64 KB zeroed up front were
            // 16 page faults of every run).
            buf: vec![0u8; 4096],
        }
    }

    /// Waits until the run's main process ends (`pidfd` readable; -1: none, the wait is only
    /// bounded), output arrives, or `until` (None: no bound), and reads once from each stream
    /// that has output.
    fn wait_and_read(&mut self, pidfd: i32, until: Option<Instant>) {
        let fd = |s: &OutputStream| if s.open { s.file.as_raw_fd() } else { -1 };
        let mut fds = [pidfd, fd(&self.streams[0]), fd(&self.streams[1])].map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        });
        // Rounded up: a wake-up before `until` only loops once more.
        let timeout = until.map_or(-1, |until| {
            until
                .saturating_duration_since(Instant::now())
                .as_micros()
                .div_ceil(1000)
                .min(i32::MAX as u128) as i32
        });
        // SAFETY: three valid pollfds (negative fds are ignored).
        if unsafe { libc::poll(fds.as_mut_ptr(), 3, timeout) } <= 0 {
            return;
        }
        for i in 0..2 {
            if fds[i + 1].revents != 0 {
                self.read_once(i);
            }
        }
    }

    /// One read from stream `i` (poll said it would not block). As before this thread read
    /// the streams: what comes past the output limit is counted, not kept.
    fn read_once(&mut self, i: usize) {
        let stream = &mut self.streams[i];
        match (&stream.file).read(&mut self.buf) {
            Ok(0) => stream.open = false,
            Ok(n) => {
                stream.capture.bytes += n as u64;
                self.total += n as u64;
                if self.total <= self.limit {
                    stream.capture.feed(&self.buf[..n]);
                }
                // A full read: more is coming, in larger reads (up to a pipe's 64 KB).
                if n == self.buf.len() && n < 64 * 1024 {
                    self.buf.resize(n * 2, 0);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => stream.open = false,
        }
    }

    /// Reads both streams to their end (every writer is gone: the tree is empty) and gives
    /// what was kept of stdout (with its answers) and of stderr.
    fn finish(
        mut self,
    ) -> (
        (CapturedOutput, ParsedOutput),
        (CapturedOutput, ParsedOutput),
    ) {
        while self.streams.iter().any(|s| s.open) {
            self.wait_and_read(-1, None);
        }
        let [out, err] = self.streams;
        (out.capture.finish(), err.capture.finish())
    }
}

/// The tree's CPU time and peak memory (its cgroups', else sampled from /proc and rusage), and
/// whether the OOM killer hit it; the cgroups are removed.
fn used(spec: &ProcessSpec, usage: &libc::rusage, sampler: &mut ProcSampler) -> (f64, u64, bool) {
    let rusage_cpu = timeval_s(usage.ru_utime) + timeval_s(usage.ru_stime);
    match &spec.cgroup {
        Some(cg) => {
            let oom = cg.oom_killed();
            let cpu = cg.cpu_time_s().unwrap_or(rusage_cpu);
            let peak = cg.peak_memory().unwrap_or(usage.ru_maxrss as u64 * 1024);
            cg.remove();
            (cpu, peak, oom)
        }
        None => {
            let (cpu, _) = sampler.sample();
            (
                cpu.max(rusage_cpu),
                sampler.peak_rss.max(usage.ru_maxrss as u64 * 1024),
                false,
            )
        }
    }
}

/// Asks the kernel to SIGKILL the calling process when the thread that forked it ends, and
/// fails if `parent` is gone already. Between fork and exec: system calls only.
unsafe fn die_with_parent(parent: libc::pid_t) -> io::Result<()> {
    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
        return Err(io::Error::last_os_error());
    }
    if libc::getppid() != parent {
        return Err(io::Error::from_raw_os_error(libc::ESRCH));
    }
    Ok(())
}

/// Pins the calling process (and what it starts) to `cores` (none: left as it is). Safe between
/// fork and exec: one system call on a set built on the stack.
pub(crate) fn pin_to_cores(cores: &[u32]) -> io::Result<()> {
    pin_process(0, cores)
}

/// Pins process `pid` (0: the caller) to `cores` (none: left as it is).
pub(crate) fn pin_process(pid: libc::pid_t, cores: &[u32]) -> io::Result<()> {
    if cores.is_empty() {
        return Ok(());
    }
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET and sched_setaffinity act on it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cores {
            libc::CPU_SET(c as usize, &mut set);
        }
        if libc::sched_setaffinity(pid, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

fn timeval_s(t: libc::timeval) -> f64 {
    t.tv_sec as f64 + t.tv_usec as f64 / 1e6
}

fn kill_tree(cgroup: &Option<RunCgroup>, pid: i32, sampler: &ProcSampler) {
    match cgroup {
        Some(cg) => {
            cg.kill_all(Duration::from_secs(10));
        }
        None => {
            // SAFETY: signals to our own child's process group and the pids we saw in its session.
            unsafe { libc::killpg(pid, libc::SIGKILL) };
            for &member in sampler.seen.keys() {
                if member != pid && in_session(member, pid) {
                    unsafe { libc::kill(member, libc::SIGKILL) };
                }
            }
        }
    }
}

fn pidfd_open(pid: i32) -> i32 {
    // SAFETY: a plain system call; -1 when the kernel lacks it (the loop then just sleeps).
    unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) as i32 }
}

/// Reads a whole stream (a file) as a run's output is kept: its head and tail, stdout fed to
/// the answer parser.
pub(crate) fn capture_all(
    mut stream: impl Read,
    is_stdout: bool,
    capture_bytes: usize,
) -> (CapturedOutput, ParsedOutput) {
    let mut capture = Capture::new(is_stdout, capture_bytes);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                capture.bytes += n as u64;
                capture.feed(&buf[..n]);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    capture.finish()
}

/// What is kept of one output stream: its first and last `capture_bytes / 2` bytes, and, for
/// stdout, the answers parsed as it streams.
struct Capture {
    half: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    parser: Option<OutputParser>,
    /// Bytes of the stream, kept or not (counted by the reader).
    bytes: u64,
}

impl Capture {
    fn new(is_stdout: bool, capture_bytes: usize) -> Capture {
        Capture {
            half: capture_bytes / 2,
            head: Vec::new(),
            tail: VecDeque::new(),
            parser: is_stdout.then(OutputParser::new),
            bytes: 0,
        }
    }

    /// Keeps what it must of `chunk` (the reader counts it in `bytes`).
    fn feed(&mut self, chunk: &[u8]) {
        if let Some(parser) = &mut self.parser {
            parser.feed(chunk);
        }
        let to_head = (self.half.saturating_sub(self.head.len())).min(chunk.len());
        self.head.extend_from_slice(&chunk[..to_head]);
        self.tail.extend(&chunk[to_head..]);
        while self.tail.len() > self.half {
            let excess = self.tail.len() - self.half;
            self.tail.drain(..excess);
        }
    }

    fn finish(self) -> (CapturedOutput, ParsedOutput) {
        let kept = (self.head.len() + self.tail.len()) as u64;
        let truncated = self.bytes > kept;
        let mut text = String::from_utf8_lossy(&self.head).into_owned();
        if truncated {
            text.push_str(&format!(
                "\n[... {} bytes not kept ...]\n",
                self.bytes - kept
            ));
        }
        let tail: Vec<u8> = self.tail.into_iter().collect();
        text.push_str(&String::from_utf8_lossy(&tail));
        (
            CapturedOutput {
                text,
                bytes: self.bytes,
                truncated,
            },
            self.parser.map(OutputParser::finish).unwrap_or_default(),
        )
    }
}

/// The fallback's view of a session: CPU and memory from /proc.
struct ProcSampler {
    session: i32,
    /// Last CPU seconds seen per process (kept after it exits).
    seen: HashMap<i32, f64>,
    peak_rss: u64,
}

impl ProcSampler {
    fn new(session: i32) -> Self {
        ProcSampler {
            session,
            seen: HashMap::new(),
            peak_rss: 0,
        }
    }

    /// (CPU seconds of every process seen in the session, current total RSS in bytes).
    fn sample(&mut self) -> (f64, u64) {
        let tick = clock_ticks();
        let page = page_size();
        let mut rss_total = 0u64;
        if let Ok(dir) = std::fs::read_dir("/proc") {
            for entry in dir.flatten() {
                let Some(pid) = entry
                    .file_name()
                    .to_str()
                    .and_then(|n| n.parse::<i32>().ok())
                else {
                    continue;
                };
                let Some(stat) = read_stat(pid) else { continue };
                if stat.session != self.session {
                    continue;
                }
                self.seen
                    .insert(pid, (stat.utime + stat.stime) as f64 / tick);
                rss_total += stat.rss_pages * page;
            }
        }
        self.peak_rss = self.peak_rss.max(rss_total);
        (self.seen.values().sum(), rss_total)
    }
}

struct Stat {
    session: i32,
    utime: u64,
    stime: u64,
    rss_pages: u64,
}

fn read_stat(pid: i32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    let rest = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // rest[0] is field 3 (state): session is field 6, utime 14, stime 15, rss 24.
    Some(Stat {
        session: fields.get(3)?.parse().ok()?,
        utime: fields.get(11)?.parse().ok()?,
        stime: fields.get(12)?.parse().ok()?,
        rss_pages: fields.get(21)?.parse().ok()?,
    })
}

fn in_session(pid: i32, session: i32) -> bool {
    read_stat(pid).is_some_and(|s| s.session == session)
}

fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    (unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).max(1) as f64
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    (unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).max(1) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process of `script` (sh) under the fallback (no cgroups, no root needed), with these
    /// output caps.
    fn run_sh(script: &str, output_limit: u64, capture_bytes: usize) -> ProcessResult {
        run_process(
            ProcessSpec {
                program: PathBuf::from("/bin/sh"),
                args: vec!["-c".into(), script.into()],
                cwd: std::env::temp_dir(),
                env: vec![("PATH".into(), "/usr/bin:/bin".into())],
                cpu_limit_s: 60.0,
                memory_limit_bytes: 1 << 30,
                wall_limit: Duration::from_secs(60),
                output_limit,
                capture_bytes,
                cores: Vec::new(),
                pids_limit: 4096,
                cgroup: None,
                isolation: None,
                user: None,
                cancel: Arc::new(AtomicBool::new(false)),
            },
            &|| {},
        )
        .unwrap()
    }

    /// Both streams are read by the supervising thread as they fill: a tool writing more than
    /// a pipe holds to stderr, then to stdout, then to both, is never blocked, every byte is
    /// counted, the head and tail of each are kept and stdout's answers are parsed.
    #[test]
    fn both_streams_are_read_as_they_come_and_kept_head_and_tail() {
        let r = run_sh(
            "head -c 300000 /dev/zero | tr '\\0' e >&2; \
             echo 'STATE_SPACE STATES 42 TECHNIQUES X'; \
             head -c 300000 /dev/zero | tr '\\0' o; \
             head -c 200000 /dev/zero | tr '\\0' E >&2; echo; echo last line",
            256 << 20,
            1024,
        );
        assert_eq!(r.measurement.termination, Termination::Exit { code: 0 });
        assert_eq!(r.stderr.bytes, 500_000);
        assert!(r.stderr.truncated);
        assert!(r.stderr.text.starts_with(&"e".repeat(512)));
        assert!(r.stderr.text.ends_with(&"E".repeat(512)));
        assert_eq!(r.stdout.bytes, 35 + 300_000 + 1 + 10);
        assert!(r.stdout.text.starts_with("STATE_SPACE STATES 42"));
        assert!(r.stdout.text.ends_with("last line\n"));
        assert!(!r.parsed.lines.is_empty(), "the answer is parsed");
    }

    /// Past the output limit (both streams together) the tree is killed at once and nothing
    /// more is kept, what came before is.
    #[test]
    fn output_past_the_limit_kills_the_tree() {
        let r = run_sh(
            "echo first; while :; do head -c 65536 /dev/zero; head -c 65536 /dev/zero >&2; done",
            1 << 20,
            1024,
        );
        assert_eq!(r.measurement.termination, Termination::OutputLimit);
        assert!(r.stdout.bytes + r.stderr.bytes > 1 << 20);
        assert!(
            r.stdout.text.starts_with("first\n"),
            "{:?}",
            &r.stdout.text[..20]
        );
        assert!(r.measurement.wall_time_s < 30.0);
    }
}
