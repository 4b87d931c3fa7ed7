//! The value ids of the examination instances as the snapshot keeps them: none where they are
//! the rules' (taken from the contest, loaded fresh), front-coded otherwise ([`ExamKept`]).

use std::sync::Arc;

use mccbuild_rules::edition::Edition;

use super::layout::ExamKept;
use crate::plan::ExamInstance;

/// The value ids of an examination instance as [`ExamKept`] keeps them: `None` when they are
/// its examination's in the rules, otherwise their count and where in `out` they were written
/// (front-coded).
pub(super) fn coded_ids(
    ei: &ExamInstance,
    edition: &Edition,
    out: &mut Vec<u8>,
) -> Option<(u32, u64)> {
    let exam = &edition.examinations[ei.exam];
    let from_rules = exam.formula_file.is_none()
        && ei.scored == exam.values.len()
        && ei.ids.iter().map(|id| &**id).eq(exam
            .values
            .iter()
            .chain(&exam.optional_values)
            .map(|id| &**id));
    if from_rules {
        return None;
    }
    let at = out.len() as u64;
    let mut before = "";
    for id in ei.ids.iter() {
        let mut shared = before
            .bytes()
            .zip(id.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        while !id.is_char_boundary(shared) {
            shared -= 1;
        }
        put_varint(out, shared);
        put_varint(out, id.len() - shared);
        out.extend_from_slice(&id.as_bytes()[shared..]);
        before = id;
    }
    Some((ei.ids.len() as u32, at))
}

/// The examination instances as kept, their value ids decoded from `ids` (`None`: not of this
/// contest, or not whole).
pub(super) fn exam_instances_of(
    kept: &[ExamKept],
    ids: &[u8],
    edition: &Edition,
) -> Option<Vec<ExamInstance>> {
    let mut id = String::new();
    kept.iter()
        .map(|ei| {
            let ids: Arc<[Arc<str>]> = match ei.ids {
                None => edition.examinations.get(ei.exam)?.answer_ids().into(),
                Some((count, at)) => {
                    let mut bytes = ids.get(usize::try_from(at).ok()?..)?;
                    let mut list = Vec::with_capacity(count as usize);
                    id.clear();
                    for _ in 0..count {
                        let shared = varint(&mut bytes)?;
                        let len = varint(&mut bytes)?;
                        if shared > id.len() || !id.is_char_boundary(shared) || len > bytes.len() {
                            return None;
                        }
                        let (rest, after) = bytes.split_at(len);
                        id.truncate(shared);
                        id.push_str(std::str::from_utf8(rest).ok()?);
                        bytes = after;
                        list.push(Arc::<str>::from(id.as_str()));
                    }
                    list.into()
                }
            };
            Some(ExamInstance {
                instance: ei.instance,
                exam: ei.exam,
                ids,
                scored: ei.scored,
                truth: ei.truth.clone().map(Arc::from),
                reference: None,
                corrections: None,
            })
        })
        .collect()
}

/// Reads a LEB128 number off the front of `bytes`.
fn varint(bytes: &mut &[u8]) -> Option<usize> {
    let mut n: u64 = 0;
    for shift in (0..64).step_by(7) {
        let (&b, rest) = bytes.split_first()?;
        *bytes = rest;
        n |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return usize::try_from(n).ok();
        }
    }
    None
}

/// Writes `n` as LEB128.
fn put_varint(out: &mut Vec<u8>, mut n: usize) {
    while n >= 0x80 {
        out.push((n as u8 & 0x7f) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}
