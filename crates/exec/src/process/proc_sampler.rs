//! The fallback's measurement without cgroups: CPU time and memory of a session's processes,
//! sampled from /proc.

use std::collections::HashMap;

/// The fallback's view of a session: CPU and memory from /proc.
pub(super) struct ProcSampler {
    pub(super) session: i32,
    /// Last CPU seconds seen per process (kept after it exits).
    pub(super) seen: HashMap<i32, f64>,
    pub(super) peak_rss: u64,
}

impl ProcSampler {
    pub(super) fn new(session: i32) -> Self {
        ProcSampler {
            session,
            seen: HashMap::new(),
            peak_rss: 0,
        }
    }

    /// (CPU seconds of every process seen in the session, current total RSS in bytes).
    pub(super) fn sample(&mut self) -> (f64, u64) {
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

pub(super) fn in_session(pid: i32, session: i32) -> bool {
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
