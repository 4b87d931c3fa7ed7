//! Model instances: folders in the MCC layout or BenchKit `.tgz` archives, used as they are.
//!
//! An archive is never trusted: entries must stay inside the instance folder (no absolute paths,
//! no `..`, no links, no devices) and the whole archive must expand to less than a bound. The
//! same checks apply when an instance is listed and when it is unpacked for a run.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path};

use quick_xml::events::Event;
use serde::{Deserialize, Serialize};

use mccbuild_core::digest::{hash_reader, Digest};

use crate::digest_cache::{DigestCache, Stamp};
use crate::manifest::InstanceSource;

/// How far an instance archive may expand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArchiveLimits {
    pub max_bytes: u64,
    pub max_entries: usize,
}

impl Default for ArchiveLimits {
    /// 4 GiB and 100,000 entries: far above real MCC instances (a few MB), far below a disk.
    fn default() -> Self {
        ArchiveLimits {
            max_bytes: 4 << 30,
            max_entries: 100_000,
        }
    }
}

/// One file of an instance.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    /// Relative to the instance folder, `/`-separated.
    pub path: String,
    pub size: u64,
    pub digest: Digest,
    pub executable: bool,
}

/// What `model.pnml` says about the net.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetInfo {
    pub net_type: String,
    pub colored: bool,
}

/// Everything mccbuild needs to know about an instance, computed once per version of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstanceFacts {
    /// Sorted by path.
    pub files: Vec<FileEntry>,
    /// Formula files (top-level `*.xml` whose root is `<property-set>`): their `<id>`s in file
    /// order, or why they could not be read.
    pub formulas: BTreeMap<String, Result<Vec<String>, String>>,
    /// `model.pnml`, or why it is not a readable PNML file.
    pub net: Result<NetInfo, String>,
    /// The empty `NewModel` marker: the instance belongs to a new (surprise) model.
    pub new_model: bool,
    /// Small top-level text files (at most 256 bytes: `iscolored`, `instance`, an expected
    /// verdict...), by name.
    pub texts: BTreeMap<String, String>,
}

impl Default for InstanceFacts {
    /// An instance known by name only (from a results file).
    fn default() -> Self {
        InstanceFacts {
            files: Vec::new(),
            formulas: BTreeMap::new(),
            net: Err("no model file".into()),
            new_model: false,
            texts: BTreeMap::new(),
        }
    }
}

impl InstanceFacts {
    pub fn has_file(&self, name: &str) -> bool {
        self.files.iter().any(|f| f.path == name)
    }

    /// The digest of the files a run sees (all, minus `hidden`): what the run key takes from
    /// the instance's content.
    pub fn visible_digest(&self, hidden: &[&str]) -> Digest {
        let mut hasher = blake3::Hasher::new();
        for f in self
            .files
            .iter()
            .filter(|f| !hidden.contains(&f.path.as_str()))
        {
            hasher.update(&(f.path.len() as u64).to_le_bytes());
            hasher.update(f.path.as_bytes());
            hasher.update(&f.digest);
            hasher.update(&[f.executable as u8]);
        }
        *hasher.finalize().as_bytes()
    }
}

/// Lists, digests and inspects an instance (cached in `cache`).
pub fn instance_facts(
    name: &str,
    source: &InstanceSource,
    cache: &mut DigestCache,
    limits: ArchiveLimits,
) -> Result<std::sync::Arc<InstanceFacts>, String> {
    match source {
        InstanceSource::Imported(_) => Ok(std::sync::Arc::new(InstanceFacts::default())),
        InstanceSource::Archive(path) => {
            let meta =
                fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let stamps = [(String::new(), Stamp::of(&meta))];
            cache
                .derived(path, &stamps, |_| archive_facts(path, name, limits))
                .map(std::sync::Arc::new)
        }
        InstanceSource::Folder(path) => {
            let mut files = Vec::new();
            walk_folder(path, path, &mut files)?;
            let stamps: Vec<(String, Stamp)> = files
                .iter()
                .map(|(rel, meta)| (rel.clone(), Stamp::of(meta)))
                .collect();
            cache
                .derived(path, &stamps, |cache| folder_facts(path, &files, cache))
                .map(std::sync::Arc::new)
        }
    }
}

