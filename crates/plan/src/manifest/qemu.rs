//! `[executor.qemu]`: how the QEMU executor boots its VMs (docs/execution.md, "QEMU executor"):
//! the guest's kind and files, the accelerator, the boot timeout and the CPU model, checked.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use toml::Spanned;

use mccbuild_core::diag::{Problem, Problems, SourceText};

use super::ExecutorKind;
use super::schema::{QemuSection, ToolSection};

/// `[executor.qemu]`: how runs boot their VMs (docs/execution.md, "QEMU executor").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QemuConfig {
    pub guest: GuestKind,
    /// Kernel-kind guest (and the accelerator probe): the kernel and initramfs.
    pub kernel: PathBuf,
    pub initrd: PathBuf,
    /// Image-kind guests: each tool's disk image (`images`, else `image`).
    pub images: BTreeMap<String, PathBuf>,
    /// Private key of the images' root account (image kind).
    pub ssh_key: Option<PathBuf>,
    pub accel: Accel,
    /// Seconds a VM may take beyond the run's wall-clock limit (boot, copying the instance).
    pub boot_timeout_s: u64,
    /// The QEMU binary.
    pub binary: String,
    /// The VMs' CPU model: `[limits] cpu_model`, else the edition's.
    pub cpu_model: String,
    /// Kernel-kind guest: words appended to the kernel's command line (in the run key).
    pub kernel_args: String,
}

/// `[executor.qemu] guest`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GuestKind {
    /// A kernel + initramfs booted directly; the tool's files shared read-only.
    Kernel,
    /// A BenchKit-style disk image, driven over ssh.
    Image,
}

/// `[executor.qemu] accel`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accel {
    /// KVM when a probe boot shows it works, TCG otherwise.
    Auto,
    Kvm,
    Tcg,
}

/// Resolves and checks `[executor.qemu]`. The guest's files must exist when the executor is
/// `qemu` (their digests are part of every run key).
pub(super) fn qemu_config(
    source: &SourceText<'_>,
    root: &Path,
    section: Option<&Spanned<QemuSection>>,
    kind: ExecutorKind,
    cpu_model: String,
    tools: &[Spanned<ToolSection>],
    problems: &mut Problems,
) -> QemuConfig {
    let empty = QemuSection::default();
    let mut q = QemuReading {
        source,
        root,
        section,
        q: section.map_or(&empty, Spanned::get_ref),
        active: kind == ExecutorKind::Qemu,
        problems,
    };
    let guest = match q.choice("guest", &q.q.guest, &["kernel", "image"]) {
        Some(1) => GuestKind::Image,
        _ => GuestKind::Kernel,
    };
    let accel = match q.choice("accel", &q.q.accel, &["auto", "kvm", "tcg"]) {
        Some(1) => Accel::Kvm,
        Some(2) => Accel::Tcg,
        _ => Accel::Auto,
    };
    let (kernel, initrd) = q.kernel_files(guest == GuestKind::Kernel);
    let images = if guest == GuestKind::Image {
        q.images(tools)
    } else {
        BTreeMap::new()
    };
    let ssh_key = q.ssh_key(guest == GuestKind::Image, &images);
    let boot_timeout_s = q.q.boot_timeout_s.as_ref().map_or(120, |b| *b.get_ref());
    if boot_timeout_s == 0 {
        let span = q.at(q.q.boot_timeout_s.as_ref().map(Spanned::span));
        q.problems.push(
            source
                .problem_at(span, "[executor.qemu] boot_timeout_s must be positive")
                .help(
                    "the seconds a VM may take to boot, e.g. `boot_timeout_s = 120` (the default)",
                ),
        );
    }
    if cpu_model.is_empty()
        || !cpu_model
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.,=+".contains(c))
    {
        q.problems.push(
            Problem::new(
                source.path,
                format!("[limits] cpu_model `{cpu_model}` is not a QEMU CPU model"),
            )
            .help("e.g. \"Westmere\" (qemu-system-x86_64 -cpu help lists them)"),
        );
    }
    let kernel_args = q.kernel_args();
    QemuConfig {
        guest,
        kernel,
        initrd,
        images,
        ssh_key,
        accel,
        boot_timeout_s,
        binary: q
            .q
            .binary
            .clone()
            .unwrap_or_else(|| "qemu-system-x86_64".to_string()),
        cpu_model,
        kernel_args,
    }
}

/// `[executor.qemu]` being read.
struct QemuReading<'a, 'b> {
    source: &'a SourceText<'b>,
    root: &'a Path,
    section: Option<&'a Spanned<QemuSection>>,
    q: &'a QemuSection,
    /// The executor is `qemu`: the guest's files must exist.
    active: bool,
    problems: &'a mut Problems,
}

impl QemuReading<'_, '_> {
    /// A span, or the section's.
    fn at(&self, span: Option<Range<usize>>) -> Option<Range<usize>> {
        span.or_else(|| self.section.map(Spanned::span))
    }

