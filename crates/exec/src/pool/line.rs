//! Who holds the machine's cores and who waits for them: the note a holder writes into the lock
//! file of each core it reserves (its pid, its contest's folder, since when), and the waiting
//! line, a file of tickets in the cores' lock folder, read and written under a lock of its own,
//! so that processes waiting for cores get them in turn (first come, first served) rather than
//! whoever polls first.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::fs::{FlockOperation, flock};

/// Who holds a core: what its lock file says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoreHolder {
    pub core: u32,
    pub pid: u32,
    /// The folder of the holder's contest (its manifest's folder).
    pub contest: String,
    /// When it reserved the core (seconds since the Unix epoch).
    pub since_unix: u64,
}

impl CoreHolder {
    /// `core 0: pid 4242 (/path/of/contest) since 2026-12-08T02:41:07Z`
    pub fn text(&self) -> String {
        format!(
            "core {}: pid {} ({}) since {}",
            self.core,
            self.pid,
            self.contest,
            since_text(self.since_unix)
        )
    }
}

/// A time in seconds since the epoch, as RFC 3339 (UTC).
pub fn since_text(since_unix: u64) -> String {
    humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(since_unix)).to_string()
}

/// A run waiting for cores that other processes hold: which, and how many tickets are ahead of
/// it in the waiting line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoreWait {
    /// How many cores the run needs.
    pub needed: usize,
    /// The cores it could not reserve, with their holders where their lock files say.
    pub held: Vec<CoreHolder>,
    /// Cores held whose holder is not known (a lock file without a note).
    pub unknown: Vec<u32>,
    /// Tickets of the waiting line ahead of this run's.
    pub ahead: usize,
}

impl CoreWait {
    /// One line: what the run waits for, who holds it, and its place in line.
    pub fn text(&self) -> String {
        let mut parts: Vec<String> = self.held.iter().map(CoreHolder::text).collect();
        parts.extend(self.unknown.iter().map(|c| format!("core {c}: held")));
        let cores = if self.needed == 1 { "core" } else { "cores" };
        let mut text = format!(
            "waiting for {} {cores} held by another contest: {}",
            self.needed,
            parts.join("; ")
        );
        if self.ahead > 0 {
            text.push_str(&format!("; {} ahead in line", self.ahead));
        }
        text
    }

    /// Short, for a progress bar: `waiting: core 0 pid 4242 since 02:41:07`.
    pub fn short(&self) -> String {
        match self.held.first() {
            Some(h) => {
                let since = since_text(h.since_unix);
                let clock = since.get(11..19).unwrap_or(&since);
                format!("waiting: core {} pid {} since {clock}", h.core, h.pid)
            }
            None => "waiting for cores".to_string(),
        }
    }
}

/// Writes the holder's note into the lock file of a core it has just reserved.
pub fn write_note(mut file: &File, contest: &str) {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let note = format!("{}\t{now}\t{contest}\n", std::process::id());
    let _ = file.set_len(0);
    let _ = file.seek(SeekFrom::Start(0));
    let _ = file.write_all(note.as_bytes());
}

/// The note in the lock file of core `core`, if any.
pub fn read_note(dir: &Path, core: u32) -> Option<CoreHolder> {
    let text = std::fs::read_to_string(dir.join(format!("core-{core}.lock"))).ok()?;
    let mut fields = text.trim_end_matches('\n').splitn(3, '\t');
    let pid = fields.next()?.parse().ok()?;
    let since_unix = fields.next()?.parse().ok()?;
    let contest = fields.next()?.to_string();
    Some(CoreHolder {
        core,
        pid,
        contest,
        since_unix,
    })
}

/// A ticket of the waiting line: a process and a number unique within it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticket {
    pub pid: u32,
    pub number: u64,
}

static NEXT: AtomicU64 = AtomicU64::new(1);

/// The waiting line in folder `dir`: the file `waiting` (one ticket a line: pid, number, since,
/// contest), read and written under an exclusive lock of `waiting.lock`.
pub struct Line {
    dir: PathBuf,
    contest: String,
}

/// Whether a run may reserve cores now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Turn {
    /// Nobody waits, or its ticket is first: it may try.
    Yours,
    /// Its ticket waits behind `ahead` others.
    Wait { ahead: usize },
}

impl Line {
    pub fn new(dir: &Path, contest: &str) -> Line {
        Line {
            dir: dir.to_path_buf(),
            contest: contest.replace(['\t', '\n'], " "),
        }
    }

