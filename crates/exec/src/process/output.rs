//! The run's output: both streams read as they come by the supervising thread, each kept as
//! its head and tail, stdout fed to the answer parser.

use std::collections::VecDeque;
use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::time::Instant;

use mccbuild_core::CapturedOutput;
use mccbuild_core::protocol::{OutputParser, ParsedOutput};

/// The run's stdout and stderr, read by the thread that supervises the run as output comes (no
/// reader threads: on a short run, making and ending two threads cost more than the run).
pub(super) struct Output {
    streams: [OutputStream; 2],
    /// Bytes read from both so far.
    pub(super) total: u64,
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
    pub(super) fn new(
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
    pub(super) fn wait_and_read(&mut self, pidfd: i32, until: Option<Instant>) {
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

    /// One read from stream `i` (poll said it would not block). What comes past the output
    /// limit is counted, not kept.
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
    pub(super) fn finish(
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
    pub(super) fn new(is_stdout: bool, capture_bytes: usize) -> Capture {
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

    pub(super) fn finish(self) -> (CapturedOutput, ParsedOutput) {
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
