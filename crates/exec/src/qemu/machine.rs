//! The guest's machine: the accelerator (KVM where a probe boot shows it works, else TCG), the
//! kernel guest's firmware and command line, and what of them goes into every run's key.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mccbuild_plan::manifest::{Accel, GuestKind, QemuConfig};

use super::QemuError;
use super::results::tail_of;
use super::vm::{Vm, pin_and_tie};

/// The kernel guest's command line. Besides the console and `panic=-1` (a panic ends QEMU
/// through `-no-reboot`), it skips what costs boot time under emulation and changes nothing a
/// tool sees (docs/execution.md, "The kernel guest"): the crypto self-tests at boot
/// (`cryptomgr.notests`), the TSC watchdog (the guest's TSC is the host's: `tsc=reliable`) and
/// the IO-APIC timer check, probing of serial ports and a PS/2 mouse that are not there; under
/// TCG also the CPU vulnerability mitigations (`mitigations=off`): TCG does not speculate, so
/// they protect nothing, and PTI's page table switch on every system call flushes TCG's whole
/// TLB. Under TCG the TSC's rate is given (`tsc_early_khz`, the host's: `tsc_khz`, or `host` in
/// the run key; left out when empty), as the kernel's own calibration goes wrong on a loaded
/// host (crates/exec/src/qemu/tsc.rs). `extra` (`[executor.qemu] kernel_args`) comes last, so
/// it can override. It is part of the run key (`machine_ingredients`).
pub(super) fn kernel_cmdline(accel: &str, tsc_khz: &str, extra: &str) -> String {
    let mut cmdline = String::from(
        "console=ttyS0 panic=-1 quiet loglevel=3 cryptomgr.notests tsc=reliable no_timer_check \
         8250.nr_uarts=1 i8042.noaux",
    );
    if accel == "tcg" {
        cmdline.push_str(" mitigations=off");
        if !tsc_khz.is_empty() {
            cmdline.push_str(" tsc_early_khz=");
            cmdline.push_str(tsc_khz);
        }
    }
    if !extra.is_empty() {
        cmdline.push(' ');
        cmdline.push_str(extra);
    }
    cmdline
}

/// The kernel guest's machine as run key ingredients: the machine type with its firmware and
/// the kernel's command line (what the guest's kernel is told can change what a tool sees).
pub(super) fn machine_ingredients(
    guest: GuestKind,
    accel: &str,
    qboot: bool,
    kernel_args: &str,
) -> Vec<(String, String)> {
    match guest {
        GuestKind::Kernel => vec![
            (
                "machine".into(),
                if qboot { "pc+qboot" } else { "pc" }.into(),
            ),
            (
                "kernel_cmdline".into(),
                kernel_cmdline(accel, "host", kernel_args),
            ),
        ],
        // The image guest boots its own bootloader through SeaBIOS on QEMU's default machine:
        // nothing to add (its keys stay those of image runs made without these ingredients).
        GuestKind::Image => Vec::new(),
    }
}

/// QEMU's qboot firmware (a minimal BIOS that boots `-kernel` only: under TCG ~0.4 s faster
/// than SeaBIOS), next to the QEMU binary's data or in Debian's /usr/share/qemu.
pub(super) fn find_qboot(binary: &Path) -> Option<PathBuf> {
    let beside = binary
        .parent()
        .and_then(Path::parent)
        .map(|prefix| prefix.join("share/qemu/qboot.rom"));
    beside
        .into_iter()
        .chain([PathBuf::from("/usr/share/qemu/qboot.rom")])
        .find(|p| p.is_file())
}