fn walk_folder(
    root: &Path,
    dir: &Path,
    out: &mut Vec<(String, fs::Metadata)>,
) -> Result<(), String> {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .map_err(|e| format!("cannot read instance folder {}: {e}", dir.display()))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("cannot read instance folder {}: {e}", dir.display()))?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let meta = fs::symlink_metadata(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let rel = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .to_string_lossy()
            .into_owned();
        if meta.file_type().is_symlink() {
            return Err(format!(
                "{} is a symbolic link; instance folders hold plain files only",
                path.display()
            ));
        } else if meta.is_dir() {
            walk_folder(root, &path, out)?;
        } else if meta.is_file() {
            out.push((rel, meta));
        } else {
            return Err(format!("{} is not a regular file", path.display()));
        }
    }
    Ok(())
}

fn folder_facts(
    root: &Path,
    files: &[(String, fs::Metadata)],
    cache: &mut DigestCache,
) -> Result<InstanceFacts, String> {
    let mut facts = InstanceFacts::empty();
    for (rel, meta) in files {
        let path = root.join(rel);
        let digest = cache
            .file_digest(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        facts.files.push(FileEntry {
            path: rel.clone(),
            size: meta.len(),
            digest,
            executable: meta.permissions().mode() & 0o111 != 0,
        });
        inspect(&mut facts, rel, meta.len(), || {
            File::open(&path).map(BufReader::new)
        });
    }
    Ok(facts)
}

impl InstanceFacts {
    /// Before any file is looked at.
    fn empty() -> InstanceFacts {
        InstanceFacts {
            files: Vec::new(),
            formulas: BTreeMap::new(),
            net: Err("model.pnml is missing".into()),
            new_model: false,
            texts: BTreeMap::new(),
        }
    }
}

fn archive_facts(path: &Path, name: &str, limits: ArchiveLimits) -> Result<InstanceFacts, String> {
    let mut facts = InstanceFacts::empty();
    for_each_archive_file(path, name, limits, |rel, size, executable, reader| {
        // Read the entry once: inspect what needs parsing from memory, hash everything.
        let mut content = Vec::with_capacity(size.min(1 << 26) as usize);
        reader
            .read_to_end(&mut content)
            .map_err(|e| format!("{}: entry {rel}: {e}", path.display()))?;
        let digest = *blake3::hash(&content).as_bytes();
        facts.files.push(FileEntry {
            path: rel.to_string(),
            size: content.len() as u64,
            digest,
            executable,
        });
        inspect(&mut facts, rel, content.len() as u64, || {
            Ok::<_, io::Error>(&content[..])
        });
        Ok(())
    })?;
    facts.files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(facts)
}

/// Records what mccbuild needs from the instance's special files.
fn inspect<R: io::BufRead>(
    facts: &mut InstanceFacts,
    rel: &str,
    size: u64,
    open: impl FnOnce() -> io::Result<R>,
) {
    if size <= 256 && !rel.contains('/') && !rel.ends_with(".xml") && rel != "model.pnml" {
        if let Ok(mut reader) = open() {
            let mut text = String::new();
            if reader.read_to_string(&mut text).is_ok() {
                facts.texts.insert(rel.to_string(), text);
            }
        }
        if rel == "NewModel" {
            facts.new_model = true;
        }
    } else if rel == "NewModel" {
        facts.new_model = true;
    } else if rel == "model.pnml" {
        facts.net = open()
            .map_err(|e| format!("cannot read model.pnml: {e}"))
            .and_then(pnml_info);
    } else if rel.ends_with(".xml") && !rel.contains('/') && !rel.starts_with("GenericProperties") {
        match open()
            .map_err(|e| format!("cannot read {rel}: {e}"))
            .and_then(formula_ids)
        {
            Ok(Some(ids)) => {
                facts.formulas.insert(rel.to_string(), Ok(ids));
            }
            Ok(None) => {}
            Err(e) => {
                facts.formulas.insert(rel.to_string(), Err(e));
            }
        }
    }
}

/// The `<id>`s of a formula file (`<property-set><property><id>`), in file order; `None` when
/// the root element is not `property-set`.
pub fn formula_ids(input: impl io::BufRead) -> Result<Option<Vec<String>>, String> {
    let mut reader = quick_xml::Reader::from_reader(input);
    let mut buf = Vec::new();
    let mut stack: Vec<String> = Vec::new();
    let mut ids = Vec::new();
    let mut current: Option<String> = None;
    let mut root_seen = false;
    loop {
        let event = reader
            .read_event_into(&mut buf)
            .map_err(|e| xml_error(&reader, e))?;
        match event {
            Event::Start(e) => {
                let name = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
                if !root_seen {
                    root_seen = true;
                    if name != "property-set" {
                        return Ok(None);
                    }
                }
                if stack.len() == 2 && name == "id" && stack[1] == "property" {
                    current = Some(String::new());
                }
                stack.push(name);
            }
            Event::Empty(e) => {
                if !root_seen {
                    root_seen = true;
                    if e.local_name().as_ref() != b"property-set" {
                        return Ok(None);
                    }
                }
            }
            Event::Text(t) => {
                if let Some(id) = current.as_mut() {
                    id.push_str(&String::from_utf8_lossy(&t.into_inner()));
                }
            }
            Event::End(_) => {
                if stack.len() == 3 {
                    if let Some(id) = current.take() {
                        let id = id.trim().to_string();
                        if id.is_empty() {
                            return Err(format!(
                                "a <property> has an empty <id> (line {})",
                                line_of(&reader)
                            ));
                        }
                        ids.push(id);
                    }
                }
                stack.pop();
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    if !root_seen {
        return Err("empty file: no XML element".to_string());
    }
    if let Some(open) = stack.last() {
        return Err(format!("the file ends inside <{open}>: it is truncated"));
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(dup) = ids.iter().find(|id| !seen.insert(id.as_str())) {
        return Err(format!("formula id `{dup}` appears twice"));
    }
    Ok(Some(ids))
}

/// Checks that `model.pnml` is well-formed XML with a `<pnml><net type="...">`.
pub fn pnml_info(input: impl io::BufRead) -> Result<NetInfo, String> {
    let mut reader = quick_xml::Reader::from_reader(input);
    let mut buf = Vec::new();
    let mut depth = 0usize;
    let mut root_seen = false;
    let mut net_type: Option<String> = None;
    loop {
        let event = reader.read_event_into(&mut buf).map_err(|e| {
            format!(
                "model.pnml is not well-formed XML: {}",
                xml_error(&reader, e)
            )
        })?;
        match event {
            Event::Start(ref e) | Event::Empty(ref e) => {
                let name = e.local_name();
                if !root_seen {
                    root_seen = true;
                    if name.as_ref() != b"pnml" {
                        return Err(format!(
                            "model.pnml: the root element is <{}>, not <pnml>",
                            String::from_utf8_lossy(name.as_ref())
                        ));
                    }
                } else if depth == 1 && name.as_ref() == b"net" && net_type.is_none() {
                    let ty = e
                        .try_get_attribute("type")
                        .ok()
                        .flatten()
                        .map(|a| String::from_utf8_lossy(&a.value).into_owned())
                        .ok_or_else(|| "model.pnml: <net> has no type attribute".to_string())?;
                    net_type = Some(ty);
                }
                if matches!(event, Event::Start(_)) {
                    depth += 1;
                }
            }
            Event::End(_) => depth = depth.saturating_sub(1),
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    if !root_seen {
        return Err("model.pnml is not XML: it holds no element".to_string());
    }
    if depth > 0 {
        return Err(
            "model.pnml is not well-formed XML: it ends inside an element (truncated?)".to_string(),
        );
    }
    let net_type =
        net_type.ok_or_else(|| "model.pnml: no <net> element under <pnml>".to_string())?;
    let colored = net_type.contains("symmetricnet") || net_type.contains("highlevelnet");
    Ok(NetInfo { net_type, colored })
}

fn xml_error<R>(reader: &quick_xml::Reader<R>, e: quick_xml::Error) -> String {
    format!("{e} (near byte {})", reader.buffer_position())
}

fn line_of<R>(reader: &quick_xml::Reader<R>) -> u64 {
    reader.buffer_position()
}

/// Visits every file of an instance archive after checking it is safe: paths stay inside the
/// instance folder (a leading `<instance>/` folder is stripped), entries are plain files or
/// folders, and the archive expands to at most `limits`.
pub fn for_each_archive_file(
    path: &Path,
    instance: &str,
    limits: ArchiveLimits,
    mut visit: impl FnMut(&str, u64, bool, &mut dyn Read) -> Result<(), String>,
) -> Result<(), String> {
    let file = File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let gz = flate2::read::MultiGzDecoder::new(BufReader::new(file));
    let mut archive = tar::Archive::new(gz);
    let bad = |what: String| format!("{}: {what}", path.display());
    let mut total: u64 = 0;
    let mut count = 0usize;
    let entries = archive
        .entries()
        .map_err(|e| bad(format!("not a tar.gz archive: {e}")))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| bad(format!("corrupt archive: {e}")))?;
        count += 1;
        if count > limits.max_entries {
            return Err(bad(format!(
                "more than {} entries; refusing to expand it",
                limits.max_entries
            )));
        }
        let raw = entry
            .path()
            .map_err(|e| bad(format!("entry with an unreadable path: {e}")))?
            .into_owned();
        let shown = raw.display().to_string();
        let mut parts: Vec<String> = Vec::new();
        for component in raw.components() {
            match component {
                Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
                Component::CurDir => {}
                Component::ParentDir => {
                    return Err(bad(format!(
                        "entry `{shown}` escapes the instance folder (`..`)"
                    )))
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(bad(format!("entry `{shown}` has an absolute path")))
                }
            }
        }
        if parts.first().is_some_and(|first| first == instance) {
            parts.remove(0);
        }
        let kind = entry.header().entry_type();
        if kind.is_dir() {
            continue;
        }
        if !(kind.is_file() || kind == tar::EntryType::Continuous) {
            let what = if kind.is_symlink() {
                "a symbolic link"
            } else if kind.is_hard_link() {
                "a hard link"
            } else {
                "not a plain file"
            };
            return Err(bad(format!(
                "entry `{shown}` is {what}; instance archives hold plain files only"
            )));
        }
        if parts.is_empty() {
            return Err(bad(format!("entry `{shown}` has an empty path")));
        }
        let rel = parts.join("/");
        let mode = entry.header().mode().unwrap_or(0o644);
        let size = entry.header().size().unwrap_or(0);
        if total.saturating_add(size) > limits.max_bytes {
            return Err(bad(format!(
                "expands to more than {} MB; refusing to expand it",
                limits.max_bytes >> 20
            )));
        }
        // Never trust the header: count what is really read.
        let budget = limits.max_bytes - total;
        let mut counted = CountingReader {
            inner: (&mut entry).take(budget + 1),
            count: 0,
        };
        visit(&rel, size, mode & 0o111 != 0, &mut counted)?;
        io::copy(&mut counted, &mut io::sink())
            .map_err(|e| bad(format!("entry `{shown}`: {e}")))?;
        total += counted.count;
        if total > limits.max_bytes {
            return Err(bad(format!(
                "expands to more than {} MB; refusing to expand it",
                limits.max_bytes >> 20
            )));
        }
    }
    Ok(())
}

struct CountingReader<R> {
    inner: R,
    count: u64,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}

/// Materialises an instance in `dest` (a fresh folder), without the files in `hidden` (rule M-9).
pub fn materialize(
    name: &str,
    source: &InstanceSource,
    dest: &Path,
    hidden: &[&str],
    limits: ArchiveLimits,
) -> Result<(), String> {
    fs::create_dir_all(dest).map_err(|e| format!("cannot create {}: {e}", dest.display()))?;
    match source {
        InstanceSource::Imported(path) => Err(format!(
            "{} is known from the results file {} only: its runs cannot be executed",
            name,
            path.display()
        )),
        InstanceSource::Folder(root) => {
            let mut files = Vec::new();
            walk_folder(root, root, &mut files)?;
            for (rel, meta) in files {
                if hidden.contains(&rel.as_str()) {
                    continue;
                }
                let target = dest.join(&rel);
                if let Some(parent) = target.parent() {
                    fs::create_dir_all(parent)
                        .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
                }
                fs::copy(root.join(&rel), &target)
                    .map_err(|e| format!("cannot copy {rel} into the run's folder: {e}"))?;
                let mode = if meta.permissions().mode() & 0o111 != 0 {
                    0o755
                } else {
                    0o644
                };
                let _ = fs::set_permissions(&target, fs::Permissions::from_mode(mode));
            }
            Ok(())
        }
        InstanceSource::Archive(path) => {
            for_each_archive_file(path, name, limits, |rel, _, executable, reader| {
                if hidden.contains(&rel) {
                    return Ok(());
                }
                let target = dest.join(rel);
                if let Some(parent) = target.parent() {
                    fs::create_dir_all(parent)
                        .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
                }
                let mut out = File::create(&target)
                    .map_err(|e| format!("cannot write {}: {e}", target.display()))?;
                io::copy(reader, &mut out)
                    .map_err(|e| format!("cannot write {}: {e}", target.display()))?;
                out.flush()
                    .map_err(|e| format!("cannot write {}: {e}", target.display()))?;
                let mode = if executable { 0o755 } else { 0o644 };
                let _ = fs::set_permissions(&target, fs::Permissions::from_mode(mode));
                Ok(())
            })
        }
    }
}

/// The digest of everything a reader yields (re-exported for callers hashing instance files).
pub fn digest_of(reader: impl Read) -> io::Result<Digest> {
    hash_reader(reader)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/mcc2025");

    #[test]
    fn formula_ids_in_file_order() {
        let xml = r#"<?xml version="1.0"?>
<property-set xmlns="http://mcc.lip6.fr/">
  <property><id>M-UpperBounds-01</id><description>x</description><formula><place-bound><place>p</place></place-bound></formula></property>
  <property>
    <id>
      M-UpperBounds-00
    </id>
    <formula/>
  </property>
</property-set>"#;
        assert_eq!(
            formula_ids(xml.as_bytes()).unwrap(),
            Some(vec![
                "M-UpperBounds-01".to_string(),
                "M-UpperBounds-00".to_string()
            ])
        );
        assert_eq!(formula_ids("<toolspecific/>".as_bytes()).unwrap(), None);
        assert!(formula_ids("<property-set><property><id>a</id></property><property><id>a</id></property></property-set>".as_bytes()).unwrap_err().contains("twice"));
        assert!(formula_ids("<property-set><property><id>a</id>".as_bytes()).is_err());
        assert!(formula_ids("".as_bytes()).is_err());
    }

    #[test]
    fn pnml_checks() {
        let ok = r#"<?xml version="1.0"?><pnml xmlns="http://www.pnml.org/version-2009/grammar/pnml"><net id="n" type="http://www.pnml.org/version-2009/grammar/ptnet"><page id="p"/></net></pnml>"#;
        assert_eq!(
            pnml_info(ok.as_bytes()).unwrap(),
            NetInfo {
                net_type: "http://www.pnml.org/version-2009/grammar/ptnet".into(),
                colored: false
            }
        );
        let colored = ok.replace("ptnet", "symmetricnet");
        assert!(pnml_info(colored.as_bytes()).unwrap().colored);
        for bad in [
            "this is not XML",
            "",
            "<pnml><net type=\"x\"></pnml>",
            "<foo/>",
            "<pnml></pnml>",
        ] {
            assert!(pnml_info(bad.as_bytes()).is_err(), "{bad}");
        }
    }

    #[test]
    fn real_archive_facts() {
        let archive = Path::new(FIXTURES).join("INPUTS/Philosophers-PT-000005.tgz");
        if !archive.exists() {
            eprintln!("skipped: {} is absent", archive.display());
            assert!(std::env::var_os("CI").is_none(), "MCC data missing in CI");
            return;
        }
        let source = InstanceSource::Archive(archive);
        let mut cache = DigestCache::in_memory();
        let facts = instance_facts(
            "Philosophers-PT-000005",
            &source,
            &mut cache,
            ArchiveLimits::default(),
        )
        .unwrap();
        assert!(facts.has_file("model.pnml"));
        assert!(facts.has_file("GenericPropertiesVerdict.xml"));
        assert!(!facts.new_model);
        assert!(!facts.net.as_ref().unwrap().colored);
        let ub = facts.formulas["UpperBounds.xml"].as_ref().unwrap();
        assert_eq!(ub.len(), 16);
        assert_eq!(ub[0], "Philosophers-PT-000005-UpperBounds-00");
        // The folder and the archive of the same instance have the same content digest.
        let folder =
            InstanceSource::Folder(Path::new(FIXTURES).join("fixtures/Philosophers-PT-000005"));
        let folder_facts = instance_facts(
            "Philosophers-PT-000005",
            &folder,
            &mut cache,
            ArchiveLimits::default(),
        )
        .unwrap();
        let ignore_oracle: Vec<&str> = folder_facts
            .files
            .iter()
            .filter(|f| f.path.starts_with("oracle/"))
            .map(|f| f.path.as_str())
            .collect();
        assert_eq!(
            folder_facts.visible_digest(&ignore_oracle),
            facts.visible_digest(&[])
        );
        assert_ne!(
            facts.visible_digest(&["GenericPropertiesVerdict.xml"]),
            facts.visible_digest(&[])
        );
    }

    fn tar_gz(
        entries: impl FnOnce(&mut tar::Builder<flate2::write::GzEncoder<Vec<u8>>>),
    ) -> Vec<u8> {
        let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::fast(),
        ));
        entries(&mut builder);
        builder.into_inner().unwrap().finish().unwrap()
    }

    fn raw_file(
        builder: &mut tar::Builder<flate2::write::GzEncoder<Vec<u8>>>,
        path: &str,
        content: &[u8],
    ) {
        // Write the name into the header by hand: tar's safe setters refuse `..` and `/x`.
        let mut header = tar::Header::new_gnu();
        header.as_gnu_mut().unwrap().name[..path.len()].copy_from_slice(path.as_bytes());
        header.set_size(content.len() as u64);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        header.set_cksum();
        builder.append(&header, content).unwrap();
    }

    fn check_archive(bytes: &[u8], limits: ArchiveLimits) -> Result<Vec<String>, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("X-PT-1.tgz");
        fs::write(&path, bytes).unwrap();
        let dest = dir.path().join("out");
        let source = InstanceSource::Archive(path);
        materialize("X-PT-1", &source, &dest, &[], limits)?;
        let mut found = Vec::new();
        walk_folder(&dest, &dest, &mut Vec::new()).unwrap();
        for e in fs::read_dir(&dest).unwrap() {
            found.push(e.unwrap().file_name().to_string_lossy().into_owned());
        }
        found.sort();
        // Nothing was written next to the destination.
        let mut siblings: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        siblings.sort();
        assert_eq!(siblings, vec!["X-PT-1.tgz", "out"]);
        Ok(found)
    }

    #[test]
    fn safe_archive_unpacks_without_its_top_folder() {
        let bytes = tar_gz(|b| {
            raw_file(b, "X-PT-1/model.pnml", b"<pnml/>");
            raw_file(b, "X-PT-1/iscolored", b"FALSE\n");
        });
        assert_eq!(
            check_archive(&bytes, ArchiveLimits::default()).unwrap(),
            vec!["iscolored", "model.pnml"]
        );
    }

    #[test]
    fn hostile_archives_are_refused() {
        let dotdot = tar_gz(|b| raw_file(b, "X-PT-1/../../escaped", b"x"));
        assert!(check_archive(&dotdot, ArchiveLimits::default())
            .unwrap_err()
            .contains("escapes the instance folder"));
        let absolute = tar_gz(|b| raw_file(b, "/tmp/escaped", b"x"));
        assert!(check_archive(&absolute, ArchiveLimits::default())
            .unwrap_err()
            .contains("absolute path"));
        let symlink = tar_gz(|b| {
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(tar::EntryType::Symlink);
            header.set_size(0);
            b.append_link(&mut header, "X-PT-1/model.pnml", "/etc/passwd")
                .unwrap();
        });
        assert!(check_archive(&symlink, ArchiveLimits::default())
            .unwrap_err()
            .contains("symbolic link"));
        let hardlink = tar_gz(|b| {
            let mut header = tar::Header::new_gnu();
            header.set_entry_type(tar::EntryType::Link);
            header.set_size(0);
            b.append_link(&mut header, "X-PT-1/model.pnml", "/etc/passwd")
                .unwrap();
        });
        assert!(check_archive(&hardlink, ArchiveLimits::default())
            .unwrap_err()
            .contains("hard link"));
        assert!(check_archive(b"not a gzip at all", ArchiveLimits::default()).is_err());
    }

    #[test]
    fn archive_bombs_stop_at_the_bound() {
        // 64 MB of zeros compress to ~64 KB; with a 16 MB bound the expansion stops early.
        let bomb = tar_gz(|b| {
            let zeros = vec![0u8; 64 << 20];
            raw_file(b, "X-PT-1/model.pnml", &zeros);
        });
        assert!(bomb.len() < 1 << 20);
        let limits = ArchiveLimits {
            max_bytes: 16 << 20,
            max_entries: 10,
        };
        assert!(check_archive(&bomb, limits)
            .unwrap_err()
            .contains("more than 16 MB"));
        let many = tar_gz(|b| {
            for i in 0..20 {
                raw_file(b, &format!("X-PT-1/f{i}"), b"x");
            }
        });
        assert!(check_archive(&many, limits)
            .unwrap_err()
            .contains("more than 10 entries"));
    }
}
