//! Tests of instance reading: real and hostile archives, facts streamed and located, bombs
//! bounded.

use super::*;

#[test]
fn real_archive_facts() {
    let Some(data) = mccbuild_testkit::mcc_data() else {
        return;
    };
    let archive = data.join("INPUTS/Philosophers-PT-000005.tgz");
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
    let folder = InstanceSource::Folder(data.join("fixtures/Philosophers-PT-000005"));
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

fn tar_gz(entries: impl FnOnce(&mut tar::Builder<flate2::write::GzEncoder<Vec<u8>>>)) -> Vec<u8> {
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
    materialize("X-PT-1", &source, &dest, &[], limits).map_err(|e| e.to_string())?;
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
    assert!(
        check_archive(&dotdot, ArchiveLimits::default())
            .unwrap_err()
            .contains("escapes the instance folder")
    );
    let absolute = tar_gz(|b| raw_file(b, "/tmp/escaped", b"x"));
    assert!(
        check_archive(&absolute, ArchiveLimits::default())
            .unwrap_err()
            .contains("absolute path")
    );
    let symlink = tar_gz(|b| {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Symlink);
        header.set_size(0);
        b.append_link(&mut header, "X-PT-1/model.pnml", "/etc/passwd")
            .unwrap();
    });
    assert!(
        check_archive(&symlink, ArchiveLimits::default())
            .unwrap_err()
            .contains("symbolic link")
    );
    let hardlink = tar_gz(|b| {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Link);
        header.set_size(0);
        b.append_link(&mut header, "X-PT-1/model.pnml", "/etc/passwd")
            .unwrap();
    });
    assert!(
        check_archive(&hardlink, ArchiveLimits::default())
            .unwrap_err()
            .contains("hard link")
    );
    assert!(check_archive(b"not a gzip at all", ArchiveLimits::default()).is_err());
    let special = |kind: tar::EntryType| {
        tar_gz(|b| {
            let mut header = tar::Header::new_gnu();
            header.set_path("X-PT-1/model.pnml").unwrap();
            header.set_entry_type(kind);
            let mut data: &[u8] = &[];
            if kind == tar::EntryType::GNUSparse {
                // 3 GiB in 1 byte: a hole, then the last byte (its reader yields the zeros).
                let gnu = header.as_gnu_mut().unwrap();
                gnu.realsize = *b"30000000000\0";
                gnu.sparse[0].offset = *b"27777777777\0";
                gnu.sparse[0].numbytes = *b"00000000001\0";
                data = b"x";
            }
            header.set_size(data.len() as u64);
            header.set_cksum();
            b.append(&header, data).unwrap();
        })
    };
    for kind in [
        tar::EntryType::Char,
        tar::EntryType::Block,
        tar::EntryType::Fifo,
        tar::EntryType::GNUSparse,
    ] {
        let refused = check_archive(&special(kind), ArchiveLimits::default());
        assert!(
            refused.as_ref().unwrap_err().contains("not a plain file"),
            "{kind:?}: {refused:?}"
        );
    }
    let empty_path = tar_gz(|b| raw_file(b, "X-PT-1/", b"x"));
    assert!(
        check_archive(&empty_path, ArchiveLimits::default())
            .unwrap_err()
            .contains("empty path")
    );
    let mut truncated = tar_gz(|b| raw_file(b, "X-PT-1/model.pnml", &[b'x'; 100_000]));
    truncated.truncate(truncated.len() / 2);
    assert!(check_archive(&truncated, ArchiveLimits::default()).is_err());
}

/// An entry far larger than memory should allow is hashed and parsed as it streams by (the binary's
/// peak memory is measured in tests/it/archives.rs); the facts are those of the folder with the same
/// files, and a problem in a formula file of an archive still has its line.
#[test]
fn archive_facts_stream_and_locate_problems() {
    let big = 40 << 20;
    let bytes = tar_gz(|b| {
        raw_file(
            b,
            "X-PT-1/model.pnml",
            br#"<pnml><net type="ptnet"/></pnml>"#,
        );
        let mut header = tar::Header::new_gnu();
        header.set_path("X-PT-1/zeros").unwrap();
        header.set_size(big);
        header.set_mode(0o644);
        header.set_cksum();
        b.append(&header, io::repeat(0).take(big)).unwrap();
        raw_file(b, "X-PT-1/iscolored", b"FALSE\n");
        raw_file(
            b,
            "X-PT-1/UpperBounds.xml",
            b"<property-set>\n<property><id> </id></property>\n</property-set>",
        );
    });
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("X-PT-1.tgz");
    fs::write(&archive, bytes).unwrap();
    let mut cache = DigestCache::in_memory();
    let source = InstanceSource::Archive(archive);
    let facts = instance_facts("X-PT-1", &source, &mut cache, ArchiveLimits::default()).unwrap();
    let zeros = facts.files.iter().find(|f| f.path == "zeros").unwrap();
    assert_eq!(zeros.size, big);
    assert_eq!(zeros.digest, digest_of(io::repeat(0).take(big)).unwrap());
    assert_eq!(facts.texts["iscolored"], "FALSE\n");
    assert_eq!(facts.net.as_ref().unwrap().net_type, "ptnet");
    let problem = facts.formulas["UpperBounds.xml"].as_ref().unwrap_err();
    assert!(problem.message.contains("empty <id>"), "{problem:?}");
    assert_eq!(problem.location.map(|l| l.line), Some(2), "{problem:?}");
    // The same files in a folder: the same facts.
    let folder = dir.path().join("folder");
    materialize("X-PT-1", &source, &folder, &[], ArchiveLimits::default()).unwrap();
    let from_folder = instance_facts(
        "X-PT-1",
        &InstanceSource::Folder(folder),
        &mut cache,
        ArchiveLimits::default(),
    )
    .unwrap();
    assert_eq!(*from_folder, *facts);
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
    assert!(
        check_archive(&bomb, limits)
            .unwrap_err()
            .contains("more than 16 MB")
    );
    let many = tar_gz(|b| {
        for i in 0..20 {
            raw_file(b, &format!("X-PT-1/f{i}"), b"x");
        }
    });
    assert!(
        check_archive(&many, limits)
            .unwrap_err()
            .contains("more than 10 entries")
    );
}
