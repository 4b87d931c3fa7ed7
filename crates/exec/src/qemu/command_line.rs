//! QEMU's command line for one run: the machine, the kernel guest's kernel and shares or the
//! image guest's disks and forwarded ssh port, the instance's disk and the output share.

use std::path::{Path, PathBuf};

use super::machine::kernel_cmdline;
use super::ssh::free_port;
use super::{QemuExecutor, RunFiles};
use crate::{InfraError, RunSpec};

impl QemuExecutor {
    /// QEMU's command line, and the host port forwarded to the guest's ssh (image kind).
    pub(super) fn qemu_args(
        &self,
        spec: &RunSpec,
        files: &RunFiles,
        image: Option<&PathBuf>,
    ) -> Result<(Vec<String>, Option<u16>), InfraError> {
        let mut args: Vec<String> = vec![
            "-accel".into(),
            self.accel.into(),
            "-cpu".into(),
            self.config.cpu_model.clone(),
            "-m".into(),
            spec.limits.memory_mb.to_string(),
            "-smp".into(),
            spec.cores.to_string(),
            "-nodefaults".into(),
            "-no-user-config".into(),
            "-display".into(),
            "none".into(),
            "-no-reboot".into(),
            "-serial".into(),
            format!("file:{}", files.console.display()),
        ];
        let virtfs = |args: &mut Vec<String>, path: &Path, tag: &str, readonly: bool| {
            args.push("-virtfs".into());
            args.push(format!(
                "local,path={},mount_tag={tag},security_model=none{}",
                escape_option(path),
                if readonly { ",readonly=on" } else { "" }
            ));
        };
        let mut ssh_port = None;
        match image {
            None => {
                args.extend([
                    "-kernel".into(),
                    self.config.kernel.display().to_string(),
                    "-initrd".into(),
                    self.config.initrd.display().to_string(),
                    "-append".into(),
                    kernel_cmdline(self.accel, &self.tsc_khz, &self.config.kernel_args),
                ]);
                if let Some(firmware) = &self.firmware {
                    args.push("-bios".into());
                    args.push(firmware.display().to_string());
                }
                args.push("-drive".into());
                args.push(format!(
                    "file={},format=raw,if=virtio,readonly=on",
                    escape_option(&files.disk)
                ));
                virtfs(&mut args, Path::new("/usr"), "mccusr", true);
                // Debian's alternatives (/usr/bin/awk -> /etc/alternatives/awk -> mawk): without
                // them such commands of the host's /usr do not resolve in the guest.
                if Path::new("/etc/alternatives").is_dir() {
                    virtfs(&mut args, Path::new("/etc/alternatives"), "mccalt", true);
                }
                virtfs(&mut args, &spec.tool_dir, "mcctool", true);
                if spec.bin_path != spec.tool_dir {
                    virtfs(&mut args, &spec.bin_path, "mccbin", true);
                }
            }
            Some(image) => {
                // The image through a copy-on-write snapshot (guest writes are discarded); the
                // instance read-only; the output share writable.
                args.push("-drive".into());
                args.push(format!(
                    "file={},format={},if=virtio,snapshot=on",
                    escape_option(image),
                    image_format(image)
                ));
                args.push("-drive".into());
                args.push(format!(
                    "file={},format=raw,if=virtio,readonly=on",
                    escape_option(&files.disk)
                ));
                let port = free_port()?;
                args.extend([
                    "-netdev".into(),
                    format!("user,id=net0,hostfwd=tcp:127.0.0.1:{port}-:22"),
                    "-device".into(),
                    "virtio-net-pci,netdev=net0".into(),
                ]);
                ssh_port = Some(port);
            }
        }
        virtfs(&mut args, &files.out, "mccout", false);
        Ok((args, ssh_port))
    }
}

/// A path inside a QEMU option list (commas are doubled).
fn escape_option(path: &Path) -> String {
    path.display().to_string().replace(',', ",,")
}

fn image_format(image: &Path) -> &'static str {
    match image.extension().and_then(|e| e.to_str()) {
        Some("qcow2") => "qcow2",
        Some("vmdk") => "vmdk",
        _ => "raw",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commas_are_doubled_in_qemu_options() {
        assert_eq!(escape_option(Path::new("/a,b/c")), "/a,,b/c");
    }

    #[test]
    fn image_formats_come_from_the_extension() {
        assert_eq!(image_format(Path::new("x.qcow2")), "qcow2");
        assert_eq!(image_format(Path::new("mcc2026.vmdk")), "vmdk");
        assert_eq!(image_format(Path::new("disk.img")), "raw");
    }
}
