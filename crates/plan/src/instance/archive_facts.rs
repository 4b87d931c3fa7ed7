//! The facts of an instance archive, read in one streaming pass (each entry hashed as it goes
//! by, the special files parsed from the same stream), problems located by a second pass.

use std::collections::BTreeMap;
use std::io::{self, BufReader, Read};
use std::path::Path;

use mccbuild_core::diag::Location;
use mccbuild_core::digest::Digest;

use super::{ArchiveLimits, FileEntry, InstanceError, InstanceFacts};
use crate::archive::for_each_archive_file;
use crate::model_files::{AtOffset, location_of, read_formula_ids, read_pnml_info};

/// The facts of an archive, read in one pass with constant memory whatever its entries' sizes:
/// each entry is hashed as it streams by, and the special files are parsed from the same stream.
/// A problem found in a file is located (line and column) by a second pass over the archive,
/// only when there is one.
pub(super) fn archive_facts(
    path: &Path,
    name: &str,
    limits: ArchiveLimits,
) -> Result<InstanceFacts, InstanceError> {
    let mut facts = InstanceFacts::empty();
    // Problems to locate: (the entry's index, its path, the problem).
    let mut unlocated: Vec<(usize, String, AtOffset)> = Vec::new();
    let mut index = 0usize;
    for_each_archive_file(path, name, limits, |rel, _, executable, reader| {
        let entry = index;
        index += 1;
        let read_error = |e: io::Error| InstanceError::Archive {
            path: path.to_path_buf(),
            problem: format!("entry {rel}: {e}"),
        };
        let mut hashed = HashingReader::new(reader);
        let mut input = BufReader::with_capacity(64 * 1024, &mut hashed);
        let top_level = !rel.contains('/');
        if rel == "NewModel" {
            facts.new_model = true;
        }
        if rel == "model.pnml" {
            match read_pnml_info(&mut input) {
                Ok(info) => facts.net = Ok(info),
                // Set once located, below.
                Err(p) => unlocated.push((entry, rel.to_string(), p)),
            }
        } else if top_level && rel.ends_with(".xml") {
            if !rel.starts_with("GenericProperties") {
                match read_formula_ids(&mut input) {
                    Ok(Some(ids)) => {
                        facts.formulas.insert(rel.to_string(), Ok(ids));
                    }
                    Ok(None) => {}
                    // Set once located, below.
                    Err(p) => unlocated.push((entry, rel.to_string(), p)),
                }
            }
        } else if top_level {
            // A small text file (at most 256 bytes): read 257 to know.
            let mut head = Vec::with_capacity(257);
            (&mut input)
                .take(257)
                .read_to_end(&mut head)
                .map_err(read_error)?;
            if head.len() <= 256 {
                if let Ok(text) = String::from_utf8(head) {
                    facts.texts.insert(rel.to_string(), text);
                }
            }
        }
        // Hash what the parser did not read.
        io::copy(&mut input, &mut io::sink()).map_err(read_error)?;
        drop(input);
        let (digest, size) = hashed.finish();
        facts.files.push(FileEntry {
            path: rel.to_string(),
            size,
            digest,
            executable,
        });
        Ok(())
    })?;
    if !unlocated.is_empty() {
        locate_in_archive(path, name, limits, unlocated, &mut facts);
    }
    facts.files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(facts)
}

/// Turns the byte offsets of the problems found in an archive's files into lines and columns,
/// reading the archive again (only the entries up to the last one with a problem).
fn locate_in_archive(
    path: &Path,
    name: &str,
    limits: ArchiveLimits,
    unlocated: Vec<(usize, String, AtOffset)>,
    facts: &mut InstanceFacts,
) {
    let mut locations: BTreeMap<usize, Location> = BTreeMap::new();
    let wanted: BTreeMap<usize, u64> = unlocated
        .iter()
        .filter_map(|(entry, _, p)| p.offset().map(|offset| (*entry, offset)))
        .collect();
    let last = wanted.keys().next_back().copied();
    let mut index = 0usize;
    if let Some(last) = last {
        let walked = for_each_archive_file(path, name, limits, |_, _, _, reader| {
            let entry = index;
            index += 1;
            if let Some(&offset) = wanted.get(&entry) {
                if let Ok(location) = location_of(reader, offset) {
                    locations.insert(entry, location);
                }
            }
            if entry == last {
                // Everything wanted is found: stop reading (not an error of the archive).
                return Err(InstanceError::Archive {
                    path: path.to_path_buf(),
                    problem: String::new(),
                });
            }
            Ok(())
        });
        // The first pass read the whole archive: a failure of this one (the archive replaced
        // meanwhile) only leaves the problems without their place.
        let _ = walked;
    }
    for (entry, rel, problem) in unlocated {
        let problem = problem.at_location(locations.get(&entry).copied());
        if rel == "model.pnml" {
            facts.net = Err(problem);
        } else {
            facts.formulas.insert(rel, Err(problem));
        }
    }
}

/// Hashes and counts what is read through it.
struct HashingReader<R> {
    inner: R,
    hasher: blake3::Hasher,
    count: u64,
}

impl<R: Read> HashingReader<R> {
    fn new(inner: R) -> HashingReader<R> {
        HashingReader {
            inner,
            hasher: blake3::Hasher::new(),
            count: 0,
        }
    }

    /// The digest and the size of everything read.
    fn finish(self) -> (Digest, u64) {
        (*self.hasher.finalize().as_bytes(), self.count)
    }
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.count += n as u64;
        Ok(n)
    }
}
