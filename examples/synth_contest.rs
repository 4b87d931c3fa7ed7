//! Generates a synthetic contest of MCC size with a full store, for the store benchmark
//! (docs/BENCHMARKS.md): `cargo run --release --example synth_contest -- DIR [instances] [tools]`.
//! With `--no-records` the store stays empty: every run is still to execute (scripts/bench-follow
//! follows them through Slurm).
//!
//! Instances are .tgz archives in the MCC layout (model.pnml, the seven formula files with 16
//! formulas each, GenericPropertiesVerdict.xml), grouped into models of 1 to 20 instances;
//! tools are scripted; every run gets a record with plausible answers (tools mostly agree).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use mccbuild::session::Session;
use mccbuild_core::protocol::Answer;
use mccbuild_core::{CapturedOutput, Measurement, Response, Termination, Value, ValueKind};
use mccbuild_store::{Index, RECORD_FORMAT, RunRecord};

const FORMULA_FILES: [&str; 7] = [
    "UpperBounds",
    "ReachabilityCardinality",
    "ReachabilityFireability",
    "CTLCardinality",
    "CTLFireability",
    "LTLCardinality",
    "LTLFireability",
];

fn main() {
    let mut args: Vec<String> = std::env::args().collect();
    let no_records = args.iter().any(|a| a == "--no-records");
    args.retain(|a| a != "--no-records");
    let dir = PathBuf::from(
        args.get(1)
            .expect("usage: synth_contest DIR [instances] [tools] [--no-records]"),
    );
    let instances: usize = args.get(2).map_or(1923, |s| s.parse().expect("instances"));
    let tools: usize = args.get(3).map_or(12, |s| s.parse().expect("tools"));
    let t = Instant::now();
    write_contest(&dir, instances, tools);
    eprintln!("contest written in {:.1?}", t.elapsed());

    let t = Instant::now();
    let session = Session::open(&dir.join("contest.toml")).unwrap_or_else(|e| panic!("{e:?}"));
    eprintln!(
        "planned {} runs in {:.1?}",
        session.plan.runs.len(),
        t.elapsed()
    );
    if no_records {
        return;
    }

    let t = Instant::now();
    let plan = &session.plan;
    let mut records = Vec::with_capacity(plan.runs.len());
    for (n, run) in plan.runs.iter().enumerate() {
        let ei = &plan.exam_instances[run.exam_instance];
        let exam = &plan.contest.edition.examinations[ei.exam];
        let seed = n as u64;
        let (response, answers) = if seed % 17 == 0 {
            (Response::DoNotCompete, Vec::new())
        } else if seed % 13 == 0 {
            (Response::CannotCompute, Vec::new())
        } else {
            let answers = ei
                .ids
                .iter()
                .enumerate()
                .filter(|(i, _)| (seed + *i as u64) % 7 != 0)
                .map(|(i, id)| {
                    // The "truth" depends on the value; tool 3 is wrong now and then.
                    let truth = (ei.instance + i) % 3 != 0;
                    let wrong = run.tool == 3 && (seed + i as u64) % 11 == 0;
                    let value = match exam.value {
                        ValueKind::Boolean => Value::Bool(truth != wrong),
                        ValueKind::Integer => {
                            Value::Int(((ei.instance * 31 + i) % 1000) as u64 + wrong as u64)
                        }
                    };
                    Answer {
                        id: id.clone(),
                        position: i as u16,
                        value,
                        techniques: vec!["EXPLICIT".into()],
                    }
                })
                .collect();
            (Response::Answered, answers)
        };
        records.push(RunRecord {
            format: RECORD_FORMAT,
            key: run.key,
            mccbuild_version: env!("CARGO_PKG_VERSION").into(),
            tool: plan.contest.tools[run.tool].name.clone(),
            instance: plan.instances[ei.instance].name.clone(),
            examination: exam.name.clone(),
            executor: [("kind".to_string(), "local".to_string())].into(),
            limits: run.limits,
            started_at: "2026-11-22T00:00:00.000Z".into(),
            finished_at: "2026-11-22T00:00:01.000Z".into(),
            measurement: Measurement {
                termination: Termination::Exit { code: 0 },
                cpu_time_s: 1.0 + (seed % 100) as f64,
                wall_time_s: 1.5 + (seed % 100) as f64,
                peak_memory_bytes: (100 + seed % 1000) << 20,
            },
            method: "synthetic".into(),
            cores: vec![0],
            host: "synthetic".into(),
            response,
            answers,
            diagnostics: Vec::new(),
            stdout: CapturedOutput {
                text: "synthetic record\n".into(),
                bytes: 17,
                truncated: false,
            },
            stderr: CapturedOutput::default(),
            vm: None,
            slurm: None,
            machine: None,
        });
    }
    // Packed, as `mccbuild run` leaves a store (it packs every 2,048 loose records) and
    // `mccbuild import` writes one (docs/cache.md, "Packs").
    let (mut index, _) = Index::load(&session.store);
    let written = index
        .put_packed(&session.store, &records)
        .expect("write records")
        .len();
    eprintln!(
        "{written} records and the index written in {:.1?}",
        t.elapsed()
    );
}

