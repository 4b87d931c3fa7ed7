//! The host's TSC rate, given to the TCG guest's kernel (`tsc_early_khz`).
//!
//! Under TCG the guest's TSC is the host's counter (QEMU's `rdtsc` reads the host's), so its
//! rate is the host's. The guest's kernel otherwise calibrates it at boot against the emulated
//! PIT and HPET, and on a loaded host that calibration can come out several times too low
//! (956 and 492 MHz instead of 2,596 MHz in 2 of 6 boots here beside CPU hogs); the kernel's
//! later refinement keeps the early value when the two differ by more than 1 %, and with
//! `tsc=reliable` no watchdog corrects it. The guest's clocks (CLOCK_MONOTONIC, /proc/uptime)
//! and its CPU time (`cpu.stat`, scheduled time in TSC cycles) then run as many times too fast.
//! Told the rate, the kernel skips the early calibration; its refinement still checks it.

use std::time::{Duration, Instant};

/// The host's TSC rate in kHz, measured against the monotonic clock over 50 ms (within
/// ~0.1 %: the guest's refinement corrects up to 1 %); None where there is no TSC to read or
/// the measurement was disturbed.
pub(super) fn host_tsc_khz() -> Option<u64> {
    let (t0, c0) = paired_reading()?;
    std::thread::sleep(Duration::from_millis(50));
    let (t1, c1) = paired_reading()?;
    let nanos = t1.duration_since(t0).as_nanos();
    let cycles = u128::from(c1.checked_sub(c0)?);
    let khz = u64::try_from(cycles * 1_000_000 / nanos.max(1)).ok()?;
    // A TSC slower than 100 MHz or faster than 20 GHz is no TSC this guest can use.
    (100_000..20_000_000).contains(&khz).then_some(khz)
}

/// The monotonic clock and the TSC read together: the TSC before and after the clock, within
/// 20,000 cycles of each other (a few µs), else tried again (a preempted reading).
fn paired_reading() -> Option<(Instant, u64)> {
    for _ in 0..20 {
        let before = tsc()?;
        let now = Instant::now();
        let after = tsc()?;
        if after >= before && after - before < 20_000 {
            return Some((now, before + (after - before) / 2));
        }
    }
    None
}

#[cfg(target_arch = "x86_64")]
fn tsc() -> Option<u64> {
    // SAFETY: `rdtsc` reads a counter every x86_64 CPU has; it touches no memory.
    Some(unsafe { core::arch::x86_64::_rdtsc() })
}

#[cfg(not(target_arch = "x86_64"))]
fn tsc() -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two measurements agree within the 1 % the guest's refinement accepts.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_hosts_tsc_rate_is_measured_within_a_percent() {
        let a = host_tsc_khz().expect("a TSC on x86_64");
        let b = host_tsc_khz().expect("a TSC on x86_64");
        assert!(a.abs_diff(b) * 100 < a, "{a} kHz then {b} kHz");
    }
}