/// Decides the accelerator: `tcg` or `kvm` as told, or for `auto` KVM when /dev/kvm opens and a
/// probe boot of the kernel-kind guest under KVM reaches its init (a probe's answer is kept
/// per host boot, QEMU and guest in the temporary folder).
pub(super) fn decide_accel(config: &QemuConfig, binary: &Path) -> Result<&'static str, QemuError> {
    let kvm_opens = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/kvm")
        .is_ok();
    match config.accel {
        Accel::Tcg => Ok("tcg"),
        Accel::Kvm if kvm_opens => Ok("kvm"),
        Accel::Kvm => Err(QemuError::NoKvm),
        Accel::Auto if !kvm_opens => Ok("tcg"),
        Accel::Auto => {
            if !config.kernel.is_file() || !config.initrd.is_file() {
                // No guest to probe with (image kind without scripts/guest-kernel's guest).
                return Ok("tcg");
            }
            let boot_id = fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
            let stamp = |p: &Path| {
                fs::metadata(p)
                    .and_then(|m| m.modified())
                    .map(|t| format!("{t:?}"))
                    .unwrap_or_default()
            };
            let id = blake3::hash(
                format!(
                    "{boot_id}\n{}\n{}\n{}\n{}\n{}",
                    binary.display(),
                    stamp(binary),
                    config.kernel.display(),
                    stamp(&config.kernel),
                    config.cpu_model
                )
                .as_bytes(),
            );
            let memo =
                std::env::temp_dir().join(format!("mccbuild-kvm-probe-{}", &id.to_hex()[..16]));
            if let Ok(answer) = fs::read_to_string(&memo) {
                match answer.trim() {
                    "kvm" => return Ok("kvm"),
                    "tcg" => return Ok("tcg"),
                    _ => {}
                }
            }
            let answer = if probe_kvm(config, binary) {
                "kvm"
            } else {
                "tcg"
            };
            let _ = fs::write(&memo, answer);
            Ok(answer)
        }
    }
}

/// Boots the kernel-kind guest without a job under KVM: true when it reaches its init and
/// powers off within 20 s (KVM variants where stock kernels hang fail here).
fn probe_kvm(config: &QemuConfig, binary: &Path) -> bool {
    let console = std::env::temp_dir().join(format!(
        "mccbuild-kvm-probe-{}-console.log",
        std::process::id()
    ));
    let answer = probe_boot(config, binary, &console);
    let _ = fs::remove_file(&console);
    answer
}

fn probe_boot(config: &QemuConfig, binary: &Path, console: &Path) -> bool {
    let mut command = Command::new(binary);
    command
        .args([
            "-accel",
            "kvm",
            "-cpu",
            &config.cpu_model,
            "-m",
            "256",
            "-smp",
            "1",
        ])
        .args([
            "-nodefaults",
            "-no-user-config",
            "-display",
            "none",
            "-no-reboot",
        ])
        .arg("-serial")
        .arg(format!("file:{}", console.display()))
        .arg("-kernel")
        .arg(&config.kernel)
        .arg("-initrd")
        .arg(&config.initrd)
        .args(["-append", "console=ttyS0 panic=-1 quiet"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    pin_and_tie(&mut command, Vec::new());
    let Ok(child) = command.spawn() else {
        return false;
    };
    let mut vm = Vm::new(child);
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        if let Some((status, _)) = vm.try_wait() {
            return libc::WIFEXITED(status)
                && libc::WEXITSTATUS(status) == 0
                && tail_of(console, 4096).contains("mccbuild-guest: ready, no job");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false // `vm` is killed and reaped as it drops
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The machine, its firmware and the kernel's command line are run key ingredients, and
    /// each choice gives other values (crates/plan's key tests prove that any ingredient change
    /// changes the key).
    #[test]
    fn the_machine_and_the_kernel_command_line_are_key_ingredients() {
        let tcg = machine_ingredients(GuestKind::Kernel, "tcg", true, "");
        let names: Vec<&str> = tcg.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["machine", "kernel_cmdline"]);
        assert_ne!(tcg, machine_ingredients(GuestKind::Kernel, "kvm", true, ""));
        assert_ne!(
            tcg,
            machine_ingredients(GuestKind::Kernel, "tcg", false, "")
        );
        assert_ne!(
            tcg,
            machine_ingredients(GuestKind::Kernel, "tcg", true, "loglevel=7")
        );
        assert!(tcg[1].1.contains("mitigations=off"));
        // The key names the host's TSC rate, not the number measured on this machine.
        assert!(tcg[1].1.contains("tsc_early_khz=host"));
        assert!(!kernel_cmdline("kvm", "host", "").contains("mitigations"));
        assert!(!kernel_cmdline("kvm", "2596134", "").contains("tsc_early_khz"));
        assert!(!kernel_cmdline("tcg", "", "").contains("tsc_early_khz"));
        // The manifest's arguments come last: the kernel takes the last of a repeated one.
        assert!(
            kernel_cmdline("tcg", "2596134", "tsc_early_khz=300000")
                .ends_with("tsc_early_khz=2596134 tsc_early_khz=300000")
        );
        assert!(machine_ingredients(GuestKind::Image, "tcg", false, "").is_empty());
    }
}
