//! Phase timings on stderr when `MCCBUILD_TIMINGS=1` (for benchmarks and profiling).

use std::sync::OnceLock;
use std::time::Instant;

fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("MCCBUILD_TIMINGS").is_ok_and(|v| v == "1"))
}

/// Prints how long the phase took when dropped.
pub struct Phase {
    name: &'static str,
    start: Instant,
}

pub fn phase(name: &'static str) -> Phase {
    Phase {
        name,
        start: Instant::now(),
    }
}

impl Drop for Phase {
    fn drop(&mut self) {
        if enabled() {
            eprintln!(
                "timing: {:<28} {:>9.1} ms",
                self.name,
                self.start.elapsed().as_secs_f64() * 1e3
            );
        }
    }
}