fn write_contest(dir: &Path, instances: usize, tools: usize) {
    fs::create_dir_all(dir.join("inputs")).unwrap();
    let mut toml = format!(
        "[contest]\nname = \"Synthetic MCC-size contest\"\nrules = \"{}/rules/mcc-2026.toml\"\ninputs = \"inputs/*.tgz\"\n\n[executor]\njobs = 2\n\n",
        env!("CARGO_MANIFEST_DIR")
    );
    for t in 0..tools {
        let tool_dir = dir.join("tools").join(format!("tool{t:02}"));
        fs::create_dir_all(&tool_dir).unwrap();
        let entry = tool_dir.join("BenchKit_head.sh");
        fs::write(
            &entry,
            format!("#!/bin/sh\n# synthetic tool {t}\necho DO_NOT_COMPETE\n"),
        )
        .unwrap();
        std::os::unix::fs::PermissionsExt::set_mode(
            &mut fs::metadata(&entry).unwrap().permissions(),
            0o755,
        );
        fs::set_permissions(&entry, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        toml.push_str(&format!(
            "[[tool]]\nname = \"tool{t:02}\"\ndir = \"tools/tool{t:02}\"\n\n"
        ));
    }
    fs::write(dir.join("contest.toml"), toml).unwrap();
    // Models of 1 to 20 instances.
    let mut made = 0;
    let mut model = 0;
    while made < instances {
        let size = (1 + (model * 7) % 20).min(instances - made);
        for i in 0..size {
            let name = format!("Synth{model:04}-PT-{i:03}");
            let path = dir.join("inputs").join(format!("{name}.tgz"));
            if !path.exists() {
                write_instance(&path, &name);
            }
        }
        made += size;
        model += 1;
    }
}

fn write_instance(path: &Path, name: &str) {
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    let mut add = |file: &str, content: String| {
        let mut header = tar::Header::new_gnu();
        header.set_size(content.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder
            .append_data(&mut header, format!("{name}/{file}"), content.as_bytes())
            .unwrap();
    };
    add(
        "model.pnml",
        format!(
            "<?xml version=\"1.0\"?>\n<pnml xmlns=\"http://www.pnml.org/version-2009/grammar/pnml\"><net id=\"{name}\" type=\"http://www.pnml.org/version-2009/grammar/ptnet\"><page id=\"p\"><place id=\"p0\"><initialMarking><text>1</text></initialMarking></place><transition id=\"t0\"/><arc id=\"a0\" source=\"p0\" target=\"t0\"/></page></net></pnml>\n"
        ),
    );
    for exam in FORMULA_FILES {
        let mut xml =
            String::from("<?xml version=\"1.0\"?>\n<property-set xmlns=\"http://mcc.lip6.fr/\">\n");
        for i in 0..16 {
            xml.push_str(&format!("  <property><id>{name}-{exam}-2026-{i:02}</id><description>synthetic</description><formula><place-bound><place>p0</place></place-bound></formula></property>\n"));
        }
        xml.push_str("</property-set>\n");
        add(&format!("{exam}.xml"), xml);
    }
    add(
        "GenericPropertiesVerdict.xml",
        "<toolspecific tool=\"propertiesverdict\" version=\"2.0\"/>\n".into(),
    );
    add("iscolored", "FALSE\n".into());
    let bytes = builder.into_inner().unwrap().finish().unwrap();
    fs::File::create(path).unwrap().write_all(&bytes).unwrap();
}
