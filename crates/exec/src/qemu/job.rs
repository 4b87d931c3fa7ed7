//! What goes into the guest: the run's folder, the instance (without its hidden files) on a
//! read-only disk, the tool's image, and the job the guest's runner reads.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use mccbuild_plan::instance::materialize;
use mccbuild_plan::manifest::{GuestKind, RunUser};

use super::{QemuExecutor, RUNNER, RunFiles};
use crate::{InfraError, RunSpec};

impl QemuExecutor {
    /// The run's folder: the output share, the instance (without its hidden files) on a disk.
    pub(super) fn prepare(&self, spec: &RunSpec, dir: &Path) -> Result<RunFiles, InfraError> {
        let out = dir.join("out");
        let input = dir.join("input");
        fs::create_dir_all(&out)
            .and_then(|_| fs::create_dir_all(&input))
            .map_err(|e| {
                InfraError(format!(
                    "cannot create the run's folder {}: {e}",
                    dir.display()
                ))
            })?;
        let hidden: Vec<&str> = spec.hidden.iter().map(String::as_str).collect();
        materialize(
            &spec.instance,
            &spec.source,
            &input.join(&spec.instance),
            &hidden,
            self.archive_limits,
        )
        .map_err(|e| InfraError(format!("cannot prepare instance {}: {e}", spec.instance)))?;
        let disk = dir.join("input.img");
        make_input_disk(&input, &disk)?;
        Ok(RunFiles {
            dir: dir.to_path_buf(),
            out,
            disk,
            console: dir.join("console.log"),
        })
    }

    /// The tool's disk image (image-kind guests).
    pub(super) fn image_of(&self, spec: &RunSpec) -> Result<Option<&PathBuf>, InfraError> {
        if self.config.guest == GuestKind::Kernel {
            return Ok(None);
        }
        let image = self.config.images.get(&spec.tool).ok_or_else(|| {
            InfraError(format!(
                "tool {} has no image in [executor.qemu] (set `image` or `images.{}`)",
                spec.tool, spec.tool
            ))
        })?;
        if !image.is_file() {
            return Err(InfraError(format!(
                "the image of tool {} ({}) does not exist (any more): build it with scripts/guest-image, or fix [executor.qemu] images",
                spec.tool,
                image.display()
            )));
        }
        Ok(Some(image))
    }

    /// The job the guest's runner reads: BenchKit's variables and where things are in the guest.
    pub(super) fn write_job(&self, spec: &RunSpec, out: &Path) -> Result<(), InfraError> {
        let separate_bin = spec.bin_path != spec.tool_dir;
        // Both guests run the tool as BenchKit does, as `mcc` (root where the manifest says
        // `user = "root"`); the kernel guest's BK_BIN_PATH, a read-only share, gets a writable
        // overlay in the guest (the image's is on its own disk, writable).
        let (input_dev, bin_path, bin_overlay, work) = match self.config.guest {
            GuestKind::Kernel => (
                "/dev/vda",
                if separate_bin {
                    "/home/mcc/BenchKit-bin/"
                } else {
                    "/home/mcc/BenchKit/"
                },
                "1",
                "/tmp/mccbuild-run",
            ),
            GuestKind::Image => (
                "/dev/vdb",
                "/home/mcc/BenchKit/bin/",
                "",
                "/home/mcc/mccbuild-run",
            ),
        };
        let user = match spec.user {
            RunUser::Mcc => "mcc",
            RunUser::Root => "",
        };
        let entry = format!("/home/mcc/BenchKit/{}", spec.entry);
        let job = [
            ("BK_INPUT", spec.instance.as_str()),
            ("BK_EXAMINATION", &spec.examination),
            ("BK_TOOL", &spec.bk_tool),
            ("BK_TIME_CONFINEMENT", &spec.limits.time_s.to_string()),
            ("BK_MEMORY_CONFINEMENT", &spec.limits.memory_mb.to_string()),
            ("MCC_TIME_LIMIT", spec.limits.time.name()),
            ("BK_BIN_PATH", bin_path),
            ("MCC_INPUT_DEV", input_dev),
            ("MCC_ENTRY", &entry),
            ("MCC_USER", user),
            ("MCC_BIN_OVERLAY", bin_overlay),
            ("MCC_WORK", work),
        ]
        .iter()
        .map(|(k, v)| format!("{k}={}\n", shell_quote(v)))
        .collect::<String>();
        fs::write(out.join("job.env"), job)
            .and_then(|_| fs::write(out.join("runner.sh"), RUNNER))
            .map_err(|e| InfraError(format!("cannot write the job into {}: {e}", out.display())))
    }
}

/// The instance's read-only disk: a tar archive of `<instance>/` (padded to whole sectors),
/// which the guest's runner unpacks into the run's working directory, as BenchKit unpacks
/// `INPUTS/<instance>.tgz` on the MCC's VM. Written here, without a file system: the kernel
/// guest needs no file system driver for it (loading ext4 and its four helper modules and
/// mounting cost ~0.35 s of each run under TCG), and no mke2fs runs per run.
fn make_input_disk(input: &Path, disk: &Path) -> Result<(), InfraError> {
    let fail = |e: io::Error| {
        InfraError(format!(
            "cannot write the instance's disk {}: {e}",
            disk.display()
        ))
    };
    let file = fs::File::create(disk).map_err(fail)?;
    let mut archive = tar::Builder::new(io::BufWriter::new(file));
    // Links stay links, as the instance's folder holds them.
    archive.follow_symlinks(false);
    for entry in fs::read_dir(input).map_err(fail)? {
        let entry = entry.map_err(fail)?;
        let path = entry.path();
        if entry.file_type().map_err(fail)?.is_dir() {
            archive
                .append_dir_all(entry.file_name(), &path)
                .map_err(fail)?;
        } else {
            archive
                .append_path_with_name(&path, entry.file_name())
                .map_err(fail)?;
        }
    }
    // Two zero blocks end the archive: the guest's tar stops there.
    archive
        .into_inner()
        .map_err(fail)?
        .into_inner()
        .map_err(|e| fail(e.into_error()))?;
    Ok(())
}

/// A value for `job.env`, read by `sh`'s `.`.
fn shell_quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_values_are_quoted_for_sh() {
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