    /// Which of `allowed` a field is (an unknown word is a problem).
    fn choice(
        &mut self,
        field: &str,
        value: &Option<Spanned<String>>,
        allowed: &[&str],
    ) -> Option<usize> {
        let v = value.as_ref()?;
        let found = allowed.iter().position(|a| a == v.get_ref());
        if found.is_none() {
            let span = self.at(Some(v.span()));
            self.problems.push(
                self.source
                    .problem_at(
                        span,
                        format!("[executor.qemu] {field} = \"{}\" is not known", v.get_ref()),
                    )
                    .help(format!("use one of: {}", allowed.join(", "))),
            );
        }
        found
    }

    fn must_exist(&mut self, field: &str, span: Option<Range<usize>>, file: &Path, fix: &str) {
        if self.active && !file.is_file() {
            let span = self.at(span);
            self.problems.push(
                self.source
                    .problem_at(
                        span,
                        format!("[executor.qemu] {field}: {} does not exist", file.display()),
                    )
                    .help(fix.to_string()),
            );
        }
    }

    /// `kernel_args`: printable words for the kernel's command line (QEMU's `-append`).
    fn kernel_args(&mut self) -> String {
        let Some(args) = self.q.kernel_args.as_ref() else {
            return String::new();
        };
        let text = args.get_ref().trim();
        if text.chars().any(|c| c.is_control()) {
            let span = self.at(Some(args.span()));
            self.problems.push(
                self.source
                    .problem_at(
                        span,
                        "[executor.qemu] kernel_args holds a control character",
                    )
                    .help(
                        "kernel arguments separated by spaces, e.g. `kernel_args = \"loglevel=7\"`",
                    ),
            );
        }
        text.to_string()
    }

    /// The kernel and initramfs (checked when the guest is of the kernel kind).
    fn kernel_files(&mut self, checked: bool) -> (PathBuf, PathBuf) {
        let path = |p: &Option<Spanned<String>>, default: &str| {
            self.root
                .join(p.as_ref().map_or(default, |s| s.get_ref().as_str()))
        };
        let kernel = path(&self.q.kernel, "target/qemu-guest/vmlinux");
        let initrd = path(&self.q.initrd, "target/qemu-guest/initrd.gz");
        if checked {
            let fix = "build the kernel-kind guest with scripts/guest-kernel (or set `kernel` and `initrd`, relative to the manifest)";
            let q = self.q;
            self.must_exist("kernel", q.kernel.as_ref().map(Spanned::span), &kernel, fix);
            self.must_exist("initrd", q.initrd.as_ref().map(Spanned::span), &initrd, fix);
        }
        (kernel, initrd)
    }

    /// Each tool's disk image (`images.<tool>`, else `image`).
    fn images(&mut self, tools: &[Spanned<ToolSection>]) -> BTreeMap<String, PathBuf> {
        let fix = "build a BenchKit-style image with scripts/guest-image, or set `image`/`images` (relative to the manifest)";
        let q = self.q;
        let mut images = BTreeMap::new();
        for tool in tools {
            let t = tool.get_ref();
            if t.dir.is_none() {
                continue;
            }
            let (spanned, field) = match (q.images.get(&t.name), &q.image) {
                (Some(s), _) => (s, format!("images.{}", t.name)),
                (None, Some(s)) => (s, "image".to_string()),
                (None, None) => {
                    if self.active {
                        let span = self.at(None);
                        self.problems.push(
                            self.source
                                .problem_at(span, format!("[executor.qemu] guest = \"image\" and tool `{}` has no image", t.name))
                                .help("set `image` (every tool) or `images.<tool>` in [executor.qemu]; scripts/guest-image builds one"),
                        );
                    }
                    continue;
                }
            };
            let file = self.root.join(spanned.get_ref());
            self.must_exist(&field, Some(spanned.span()), &file, fix);
            images.insert(t.name.clone(), file);
        }
        for (name, spanned) in &q.images {
            if !tools.iter().any(|t| &t.get_ref().name == name) {
                let span = self.at(Some(spanned.span()));
                self.problems.push(
                    self.source
                        .problem_at(span, format!("[executor.qemu] images: no tool `{name}`"))
                        .help("`images` maps the names of the contest's [[tool]]s to their images"),
                );
            }
        }
        images
    }

    /// The images' ssh key (`ssh_key`, else `<image>.key` beside each image).
    fn ssh_key(&mut self, checked: bool, images: &BTreeMap<String, PathBuf>) -> Option<PathBuf> {
        let q = self.q;
        let ssh_key = q.ssh_key.as_ref().map(|k| self.root.join(k.get_ref()));
        if checked {
            let keys: Vec<PathBuf> = match &ssh_key {
                Some(key) => vec![key.clone()],
                None => images
                    .values()
                    .filter(|i| i.is_file())
                    .map(|i| i.with_extension("key"))
                    .collect(),
            };
            for key in keys {
                self.must_exist("ssh_key", q.ssh_key.as_ref().map(Spanned::span), &key, "scripts/guest-image writes the key next to the image (<image>.key); or set `ssh_key`");
            }
        }
        ssh_key
    }
}