    /// Whether `ticket`'s holder may try to reserve cores. Without a ticket: yes when nobody
    /// waits; otherwise a ticket is taken (the last in line). The tickets of processes that
    /// ended are dropped first. Any I/O error: yes (the line is an order, never a lock).
    pub fn turn(&self, ticket: &mut Option<Ticket>) -> Turn {
        let result = self.with(|tickets| {
            if ticket.is_none() {
                if tickets.is_empty() {
                    return Turn::Yours;
                }
                let t = self.take_ticket();
                tickets.push((t, self.contest.clone()));
                *ticket = Some(t);
            }
            let at = tickets
                .iter()
                .position(|(t, _)| Some(*t) == *ticket)
                .unwrap_or_else(|| {
                    // Dropped (a stale line rewritten): back at the end.
                    if let Some(t) = *ticket {
                        tickets.push((t, self.contest.clone()));
                    }
                    tickets.len().saturating_sub(1)
                });
            if at == 0 {
                Turn::Yours
            } else {
                Turn::Wait { ahead: at }
            }
        });
        result.unwrap_or(Turn::Yours)
    }

    /// Joins the line (the last) if `ticket` is none: the run found its cores held.
    pub fn join(&self, ticket: &mut Option<Ticket>) {
        if ticket.is_some() {
            return;
        }
        let t = self.take_ticket();
        if self
            .with(|tickets| tickets.push((t, self.contest.clone())))
            .is_ok()
        {
            *ticket = Some(t);
        }
    }

    /// Leaves the line (cores reserved, or the wait given up).
    pub fn leave(&self, ticket: &mut Option<Ticket>) {
        if let Some(t) = ticket.take() {
            let _ = self.with(|tickets| tickets.retain(|(x, _)| *x != t));
        }
    }

    fn take_ticket(&self) -> Ticket {
        Ticket {
            pid: std::process::id(),
            number: NEXT.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Runs `f` on the tickets in line (the live ones), under the line's lock, and writes them
    /// back.
    fn with<R>(&self, f: impl FnOnce(&mut Vec<(Ticket, String)>) -> R) -> std::io::Result<R> {
        std::fs::create_dir_all(&self.dir)?;
        let guard = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.dir.join("waiting.lock"))?;
        flock(&guard, FlockOperation::LockExclusive)?;
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(self.dir.join("waiting"))?;
        let mut text = String::new();
        file.read_to_string(&mut text)?;
        let mut tickets: Vec<(Ticket, String)> = text
            .lines()
            .filter_map(|l| {
                let mut f = l.splitn(3, '\t');
                let pid = f.next()?.parse().ok()?;
                let number = f.next()?.parse().ok()?;
                let contest = f.next().unwrap_or("").to_string();
                Some((Ticket { pid, number }, contest))
            })
            .filter(|(t, _)| alive(t.pid))
            .collect();
        let result = f(&mut tickets);
        let mut out = String::new();
        for (t, contest) in &tickets {
            out.push_str(&format!("{}\t{}\t{contest}\n", t.pid, t.number));
        }
        file.set_len(0)?;
        file.seek(SeekFrom::Start(0))?;
        file.write_all(out.as_bytes())?;
        // The lock goes with `guard`.
        drop(guard);
        Ok(result)
    }
}

/// Whether process `pid` exists (a process of another user does).
fn alive(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    !matches!(
        rustix::process::test_kill_process(pid),
        Err(rustix::io::Errno::SRCH)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tickets_are_served_in_the_order_they_were_taken() {
        let dir = tempfile::tempdir().unwrap();
        let line = Line::new(dir.path(), "/contest");
        let (mut a, mut b, mut c) = (None, None, None);
        // Nobody waits: a may try without a ticket.
        assert_eq!(line.turn(&mut a), Turn::Yours);
        assert!(a.is_none());
        // a finds its cores held: it joins; b, then c, come later and wait behind it.
        line.join(&mut a);
        assert_eq!(line.turn(&mut b), Turn::Wait { ahead: 1 });
        assert_eq!(line.turn(&mut c), Turn::Wait { ahead: 2 });
        assert_eq!(line.turn(&mut a), Turn::Yours);
        line.leave(&mut a);
        assert_eq!(line.turn(&mut c), Turn::Wait { ahead: 1 });
        assert_eq!(line.turn(&mut b), Turn::Yours);
        line.leave(&mut b);
        assert_eq!(line.turn(&mut c), Turn::Yours);
        line.leave(&mut c);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("waiting")).unwrap(),
            ""
        );
    }

    #[test]
    fn the_tickets_of_ended_processes_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        // A ticket of a process that no longer exists (pid beyond pid_max).
        std::fs::write(dir.path().join("waiting"), "4999999\t1\t/gone\n").unwrap();
        let line = Line::new(dir.path(), "/contest");
        let mut t = None;
        assert_eq!(line.turn(&mut t), Turn::Yours);
    }

    #[test]
    fn a_holders_note_is_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let file = File::create(dir.path().join("core-3.lock")).unwrap();
        write_note(&file, "/some/contest");
        let h = read_note(dir.path(), 3).unwrap();
        assert_eq!(
            (h.core, h.pid, h.contest.as_str()),
            (3, std::process::id(), "/some/contest")
        );
        assert!(read_note(dir.path(), 4).is_none());
    }
}
