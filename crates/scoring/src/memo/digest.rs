//! The digests remembered scores are kept under: the global one (the memo's schema, the scoring
//! code, the rules, the tools) and each model examination's (its examination instances and
//! their planned runs' keys and records).

use std::sync::Arc;

use mccbuild_core::digest::Digest;
use mccbuild_plan::Plan;

use super::MEMO_SCHEMA;

/// What every entry's digest starts from: the memo's schema, the scoring code (the binary's
/// digest), the rules (the edition's digest: E-2.2, E-3.1, E-4.1 to E-4.3, and whether the
/// truth is voted or given), and the tools in their order with their families (scores and
/// tallies are by tool index; the families may decide who votes). Not the reference answers'
/// basis: a contest with `[reference]` is not remembered ([`applies`](super::applies)).
pub fn global_digest(plan: &Plan, binary: &Digest) -> Digest {
    let mut h = blake3::Hasher::new();
    h.update(b"mccbuild remembered scores");
    h.update(&MEMO_SCHEMA.to_le_bytes());
    h.update(binary);
    put_str(&mut h, &plan.contest.edition.digest);
    h.update(&(plan.contest.tools.len() as u64).to_le_bytes());
    for t in &plan.contest.tools {
        put_str(&mut h, &t.name);
        // E-2.2 and E-3.1 may count one vote per family (`[confidence] votes`).
        put_str(&mut h, &t.family);
    }
    *h.finalize().as_bytes()
}

fn put_str(h: &mut blake3::Hasher, s: &str) {
    h.update(&(s.len() as u64).to_le_bytes());
    h.update(s.as_bytes());
}

fn put_values(buf: &mut Vec<u8>, values: Option<&Arc<[Option<mccbuild_core::Value>]>>) {
    let Some(values) = values else {
        buf.push(0);
        return;
    };
    buf.push(1);
    buf.extend_from_slice(&(values.len() as u64).to_le_bytes());
    for v in values.iter() {
        match v {
            None => buf.push(0),
            Some(v) => {
                let text = v.to_string();
                buf.push(1);
                buf.extend_from_slice(&(text.len() as u64).to_le_bytes());
                buf.extend_from_slice(text.as_bytes());
            }
        }
    }
}

/// The digest of one model examination's inputs: the global digest, then per examination
/// instance (in the plan's order) its examination, its values (how many, how many scored, the
/// truth given, the reference answers, the organisers' decisions) and each planned run's tool,
/// key and record digest (none: not stored). The run key covers the instance's content, the
/// tool and the limits; the record digest, every answer and measurement of the run.
pub fn examination_digest(
    global: &Digest,
    plan: &Plan,
    members: &[usize],
    runs_of: &[Vec<usize>],
    records: &[Option<Digest>],
) -> Digest {
    // Into a buffer, hashed once: a hasher update per field costs more than the hashing.
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    let mut h = blake3::Hasher::new();
    h.update(global);
    for &e in members {
        let ei = &plan.exam_instances[e];
        for n in [ei.instance, ei.exam, ei.ids.len(), ei.scored] {
            buf.extend_from_slice(&(n as u64).to_le_bytes());
        }
        for values in [&ei.truth, &ei.reference, &ei.corrections] {
            put_values(&mut buf, values.as_ref());
        }
        buf.extend_from_slice(&(runs_of[e].len() as u64).to_le_bytes());
        for &r in &runs_of[e] {
            let run = &plan.runs[r];
            buf.extend_from_slice(&(run.tool as u64).to_le_bytes());
            buf.extend_from_slice(&run.key.0);
            match &records[r] {
                Some(d) => {
                    buf.push(1);
                    buf.extend_from_slice(d);
                }
                None => buf.push(0),
            }
        }
        if buf.len() >= 1 << 15 {
            h.update(&buf);
            buf.clear();
        }
    }
    h.update(&buf);
    *h.finalize().as_bytes()
}
